/**
 * Prisma client factory: embedded PGlite in a data folder, or PostgreSQL when a URL is given.
 *
 * Both go through a driver adapter, so the generated client, the migrations and every query are the
 * same for both. The adapter factory is kept for the migration engine, which needs its own connection.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { PrismaPg } from '@prisma/adapter-pg'
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { writeBackupFile } from './backup/files.ts'
import { PrismaClient } from './generated/client.ts'
import { discardTemplate, findTemplate, readTemplate } from './pglite-template.ts'
import {
  type DatabaseTarget,
  type DatabaseThread,
  loadInitdbAssets,
  loadPgliteAssets,
  pgliteBundle,
  startThread,
  takeThread,
} from './pglite-thread.ts'
import type { WorkerOpen, WorkerReply, WorkerWedge } from './pglite-worker.ts'
import { CONTENT_TRANSACTION } from './transactions.ts'

export type Database = {
  prisma: PrismaClient
  kind: 'pglite' | 'postgres'
  /** For the migration engine (schema-engine-wasm), which opens its own adapter connection. */
  adapterFactory: SqlMigrationAwareDriverAdapterFactory
  close(): Promise<void>
  /**
   * Fault injection (tests): ends the embedded database's thread as a crash inside PGlite would. Only on
   * PGlite with PGLITE_THREAD=worker.
   */
  endThreadForFaultTest?: () => void
  /**
   * Fault injection (tests): the embedded database's thread stays alive but stops answering queries, as a
   * query that never returns would; the health probe must notice. Only on PGlite with PGLITE_THREAD=worker.
   */
  wedgeThreadForFaultTest?: () => void
  /**
   * The embedded database only: writes a backup of it to `file` (PGlite's dumpDataDir, a gzipped tarball of
   * the folder as of one moment between queries; db/backup/). Returns the file's size in bytes.
   */
  dumpDataDir?: (file: string) => Promise<number>
  /**
   * The embedded database only, when its folder was new: made by `initdb` (a template may be saved from it
   * once migrated: server-database.ts) or loaded from a `template` (pglite-template.ts).
   */
  made?: 'initdb' | 'template'
}

export type OpenOptions = {
  /**
   * Told when the embedded database's thread ends unexpectedly, when its health probe fails and when it
   * runs again (logged as warnings).
   */
  onThreadProblem?: (message: string) => void
  /** The thread's health probe (tests use small values): defaults DATABASE_THREAD_PROBE_MS and _TIMEOUT_MS. */
  threadProbe?: { intervalMs?: number; timeoutMs?: number }
}

/**
 * PostgreSQL's own page cache inside the embedded database (its default is 128MB). PGlite reads its files
 * through the operating system, whose cache holds recently read pages anyway, and the WebAssembly memory
 * of the buffers is resident for the process's life: 32MB took ~105 MiB off the idle server's RSS
 * (276 to 171 MiB for PGlite alone, measured) without slowing find_documents over 40,000 documents
 * (bench, --only=find). Set for each start, not written to the data folder's postgresql.conf.
 */
export const PGLITE_SHARED_BUFFERS = '32MB'

/** The embedded database's settings beyond PGlite's defaults (synced or not: db/pglite-fsync.ts adds it). */
const PGLITE_EXTRA_PARAMS = ['-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`]

export { type DatabaseTarget, databaseTarget, type PgliteThread, prepareDatabase } from './pglite-thread.ts'

export async function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Promise<Database> {
  if (target.kind === 'postgres') {
    const adapterFactory = new PrismaPg({ connectionString: target.url, max: 10 })
    const prisma = new PrismaClient({ adapter: adapterFactory })
    return {
      prisma,
      kind: 'postgres',
      adapterFactory,
      close: () => prisma.$disconnect(),
    }
  }
  mkdirSync(target.dir, { recursive: true, mode: 0o700 })
  const fsync = target.fsync ?? true
  if (target.thread !== 'main') return openPgliteWorker(target.dir, fsync, target.templates, options)
  // PGlite's own module only in this mode: with the thread (the default) it is loaded there, not here.
  const [{ PGlite }, { PGLITE_EXTENSIONS }, { pgliteStartParams, SyncedNodeFS }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('./pglite-extensions.ts'),
    import('./pglite-fsync.ts'),
  ])
  const pglite = await PGlite.create(target.dir, {
    extensions: PGLITE_EXTENSIONS,
    startParams: pgliteStartParams(fsync, PGLITE_EXTRA_PARAMS),
    fs: fsync ? new SyncedNodeFS(target.dir) : undefined,
  })
  // Only this mode uses the in-thread adapter: imported here, not by every process that opens a database.
  const { PrismaPGlite } = await import('pglite-prisma-adapter')
  const adapterFactory = new PrismaPGlite(pglite)
  const prisma = new PrismaClient({ adapter: adapterFactory })
  return {
    prisma,
    kind: 'pglite',
    adapterFactory,
    async dumpDataDir(file) {
      await pglite.exec('CHECKPOINT')
      return writeBackupFile(file, await pglite.dumpDataDir('gzip'))
    },
    async close() {
      await prisma.$disconnect()
      await pglite.close()
    },
  }
}

