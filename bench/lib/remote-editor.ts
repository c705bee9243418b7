/**
 * A connected editor in its own process, as a person's browser is: the bench's server and its database
 * work cannot delay this process's event loop. Prints `ready` once synced, then `seen <n> <ms>` (clock.ts) the
 * first time the document holds the text `bench edit <n> marker`.
 *
 *   bun bench/lib/remote-editor.ts <server url> <room> <token>
 */

import { FRAGMENT_NAME } from '@collab/doc-schema'
import { connectProvider } from '@collab/test-support/provider'
import { Y } from '../deps.ts'
import { machineNow } from './clock.ts'

const [url, room, token] = process.argv.slice(2)
if (!url || !room || !token) {
  console.error('usage: bun bench/lib/remote-editor.ts <server url> <room> <token>')
  process.exit(2)
}
const editor = connectProvider(url, room, token)
await editor.ready
const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
const seen = new Set<number>()
fragment.observeDeep(() => {
  const at = machineNow()
  // Edits land at the end of the last section: only the last few blocks need looking at.
  for (let i = Math.max(0, fragment.length - 3); i < fragment.length; i++) {
    const block = fragment.get(i)
    if (!(block instanceof Y.XmlElement)) continue
    for (const match of block.toString().matchAll(/bench edit (-?\d+) marker/g)) {
      const n = Number(match[1])
      if (seen.has(n)) continue
      seen.add(n)
      process.stdout.write(`seen ${n} ${at}\n`)
    }
  }
})
process.stdout.write('ready\n')
process.stdin.on('data', () => {}) // keeps running until the parent closes stdin or kills it
process.stdin.on('end', () => {
  editor.destroy()
  process.exit(0)
})
