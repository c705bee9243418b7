/**
 * Imports are built on a worker thread (worker.ts), never on the event loop that serves editors and agents:
 * parsing and building a 20 MiB file takes seconds, and while it ran there every other client waited
 * (an ordinary 21 MB file held others' keystrokes up to 11 s). One worker builds one file at a time; the
 * machine's other core keeps serving.
 *
 * Fair share: each owner has at most MAX_IMPORTS_PER_OWNER imports waiting or building, and at most
 * MAX_QUEUED_IMPORTS wait in all; past either the import is refused at once, saying to try again later. A
 * build past IMPORT_DEADLINE_MS is stopped (its worker is ended; the next import starts a new one) and
 * refused. The worker ends after IMPORT_WORKER_IDLE_MS without work, giving its memory back.
 */
import { type Result, refuse } from '../../errors.ts'
import type { BuiltImport, ImportInput } from './build.ts'
import type { ImportJob, ImportReply } from './worker.ts'

/** Longest one file may build: a 24 MiB file of prose builds in ~2-5 s on this project's 2-core machine. */
export const IMPORT_DEADLINE_MS = 60_000
/** Imports one owner may have waiting or building at a time. */
export const MAX_IMPORTS_PER_OWNER = 1
/** Imports that may wait for the worker, all owners together. */
export const MAX_QUEUED_IMPORTS = 8
/** A worker idle this long is ended (its heap held the last file's garbage). */
export const IMPORT_WORKER_IDLE_MS = 30_000

/**
 * A worker keeps the process alive only while it builds: the CLI exits when its command is done, and a
 * pending import still holds the process open (Bun's Worker has `ref`/`unref`, as Node's does).
 */
function refWorker(worker: Worker, held: boolean): void {
  const handle = worker as Worker & { ref(): void; unref(): void }
  if (held) handle.ref()
  else handle.unref()
}

type Waiting = {
  id: number
  owner: string
  job: ImportJob
  resolve(result: Result<BuiltImport>): void
}

export class ImportPool {
  private worker: Worker | undefined
  private readonly waiting: Waiting[] = []
  private running: (Waiting & { timer: ReturnType<typeof setTimeout> }) | undefined
  private readonly perOwner = new Map<string, number>()
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  private nextId = 1
  private closed = false

  constructor(private readonly options: { deadlineMs?: number; idleMs?: number } = {}) {}

  /** Builds `input` on the worker for `owner` (a user id), or refuses at once when the share is used. */
  build(owner: string, input: ImportInput, maxTextChars: number): Promise<Result<BuiltImport>> {
    if (this.closed) return Promise.resolve(refuse('unavailable', 'server: it is shutting down; try again.'))
    if ((this.perOwner.get(owner) ?? 0) >= MAX_IMPORTS_PER_OWNER) {
      return Promise.resolve(
        refuse(
          'rate_limited',
          'markdown: an import of yours is still being built; wait for its answer, then send the next file.',
          'markdown',
        ),
      )
    }
    if (this.waiting.length >= MAX_QUEUED_IMPORTS) {
      return Promise.resolve(
        refuse(
          'unavailable',
          `server: ${MAX_QUEUED_IMPORTS} imports are waiting to be built; try again in a minute.`,
        ),
      )
    }
    this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1)
    const id = this.nextId++
    return new Promise((resolve) => {
      this.waiting.push({
        id,
        owner,
        job: { id, input, maxTextChars },
        resolve: (result) => {
          const left = (this.perOwner.get(owner) ?? 1) - 1
          if (left > 0) this.perOwner.set(owner, left)
          else this.perOwner.delete(owner)
          resolve(result)
        },
      })
      this.next()
    })
  }

  /** Ends the worker; imports waiting or building are refused. */
  close(): void {
    this.closed = true
    const refusal = refuse(
      'unavailable',
      'server: it is shutting down; try the import again after it restarts.',
    )
    this.stopWorker(refusal)
    for (const waiting of this.waiting.splice(0)) waiting.resolve(refusal)
  }

  private next(): void {
    if (this.running || this.waiting.length === 0) return
    const job = this.waiting.shift()!
    clearTimeout(this.idleTimer)
    const worker = this.startedWorker()
    refWorker(worker, true)
    const timer = setTimeout(() => {
      this.stopWorker(
        refuse(
          'invalid_input',
          `markdown: building it took longer than ${Math.round((this.options.deadlineMs ?? IMPORT_DEADLINE_MS) / 1000)} s and was stopped; split the file into several smaller documents.`,
          'markdown',
        ),
      )
    }, this.options.deadlineMs ?? IMPORT_DEADLINE_MS)
    this.running = { ...job, timer }
    worker.postMessage(job.job)
  }

  private startedWorker(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(new URL('./worker.ts', import.meta.url).href)
    worker.onmessage = (event: MessageEvent<ImportReply>) => {
      const running = this.running
      if (!running || running.id !== event.data.id) return
      this.finish(
        'result' in event.data
          ? event.data.result
          : refuse('invalid_input', `markdown: it could not be built (${event.data.crashed}).`, 'markdown'),
      )
    }
    worker.onerror = (event) => {
      event.preventDefault()
      this.stopWorker(
        refuse('unavailable', `server: the import worker failed (${event.message}); try again.`),
      )
    }
    worker.addEventListener('close', () => {
      if (this.worker !== worker) return
      this.worker = undefined
      if (this.running) this.finish(refuse('unavailable', 'server: the import worker ended; try again.'))
    })
    this.worker = worker
    return worker
  }

  private finish(result: Result<BuiltImport>): void {
    const running = this.running
    if (!running) return
    clearTimeout(running.timer)
    this.running = undefined
    running.resolve(result)
    if (this.waiting.length > 0) {
      this.next()
      return
    }
    if (this.worker) refWorker(this.worker, false)
    clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(() => this.stopWorker(), this.options.idleMs ?? IMPORT_WORKER_IDLE_MS)
    this.idleTimer.unref()
  }

  /** Ends the worker; the import it was building (if any) gets `refusal`, and the queue moves on. */
  private stopWorker(refusal?: Result<BuiltImport>): void {
    const worker = this.worker
    this.worker = undefined
    clearTimeout(this.idleTimer)
    worker?.terminate()
    const running = this.running
    if (running) {
      clearTimeout(running.timer)
      this.running = undefined
      running.resolve(refusal ?? refuse('unavailable', 'server: the import was stopped; try again.'))
    }
    if (!this.closed) this.next()
  }
}
