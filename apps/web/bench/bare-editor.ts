/**
 * The floor of the web editor's keystroke bench (bench/lib/web.ts): a bare TipTap editor with the project's
 * schema and Collaboration bound to the same live document through a Hocuspocus provider, and nothing of
 * the page (no outline, presence, chat, toolbar or carets). Bundled for the browser by the bench and served
 * from an origin of its own; its query gives the WebSocket URL, room and API token. `window.bare.synced`
 * says when the editor holds the document.
 */
import { ALL_EDITOR_TYPES, EDITOR_TYPES_PARAM, extensions, FRAGMENT_NAME } from '@collab/doc-schema/editor'
import { HocuspocusProvider } from '@hocuspocus/provider'
import { Editor } from '@tiptap/core'
import Collaboration from '@tiptap/extension-collaboration'
import * as Y from 'yjs'

const params = new URLSearchParams(location.search)
const state = { synced: false }
const doc = new Y.Doc()
const mount = document.querySelector('#editor') as HTMLElement
let editor: Editor | undefined
const provider = new HocuspocusProvider({
  url: `${params.get('ws') ?? ''}/?${EDITOR_TYPES_PARAM}=${encodeURIComponent(ALL_EDITOR_TYPES)}`,
  name: params.get('room') ?? '',
  token: params.get('token') ?? '',
  document: doc,
  onSynced: () => {
    // Made once synced, as the page makes its editor.
    editor ??= new Editor({
      element: mount,
      extensions: [...extensions, Collaboration.configure({ fragment: doc.getXmlFragment(FRAGMENT_NAME) })],
    })
    state.synced = true
  },
})

Object.assign(window, { bare: state, provider, editor: () => editor })
