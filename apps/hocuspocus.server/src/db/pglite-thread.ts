/**
 * Where the database is and, for the embedded one, its thread and its WebAssembly, started as early as a
 * process can: this file is light to import (no PGlite, no Prisma), so an entry point (boot.ts, the CLI)
 * imports it with the configuration, calls prepareDatabase, and only then imports the modules it runs.
 * The thread then loads PGlite's modules, and the engine compiles PGlite's WebAssembly, while the server's
 * or the command's own modules load on the main thread; client.ts opens the database on that thread.
 */
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { WorkerDump, WorkerOpen, WorkerPrepare, WorkerReply } from './pglite-worker.ts'

/**
 * Where the embedded database runs: `worker` (default), its own thread, reached over a Unix socket with
 * the PostgreSQL driver; `main`, in the server's thread through pglite-prisma-adapter (every query,
 * including a compaction's whole-state INSERT, then holds the event loop: ~1.4 s for 7 MB, measured).
 */
export type PgliteThread = 'worker' | 'main'

export type DatabaseTarget =
  /** `fsync` (PGLITE_FSYNC): a commit is answered once it is on the disk; absent: true. */
  | {
      kind: 'pglite'
      dir: string
      thread?: PgliteThread
      fsync?: boolean
      /** PGLITE_TEMPLATES: migrated templates a new folder is made from (pglite-template.ts); absent: none. */
      templates?: string
    }
  | { kind: 'postgres'; url: string }

export function databaseTarget(config: {
  dataDir: string
  databaseUrl: string | undefined
  pgliteThread?: PgliteThread
  pgliteFsync?: boolean
  pgliteTemplates?: string
}): DatabaseTarget {
  return config.databaseUrl
    ? { kind: 'postgres', url: config.databaseUrl }
    : {
        kind: 'pglite',
        dir: join(config.dataDir, 'pglite'),
        thread: config.pgliteThread ?? 'worker',
        fsync: config.pgliteFsync ?? true,
        templates: config.pgliteTemplates,
      }
}

/** PGlite's WebAssembly, compiled once per process and shared with every worker given it, and its file bundle. */
let pgliteAssets: Promise<Pick<WorkerOpen, 'pgliteWasmModule' | 'fsBundle'>> | undefined
/** initdb's WebAssembly: compiled only for a folder that has no database yet (a first start). */
let initdbAssets: Promise<WebAssembly.Module> | undefined

const pgliteDist = () => dirname(Bun.resolveSync('@electric-sql/pglite', import.meta.dir))
const pgliteWasmPath = () => join(pgliteDist(), 'pglite.wasm')

/**
 * PGlite's file bundle: the file itself, not its bytes. The database thread reads it when PGlite unpacks
 * it, so no thread holds the 6 MB bundle for the life of the process (a restarted thread reads the file
 * again). Idle RSS on PGlite 248 -> 230 MiB with the file instead of its bytes (three starts each,
 * interleaved; issue 30): more than the bundle, so the bytes handed over were likely held on both threads.
 */
export const pgliteBundle = () => Bun.file(join(pgliteDist(), 'pglite.data'))

export function loadPgliteAssets() {
  pgliteAssets ??= (async () => {
    const pgliteWasmModule = await WebAssembly.compile(await Bun.file(pgliteWasmPath()).arrayBuffer())
    return { pgliteWasmModule, fsBundle: pgliteBundle() }
  })()
  pgliteAssets.catch(() => {
    pgliteAssets = undefined
  })
  return pgliteAssets
}

export function loadInitdbAssets() {
  initdbAssets ??= (async () =>
    WebAssembly.compile(await Bun.file(join(pgliteDist(), 'initdb.wasm')).arrayBuffer()))()
  initdbAssets.catch(() => {
    initdbAssets = undefined
  })
  return initdbAssets
}

/** One started database thread: asks it a question and waits for its answer. */
export type DatabaseThread = {
  worker: Worker
  ask(message: WorkerOpen | WorkerDump | { type: 'close' }, timeoutMs: number): Promise<WorkerReply>
}

