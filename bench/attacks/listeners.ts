/**
 * `bun listeners.ts URL ROOM TOKENS COUNT`: COUNT real providers on ROOM (tokens given comma-separated,
 * used in turn), each one more receiver of every presence change and edit. Writes `ready` once all are
 * synced and stays until its stdin ends.
 */
import { connectProvider } from '@collab/test-support/provider'

const [url, room, tokens, count] = process.argv.slice(2) as [string, string, string, string]
const list = tokens.split(',')
const providers = Array.from({ length: Number(count) }, (_, i) =>
  connectProvider(url, room, list[i % list.length]!),
)
await Promise.all(providers.map((p) => p.ready))
console.log('ready')
process.stdin.on('data', () => {})
process.stdin.on('end', () => process.exit(0))
