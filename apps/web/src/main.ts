/** The web editor's entry: which page this is (`/` or `/d/<slug>`), for the person the server signed in. */
import './style.css'
import { readBoot } from './boot.ts'
import { editorView } from './editor.ts'
import { listView } from './list.ts'

const root = document.getElementById('app')
if (root) {
  const boot = readBoot()
  const match = /^\/d\/([^/]+)$/.exec(location.pathname)
  if (match) void editorView(root, boot, decodeURIComponent(match[1]!))
  else listView(root, boot)
}