export function startThread(): DatabaseThread {
  const worker = new Worker(new URL('./pglite-worker.ts', import.meta.url).href)
  const replies: Array<(reply: WorkerReply) => void> = []
  let failure: string | undefined
  const fail = (message: string) => {
    failure ??= message
    for (const wake of replies.splice(0)) wake({ type: 'failed', message })
  }
  worker.onmessage = (event: MessageEvent<WorkerReply>) => replies.shift()?.(event.data)
  worker.onerror = (event) => fail(`the embedded database's thread failed: ${event.message}`)
  worker.addEventListener('close', () => fail("the embedded database's thread ended"))
  return {
    worker,
    ask: (message, timeoutMs) =>
      new Promise<WorkerReply>((resolve) => {
        if (failure) return resolve({ type: 'failed', message: failure })
        const timer = setTimeout(
          () => resolve({ type: 'failed', message: `no answer within ${timeoutMs / 1000} s` }),
          timeoutMs,
        )
        replies.push((reply) => {
          clearTimeout(timer)
          resolve(reply)
        })
        worker.postMessage(message)
      }),
  }
}

/** The thread prepareDatabase started, until the database is opened on it (takeThread). */
let preparedThread: { dir: string; thread: DatabaseThread } | undefined

/**
 * Starts what opening the embedded database waits for, before the caller imports anything heavy: a
 * database thread that loads PGlite's modules and compiles PGlite's WebAssembly itself (the engine's
 * compile threads do the work), while the server's modules load on the main thread. Before, the thread
 * started only once the main thread had compiled the WebAssembly, after the server's modules (~0.7 s of a
 * start, measured); then the main thread compiled it beside the thread, and the compiled module could
 * only be handed over once the main thread was free, after those modules again (traced: compiled by
 * ~0.5 s, handed over at ~0.8 s). Nothing for PostgreSQL or PGlite on the main thread; a failure is met
 * again when the database is opened. The prepared thread does not keep the process alive until it is taken.
 */
export function prepareDatabase(target: DatabaseTarget): void {
  if (target.kind !== 'pglite' || target.thread === 'main') return
  // A new folder needs initdb, unless a template is kept (a glance only: the template's exact name needs
  // the migrations read, and a start that finds none that fits compiles initdb when it opens).
  if (!existsSync(join(target.dir, 'PG_VERSION')) && !keepsTemplates(target.templates))
    loadInitdbAssets().catch(() => {})
  if (preparedThread?.dir === target.dir) return
  preparedThread?.thread.worker.terminate()
  const thread = startThread()
  ;(thread.worker as unknown as Bun.Worker).unref()
  thread.worker.postMessage({ type: 'prepare', wasmPath: pgliteWasmPath() } satisfies WorkerPrepare)
  preparedThread = { dir: target.dir, thread }
}

/** How templates of the embedded database are named: `pglite-<key>.tar.gz` (pglite-template.ts makes the key). */
export const templateName = { prefix: 'pglite-', suffix: '.tar.gz' } as const

/** Whether `folder` holds any template of the embedded database. */
function keepsTemplates(folder: string | undefined): boolean {
  if (!folder) return false
  try {
    return readdirSync(folder).some(
      (name) => name.startsWith(templateName.prefix) && name.endsWith(templateName.suffix),
    )
  } catch {
    return false
  }
}

/**
 * The thread prepared for `dir` (prepareDatabase), which compiles PGlite's WebAssembly itself, else a new
 * one, which is handed the module the main thread compiles (`loadPgliteAssets`, once per process: every
 * database a test process opens, every restarted thread).
 */
export function takeThread(dir: string): { thread: DatabaseThread; compilesItself: boolean } {
  const prepared = preparedThread
  preparedThread = undefined
  if (prepared?.dir === dir) {
    ;(prepared.thread.worker as unknown as Bun.Worker).ref()
    return { thread: prepared.thread, compilesItself: true }
  }
  prepared?.thread.worker.terminate()
  return { thread: startThread(), compilesItself: false }
}
