/**
 * An editor in its own process that types into a document without pause, as a person does: one
 * character every `<ms>` milliseconds at the end of the last paragraph, until stdin closes. Prints `ready`
 * once synced (the document loaded on the server and here) and typing.
 *
 *   bun bench/lib/remote-typist.ts <server url> <room> <token> <ms>
 */

import { FRAGMENT_NAME } from '@collab/doc-schema'
import { connectProvider } from '@collab/test-support/provider'
import { Y } from '../deps.ts'

const [url, room, token, every] = process.argv.slice(2)
if (!url || !room || !token || !every) {
  console.error('usage: bun bench/lib/remote-typist.ts <server url> <room> <token> <ms>')
  process.exit(2)
}
const editor = connectProvider(url, room, token)
await editor.ready
const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
const line = new Y.XmlElement('paragraph')
const text = new Y.XmlText('')
line.insert(0, [text])
fragment.push([line])
let typed = 0
const timer = setInterval(() => {
  text.insert(text.length, 'abcdefghij '[typed++ % 11] as string)
}, Number(every))
process.stdout.write('ready\n')
process.stdin.on('data', () => {})
process.stdin.on('end', () => {
  clearInterval(timer)
  editor.destroy()
  process.exit(0)
})