/** How long a backup of the embedded database may take (the folder read, compressed and written). */
const WORKER_DUMP_TIMEOUT_MS = 30 * 60_000

/** How long the embedded database's thread may take to open the folder (a first start runs initdb). */
const WORKER_OPEN_TIMEOUT_MS = 120_000

/**
 * The socket's folder: beside the database folder (private to this user, 0700) when the path fits a Unix
 * socket's limit (107 bytes), else a private folder under the system's temporary one.
 */
function socketFolder(dir: string): { folder: string; temporary: boolean } {
  const beside = join(dirname(dir), 'pglite-socket')
  if (Buffer.byteLength(join(beside, '.s.PGSQL.5432')) <= 100) {
    mkdirSync(beside, { recursive: true, mode: 0o700 })
    return { folder: beside, temporary: false }
  }
  return { folder: mkdtempSync(join(tmpdir(), 'collab-pglite-')), temporary: true }
}

/** Waits between restarts of a database thread that ended unexpectedly: 0.5 s, doubling to 15 s. */
const RESTART_DELAY_MS = { first: 500, max: 15_000 }

/** How often the running database thread is asked to answer a query (its health probe). */
export const DATABASE_THREAD_PROBE_MS = 5_000
/**
 * How long a probe waits for its answer before the thread is taken for stuck and ended. Generous on
 * purpose: PGlite runs one query at a time and pglite-socket keeps an open transaction's queries together,
 * so the probe waits behind the query running now and behind a whole interactive transaction (at most
 * CONTENT_TRANSACTION.timeout, else Prisma's 5 s). The longest legitimate holds seen are ~100 ms (a 5 MiB
 * document's compaction) to seconds (a 20 MiB import, VACUUM of a large table); ending a thread in the
 * middle of a legitimate query would fail it, and the same query would be ended again on every retry,
 * while a stuck thread noticed a minute late only delays a recovery that otherwise never came.
 */
export const DATABASE_THREAD_PROBE_TIMEOUT_MS = 2 * CONTENT_TRANSACTION.timeout
/** Probes answered with an error (not silence) in a row before the thread is ended and started again. */
export const DATABASE_THREAD_PROBE_FAILURES = 3

/**
 * One probe: `SELECT 1` through the server's own Prisma client, the path every query takes (its pool
 * connection, the socket server, its query queue, PGlite), answered, silent within `timeoutMs`, or the
 * error it failed with. Not a connection of its own: pglite-socket runs every connection on PGlite's one
 * session and interleaves their messages, so a second connection's simple query between another's
 * Parse and Bind drops its unnamed prepared statement ("unnamed prepared statement does not exist").
 * A message to the worker answered by PGlite directly would miss a stuck socket server or queue.
 */
async function probeThread(prisma: PrismaClient, timeoutMs: number): Promise<'answered' | 'silent' | Error> {
  let timer: Timer | undefined
  const silent = new Promise<'silent'>((resolve) => {
    timer = setTimeout(() => resolve('silent'), timeoutMs)
    timer.unref()
  })
  const answer = prisma.$queryRawUnsafe('SELECT 1').then(
    () => 'answered' as const,
    (error: Error) => error,
  )
  try {
    return await Promise.race([answer, silent])
  } finally {
    clearTimeout(timer)
  }
}

