/**
 * The peer of issue 14 item 5: a stock Hocuspocus 4.7 server set up as its documentation sets it up, the
 * server a user would pick instead of this project. Persistence is @hocuspocus/extension-database with
 * bun:sqlite doing what @hocuspocus/extension-sqlite does (whose native sqlite3 cannot be built here): one
 * row per document, the whole encoded state upserted at every store, read back whole on load. Nothing
 * else: no authentication, no checks of what editors send, no update log, no search text, no Redis.
 *
 * Hocuspocus's own `Server` class listens with node:http and crossws's Node adapter, which refuses to run
 * under Bun; so the peer is the `Hocuspocus` class on Bun.serve, wired as that class's docs and its `Server`
 * wire it (handleConnection on open, handleMessage, handleClose): the same WebSocket transport this
 * project's server uses, without its flood control.
 *
 *   bun bench/lib/peer-server.ts <sqlite file> <debounce ms> <max debounce ms>
 *
 * Prints `listening <http url>` once listening, then per store `stored <document name> <ms>`: the store
 * hook's own duration (extension-database encodes the whole state, then the upsert is committed).
 * The bench ends it with SIGTERM (its stores are not flushed: nothing reads the file afterwards).
 */
import { Database as SQLite } from 'bun:sqlite'
// By package name (bench/package.json): the packages' ESM builds, with Yjs the one ESM instance both import.
import { Database } from '@hocuspocus/extension-database'
import { Hocuspocus } from '@hocuspocus/server'

const [file, debounceArg, maxDebounceArg] = process.argv.slice(2)
const debounce = Number(debounceArg)
const maxDebounce = Number(maxDebounceArg)
if (!file || !Number.isFinite(debounce) || !Number.isFinite(maxDebounce)) {
  console.error('usage: bun bench/lib/peer-server.ts <sqlite file> <debounce ms> <max debounce ms>')
  process.exit(2)
}

// extension-sqlite's table and statements, in bun:sqlite (default journal mode, as that extension opens it).
const sqlite = new SQLite(file, { create: true })
sqlite.run('CREATE TABLE IF NOT EXISTS documents (name TEXT NOT NULL PRIMARY KEY, data BLOB NOT NULL)')
const select = sqlite.query<{ data: Uint8Array }, [string]>('SELECT data FROM documents WHERE name = ?1')
const upsert = sqlite.query(
  'INSERT INTO documents (name, data) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET data = excluded.data',
)

/** extension-database as shipped; only its store hook is timed, around the library's own code. */
class TimedDatabase extends Database {
  override async onStoreDocument(data: Parameters<InstanceType<typeof Database>['onStoreDocument']>[0]) {
    const started = performance.now()
    await super.onStoreDocument(data)
    process.stdout.write(`stored ${data.documentName} ${performance.now() - started}\n`)
  }
}

const hocuspocus = new Hocuspocus({
  quiet: true,
  debounce,
  maxDebounce,
  extensions: [
    new TimedDatabase({
      fetch: async ({ documentName }) => select.get(documentName)?.data ?? null,
      store: async ({ documentName, state }) => {
        upsert.run(documentName, state)
      },
    }),
  ],
})

type Socket = { request: Request; connection?: ReturnType<typeof hocuspocus.handleConnection> }
const server = Bun.serve<Socket>({
  hostname: '127.0.0.1',
  port: 0,
  fetch(request, srv) {
    if (srv.upgrade(request, { data: { request } })) return undefined
    return new Response('Welcome to Hocuspocus!')
  },
  websocket: {
    open(ws) {
      ws.data.connection = hocuspocus.handleConnection(ws as never, ws.data.request)
    },
    message(ws, message) {
      ws.data.connection?.handleMessage(
        typeof message === 'string' ? new TextEncoder().encode(message) : new Uint8Array(message),
      )
    },
    close(ws, code, reason) {
      ws.data.connection?.handleClose({ code, reason } as never)
    },
  },
})
process.stdout.write(`listening http://127.0.0.1:${server.port}\n`)
