/**
 * `bun dense-typists.ts URL ROOM TOKEN TYPISTS SECONDS PAUSE_MS`: TYPISTS real providers typing a
 * character every PAUSE_MS into the first paragraph after the title (the dense paragraph of attacks.ts),
 * at scattered offsets, for SECONDS. Writes `ready` once all are synced, then one line `sent N`.
 */
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { connectProvider } from '@collab/test-support/provider'
import type * as Y from 'yjs'

const [url, room, token, typists, seconds, pauseMs] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
]
const editors = Array.from({ length: Number(typists) }, () => connectProvider(url, room, token))
await Promise.all(editors.map((e) => e.ready))
console.log('ready')
let sent = 0
const end = Date.now() + Number(seconds) * 1000
await Promise.all(
  editors.map(async (editor, n) => {
    const text = (editor.doc.getXmlFragment(FRAGMENT_NAME).get(1) as Y.XmlElement).get(0) as Y.XmlText
    for (let i = 0; Date.now() < end; i++) {
      text.insert(1 + ((i * 37 + n) % Math.max(1, text.length - 1)), 'x')
      sent++
      await Bun.sleep(Number(pauseMs))
    }
  }),
)
console.log(`sent ${sent}`)
for (const e of editors) e.destroy()
process.exit(0)
