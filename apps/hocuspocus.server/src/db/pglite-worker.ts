/**
 * The embedded database's own thread: a Bun Worker that opens PGlite on the data folder and serves it
 * over a Unix socket with `@electric-sql/pglite-socket` (PostgreSQL's wire protocol), so the server talks
 * to it through the same driver as to PostgreSQL and PGlite's work (every query, a compaction's
 * multi-megabyte INSERT, VACUUM) never runs on the thread that serves editors.
 *
 * Messages: `open` → `ready` | `failed`; `dump` → `dumped` | `failed` (a backup, written by this thread:
 * it holds the database); `close` → `closed`; `wedge` (tests) → no answer. The data folder's
 * lock (data-dir-lock.ts) is held by the process that starts this worker, so the socket is this process's
 * alone.
 */
import { rmSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { writeBackupFile } from './backup/files.ts'
import { collectAfterTraffic } from './pglite-collect.ts'
import { pgliteStartParams, SyncedNodeFS } from './pglite-fsync.ts'

declare const self: Worker

export type WorkerOpen = {
  type: 'open'
  dir: string
  socketPath: string
  /**
   * PostgreSQL's `-c name=value` settings beyond PGlite's defaults; the thread makes the start parameters
   * (pgliteStartParams, with `fsync`), so the main thread never imports PGlite's own module.
   */
  extraParams: string[]
  /** Open the folder through SyncedNodeFS (pglite-fsync.ts): PostgreSQL's fsync() reaches the disk. */
  fsync: boolean
  /**
   * Compiled once by the main thread and shared, so a worker does not compile PGlite again (~0.4 s);
   * absent when this thread was told to compile it (`prepare`).
   */
  pgliteWasmModule?: WebAssembly.Module
  /** Only for a folder without a database yet (initdb runs); PGlite loads it itself otherwise if needed. */
  initdbWasmModule?: WebAssembly.Module
  fsBundle: Blob
  /** Only for a folder without a database yet: a migrated template (pglite-template.ts) loaded instead of initdb. */
  loadDataDir?: Blob
}

/**
 * Sent first to the thread a start prepares (pglite-thread.ts, prepareDatabase): compile PGlite's
 * WebAssembly here, at once. Compiled by the main thread, the module reached this thread only when the main
 * thread was free to pass it on, after the server's modules had loaded (~0.3 s after the compile was done,
 * traced): this thread waited with it.
 */
export type WorkerPrepare = { type: 'prepare'; wasmPath: string }

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'closed' }
  | { type: 'dumped'; bytes: number }

/**
 * A backup of the open database into `file` (db/backup/pglite.ts): a checkpoint, so the folder's files
 * hold what was committed and a restore replays little, then PGlite's dumpDataDir, which holds PGlite's
 * query lock while it reads the folder (not while it compresses): the tarball is the folder as of one moment
 * between queries.
 */
export type WorkerDump = { type: 'dump'; file: string }

/**
 * Fault injection (tests): PGlite's query path stops answering while the thread stays alive, as when a
 * query never returns or pglite-socket's queue is stuck after an error inside PGlite (its queue then stays
 * "processing" for good). Taking PGlite's query lock and never giving it back makes every query over the
 * socket wait forever, while the thread's event loop still runs.
 */
export type WorkerWedge = { type: 'wedge' }

/**
 * Connections the socket takes at once: the server's client holds one, and the migration engine and
 * the up-to-date check open their own. pglite-socket runs one query at a time on the one PGlite session
 * and keeps a transaction's queries together (others wait until it ends).
 */
const MAX_CONNECTIONS = 8

let db: PGlite | undefined
let server: PGLiteSocketServer | undefined
/** PGlite's WebAssembly as this thread compiles it (`prepare`). */
let compiling: Promise<WebAssembly.Module> | undefined

const reply = (message: WorkerReply) => self.postMessage(message)

self.onmessage = async (
  event: MessageEvent<WorkerOpen | WorkerPrepare | { type: 'close' } | WorkerWedge | WorkerDump>,
) => {
  const message = event.data
  if (message.type === 'prepare') {
    compiling = Bun.file(message.wasmPath)
      .arrayBuffer()
      .then((bytes) => WebAssembly.compile(bytes))
    compiling.catch(() => {}) // met by the open that needs it
    return
  }
  if (message.type === 'dump') {
    try {
      if (!db) throw new Error('the embedded database is not open')
      await db.exec('CHECKPOINT')
      // Only the tarball is made under PGlite's lock; gzip streams after it, between other queries.
      const tarball = await db.dumpDataDir('none')
      const gzipped = await new Response(tarball.stream().pipeThrough(new CompressionStream('gzip'))).blob()
      reply({ type: 'dumped', bytes: await writeBackupFile(message.file, gzipped) })
    } catch (error) {
      reply({ type: 'failed', message: (error as Error).message ?? String(error) })
    }
    return
  }
  if (message.type === 'wedge') {
    void db?.runExclusive(() => new Promise<never>(() => {}))
    return
  }
  if (message.type === 'open') {
    try {
      db = await PGlite.create(message.dir, {
        extensions: { pg_trgm },
        startParams: pgliteStartParams(message.fsync, message.extraParams),
        fs: message.fsync ? new SyncedNodeFS(message.dir) : undefined,
        pgliteWasmModule: message.pgliteWasmModule ?? (await compiling),
        initdbWasmModule: message.initdbWasmModule,
        fsBundle: message.fsBundle,
        loadDataDir: message.loadDataDir,
      })
      collectAfterTraffic(db)
      // A socket file left by a process that was killed: this process holds the folder's lock now.
      rmSync(message.socketPath, { force: true })
      server = new PGLiteSocketServer({ db, path: message.socketPath, maxConnections: MAX_CONNECTIONS })
      await server.start()
      reply({ type: 'ready' })
    } catch (error) {
      await db?.close().catch(() => {})
      reply({ type: 'failed', message: (error as Error).message ?? String(error) })
    }
    return
  }
  if (message.type === 'close') {
    await server?.stop().catch(() => {})
    await db?.close().catch(() => {})
    reply({ type: 'closed' })
  }
}