async function openPgliteWorker(
  dir: string,
  fsync: boolean,
  templates: string | undefined,
  options: OpenOptions,
): Promise<Database> {
  const { folder, temporary } = socketFolder(dir)
  const port = 5432
  // One connection: PGlite is one session, so a second would only queue behind the first, and an
  // interactive transaction must not interleave with other queries (pglite-socket queues them anyway).
  const adapterFactory = new PrismaPg({ host: folder, port, user: 'postgres', database: 'template1', max: 1 })
  const prisma = new PrismaClient({ adapter: adapterFactory })
  // Prisma compiles its query compiler (WebAssembly) on this thread at its first connect: done now, while
  // PGlite compiles and opens, instead of after (it opens no connection until the first query). A failure
  // here is met again, with its message, at the first query.
  const compilerReady = prisma.$connect().catch(() => {})
  // PostgreSQL's PG_VERSION marks a folder that holds a database: only a new one needs initdb, or a
  // migrated template loaded in its place (pglite-template.ts).
  const fresh = !existsSync(join(dir, 'PG_VERSION'))
  const template = fresh ? findTemplate(templates) : undefined
  const loadDataDir = template ? await readTemplate(template).catch(() => undefined) : undefined
  let { thread, compilesItself } = takeThread(dir)
  const [assets, initdbWasmModule] = await Promise.all([
    compilesItself ? { fsBundle: pgliteBundle() } : loadPgliteAssets(),
    fresh && !loadDataDir ? loadInitdbAssets() : undefined,
  ])
  const open: WorkerOpen = {
    type: 'open',
    dir,
    socketPath: join(folder, `.s.PGSQL.${port}`),
    extraParams: PGLITE_EXTRA_PARAMS,
    fsync,
    ...assets,
    initdbWasmModule,
    loadDataDir,
  }
  /** The open for a thread that is handed PGlite's module (any but the one prepared). */
  const openWithModule = async (): Promise<WorkerOpen> =>
    open.pgliteWasmModule ? open : Object.assign(open, await loadPgliteAssets())
  const removeFolder = () => {
    if (temporary) rmSync(folder, { recursive: true, force: true })
  }
  let closing = false
  /** From a thread's end until its successor is ready: no probe meanwhile (nothing is there to answer). */
  let restarting = false
  let [opened] = await Promise.all([thread.ask(open, WORKER_OPEN_TIMEOUT_MS), compilerReady])
  if (opened.type !== 'ready' && template && loadDataDir) {
    // A template that does not load (damaged, or written by a PGlite that reads it otherwise) is removed,
    // and the new folder is made the long way: nothing of anyone's is in it yet.
    options.onThreadProblem?.(
      `the template ${template} did not load (${opened.type === 'failed' ? opened.message : opened.type}); removed it, running initdb`,
    )
    discardTemplate(template)
    thread.worker.terminate()
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    open.loadDataDir = undefined
    open.initdbWasmModule = await loadInitdbAssets()
    thread = startThread()
    opened = await thread.ask(await openWithModule(), WORKER_OPEN_TIMEOUT_MS)
  }
  if (opened.type !== 'ready') {
    thread.worker.terminate()
    await prisma.$disconnect().catch(() => {})
    removeFolder()
    throw new Error(
      `DATA_DIR: the embedded database in ${dir} did not open: ${opened.type === 'failed' ? opened.message : opened.type}`,
    )
  }
  const made = !fresh ? undefined : open.loadDataDir ? 'template' : 'initdb'
  // A restart of the thread opens the folder as it is now: never initdb or a template again.
  open.loadDataDir = undefined
  open.initdbWasmModule = undefined
  // A thread that ends while the server runs (a crash inside PGlite) is started again on the same folder
  // and socket, as a PostgreSQL server comes back after a restart: meanwhile queries fail as "database
  // unavailable" (tools say try again, stores are retried), and the driver's next connection reaches the
  // new thread. PostgreSQL's own recovery replays what was committed.
  let delay = RESTART_DELAY_MS.first
  const watch = (current: DatabaseThread) => {
    current.worker.addEventListener('close', () => {
      if (closing || current !== thread) return
      restarting = true
      options.onThreadProblem?.(`the embedded database's thread ended; starting it again in ${delay} ms`)
      const restart = async () => {
        if (closing) return
        const next = startThread()
        thread = next
        const reply = await openWithModule().then(
          (message) => next.ask(message, WORKER_OPEN_TIMEOUT_MS),
          (error: Error): WorkerReply => ({ type: 'failed', message: error.message ?? String(error) }),
        )
        if (reply.type === 'ready') {
          delay = RESTART_DELAY_MS.first
          restarting = false
          options.onThreadProblem?.("the embedded database's thread is running again")
          watch(next)
          return
        }
        next.worker.terminate()
        if (closing) return
        delay = Math.min(delay * 2, RESTART_DELAY_MS.max)
        options.onThreadProblem?.(
          `the embedded database's thread did not start (${reply.type === 'failed' ? reply.message : reply.type}); trying again in ${delay} ms`,
        )
        setTimeout(restart, delay)
      }
      setTimeout(restart, delay)
    })
  }
  watch(thread)
  // The migration engine's connections are counted: a migration's statement may hold PGlite far longer
  // than any probe timeout (an index over every document), so no probe is judged while one is open.
  let migrating = 0
  // A backup holds PGlite's query lock while it reads the folder: no probe is judged meanwhile either.
  let dumping = 0
  const counted = async (opening: Promise<SqlDriverAdapter>) => {
    const adapter = await opening
    migrating++
    const dispose = adapter.dispose.bind(adapter)
    let disposed = false
    adapter.dispose = () => {
      if (!disposed) migrating--
      disposed = true
      return dispose()
    }
    return adapter
  }
  const migrationAdapterFactory: SqlMigrationAwareDriverAdapterFactory = {
    provider: adapterFactory.provider,
    adapterName: adapterFactory.adapterName,
    connect: () => counted(adapterFactory.connect()),
    connectToShadowDb: () => counted(adapterFactory.connectToShadowDb()),
  }
  // The health probe: a thread that is alive but no longer answers (PGlite aborted inside it, the socket
  // server stuck, a query that never returns) does not end, so the restart above never came and every
  // query failed or hung until the server was restarted by hand. One probe at a time (the next is timed
  // from the end of the last); a silent probe, or too many failed in a row, ends the thread, and the
  // restart above starts a fresh one on the same folder.
  const probeEveryMs = options.threadProbe?.intervalMs ?? DATABASE_THREAD_PROBE_MS
  const probeTimeoutMs = options.threadProbe?.timeoutMs ?? DATABASE_THREAD_PROBE_TIMEOUT_MS
  let failures = 0
  let probeTimer: Timer | undefined
  const nextProbe = () => {
    if (closing) return
    probeTimer = setTimeout(probe, probeEveryMs)
    probeTimer.unref() // the probe never keeps the process alive
  }
  const probe = async () => {
    const probed = thread
    if (restarting) failures = 0 // failures of the thread being replaced do not count against the next
    if (restarting || migrating > 0 || dumping > 0) return nextProbe()
    const result = await probeThread(prisma, probeTimeoutMs)
    // Judged only if nothing changed meanwhile: a closed database, a thread already ended or replaced.
    if (closing || restarting || migrating > 0 || dumping > 0 || probed !== thread) return nextProbe()
    if (result === 'answered') {
      failures = 0
    } else if (result === 'silent' || ++failures >= DATABASE_THREAD_PROBE_FAILURES) {
      failures = 0
      options.onThreadProblem?.(
        result === 'silent'
          ? `the embedded database's thread did not answer a query within ${probeTimeoutMs / 1000} s; ending it so that it starts again`
          : `the embedded database's thread failed ${DATABASE_THREAD_PROBE_FAILURES} queries in a row (${result.message}); ending it so that it starts again`,
      )
      restarting = true // until the thread's end is reported and its successor is ready
      probed.worker.terminate()
    }
    nextProbe()
  }
  nextProbe()
  return {
    prisma,
    kind: 'pglite',
    adapterFactory: migrationAdapterFactory,
    made,
    endThreadForFaultTest: () => thread.worker.terminate(),
    wedgeThreadForFaultTest: () => thread.worker.postMessage({ type: 'wedge' } satisfies WorkerWedge),
    async dumpDataDir(file) {
      dumping++
      try {
        const reply = await thread.ask({ type: 'dump', file }, WORKER_DUMP_TIMEOUT_MS)
        if (reply.type === 'dumped') return reply.bytes
        throw new Error(`the backup failed: ${reply.type === 'failed' ? reply.message : reply.type}`)
      } finally {
        dumping--
      }
    },
    async close() {
      closing = true
      clearTimeout(probeTimer)
      await prisma.$disconnect()
      await thread.ask({ type: 'close' }, 30_000)
      thread.worker.terminate()
      removeFolder()
    },
  }
}
