/**
 * Removes the shared server's database once the test process that started it has ended
 * (shared-server.ts): reads its standard input, a pipe from that process, until it closes, then removes
 * the data folder and, on PostgreSQL, drops the database.
 * Arguments: the data folder, the PostgreSQL server's URL and the database's name (both empty on PGlite).
 */
import { rmSync } from 'node:fs'
import { dropDatabase } from './drop-database.ts'

const [dataDir, serverUrl, name] = process.argv.slice(2)
await Bun.stdin.text() // nothing is sent: this returns when the pipe closes, as the test process ends
if (dataDir) rmSync(dataDir, { recursive: true, force: true })
if (serverUrl && name) await dropDatabase(serverUrl, name)
