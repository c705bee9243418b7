/**
 * The attacker of red-team-structs.slow.test.ts, in a process of its own (its client-side work, inserting
 * hundreds of thousands of characters, would otherwise delay the typist measured in the test's process):
 * `bun structs-attacker.ts URL ROOM TOKEN CONNECTIONS MAX_STRUCTS`. Each connection inserts
 * MAX_EDITOR_UPDATE_STRUCTS characters, each before the last (an item apiece), once a second, within the
 * per-connection and per-user shares of structs, until the server closes it or MAX_STRUCTS were sent in
 * all. Prints one line of JSON: the structs sent and the close reasons.
 */
import { FRAGMENT_NAME, MAX_EDITOR_UPDATE_STRUCTS } from '@collab/doc-schema'
import { connectProvider } from '@collab/test-support/provider'
import * as Y from 'yjs'

const [url, room, token, connections, maxStructs] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
]
const editors = Array.from({ length: Number(connections) }, () => connectProvider(url, room, token))
await Promise.all(editors.map((e) => e.ready))
let sent = 0
const closes: string[] = []
await Promise.all(
  editors.map(async (editor) => {
    let closed = false
    editor.provider.on('close', ({ event }: { event: { reason: string } }) => {
      if (!closed) closes.push(event.reason)
      closed = true
    })
    // A paragraph of this connection's own, typed into from its end backwards.
    const text = new Y.XmlText()
    const paragraph = new Y.XmlElement('paragraph')
    paragraph.insert(0, [text])
    editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph])
    while (!closed && sent < Number(maxStructs)) {
      editor.doc.transact(() => {
        for (let i = 0; i < MAX_EDITOR_UPDATE_STRUCTS - 1; i++) text.insert(0, 'z')
      })
      sent += MAX_EDITOR_UPDATE_STRUCTS - 1
      await Bun.sleep(1_000)
    }
  }),
)
console.log(JSON.stringify({ sent, closes }))
for (const e of editors) e.destroy()
process.exit(0)
