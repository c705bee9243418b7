/**
 * Heavy document work runs on a worker thread (worker.ts), never on the event loop that serves editors and
 * agents: building an imported 20 MiB file takes seconds (an ordinary 21 MB file held others' keystrokes up
 * to 11 s), rendering a large document to Markdown for an export takes as long as its content, and working
 * out a revert of a 1 MB document took ~1.4 s. One worker runs one job at a time; the machine's other core
 * keeps serving.
 *
 * Fair share: each user has at most one job of each kind (an import, an export, a whole read, a restore or revert) waiting or running, and at
 * most MAX_QUEUED_JOBS wait in all; past either the job is refused at once, saying to try again later. A job
 * past JOB_DEADLINE_MS is stopped (its worker is ended; the next job starts a new one) and refused. The
 * worker ends after WORKER_IDLE_MS without work, giving its memory back, and at once after a large job
 * (LARGE_JOB_BYTES): a 20 MiB import left the worker's heap ~300-500 MB larger until it ended.
 *
 * Short jobs (a web page's first screen, an editor's sync answer: SHORT_JOB_MS) are worth having only at
 * once: they run on a second worker of their own (the short lane), so they never wait behind an import or
 * an export, nor hold one back. Each is stopped past its time; at most SHORT_LANE_JOBS wait or run there
 * (one running, the rest behind it). Past that a first screen is refused at once (the page opens without
 * it); a sync answer waits for room, up to SYNC_ANSWER_WAIT_MS, and only then is refused (Hocuspocus
 * answers the sync on the event loop). Until 2026-12-05 they
 * shared the one worker, taken only when it was idle: with an import running, every editor opening a 5 MiB
 * document was answered on the event loop (~100-235 ms held each).
 */

import type { FirstScreen, MarkdownPrefix } from '@collab/doc-schema'
import { ok, type Result, refuse } from '@collab/doc-schema'
import {
  FIRST_SCREEN_JOB_MS,
  MAX_JOBS_PER_USER_AND_KIND,
  MAX_QUEUED_JOBS,
  MAX_WAITING_SYNC_ANSWERS,
  MAX_WAITING_SYNC_ANSWERS_PER_USER,
  MAX_WAITING_WHOLE_READS_PER_USER,
  SYNC_ANSWER_JOB_MS,
  SYNC_ANSWER_WAIT_MS,
} from '../../limits.ts'
import type { UndoInput, UndoPlan } from '../history-undo.ts'
import type { StoredParts } from '../stored-parts.ts'
import type { Compacted, CompactedRead, CompactInput } from './compact.ts'
import type { Derived, DeriveInput } from './derive.ts'
import type { MarkdownFile } from './export.ts'
import type { FirstScreenLimits } from './first-screen.ts'
import type { BuiltImport, ImportInput } from './import.ts'
import { type Job, jobBytes, LARGE_JOB_BYTES, type WorkerJob, type WorkerReply } from './jobs.ts'
import type { LiveReadInput, LiveReadReply, ReadInput } from './read.ts'
import type { SplitInput } from './split.ts'
import type { SyncAnswer, SyncAnswerInput } from './sync-answer.ts'
import { transferable } from './transfer.ts'
import { SECTION_READS_BUSY, WORDING } from './wording.ts'
import type { BeforeInput } from './worker-jobs.ts'

/**
 * Longest one job may run without a word of progress from the worker (an import every 2,000 blocks built,
 * an export every piece written; other jobs send none, so for them it is the whole job's limit). A 20 MiB
 * file of prose builds in ~7-8 s of the worker's CPU on this project's 2-core machine; two such imports
 * side by side on a busy machine ran past a flat 60 s and were refused, though each was steadily building.
 */
export const JOB_DEADLINE_MS = 60_000
/**
 * Longest one job may run in all, however steadily it progresses: what its work may take is bounded by its
 * input's limits (the element ceiling, MAX_IMPORT_BYTES), so this is reached only on a machine far busier
 * than it should be, and the worker (held by this one job) is given back to the others' jobs.
 */
export const JOB_MAX_MS = 180_000
/** A worker idle this long is ended (its heap held the last job's garbage). */
export const WORKER_IDLE_MS = 30_000
export { LARGE_JOB_BYTES } from './jobs.ts'
export { transferable } from './transfer.ts'

/**
 * A worker keeps the process alive only while it works: the CLI exits when its command is done, and a
 * pending job still holds the process open (Bun's Worker has `ref`/`unref`, as Node's does).
 */
function refWorker(worker: Worker, held: boolean): void {
  const handle = worker as Worker & { ref(): void; unref(): void }
  if (held) handle.ref()
  else handle.unref()
}

type Kind = Job['kind']

/** The key of a user's jobs of one kind (their share: MAX_JOBS_PER_USER_AND_KIND). */
const jobKey = (kind: Kind, user: string) => `${kind}:${user}`

/**
 * Jobs worth having only soon: run on the short lane (its own worker), stopped past these many ms in all.
 */
const SHORT_JOB_MS: Partial<Record<Kind, number>> = {
  'first-screen': FIRST_SCREEN_JOB_MS,
  'sync-answer': SYNC_ANSWER_JOB_MS,
}

/**
 * Short jobs waiting or running on the short lane at once. Past it a first screen is refused at once; a sync
 * answer waits for room (SYNC_ANSWER_WAIT_MS). One answer of a 5 MiB document takes ~50-150 ms there, so
 * the last of them waits a few hundred ms at most.
 */
export const SHORT_LANE_JOBS = 3

/** A sync answer waiting for room on the short lane (the lane full, or its user's answer already there). */
type Admission = {
  user: string
  job: Job
  resolve(result: Result<unknown>): void
  timer: ReturnType<typeof setTimeout>
}

type Waiting = {
  id: number
  job: WorkerJob
  resolve(result: Result<unknown>): void
  /** An export's pieces as the worker makes them, before its result. */
  onPiece?: (piece: Uint8Array) => void
}

export class WorkerPool {
  private worker: Worker | undefined
  private readonly waiting: Waiting[] = []
  private running:
    | (Waiting & {
        timer: ReturnType<typeof setTimeout>
        large: boolean
        /** When it is stopped whatever its progress (`totalMs`, JOB_MAX_MS, after it started). */
        endsAt: number
        totalMs: number
        /** Without progress, it is stopped this long after its start or last progress. */
        stallMs: number
      })
    | undefined
  private readonly perUser = new Map<string, number>()
  /** Per user, their whole reads not yet answered and the last of them (the next one waits for it). */
  private readonly reads = new Map<string, { count: number; last: Promise<unknown> }>()
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  private nextId = 1
  private closed = false
  /** The short lane: a pool of its own, started at its first short job (undefined in the lane itself). */
  private shortLane: WorkerPool | undefined
  /** In the short lane: sync answers waiting for room, oldest first (SYNC_ANSWER_WAIT_MS at most). */
  private readonly admissions: Admission[] = []

  /**
   * `deadlineMs`: JOB_DEADLINE_MS (the longest without progress) for tests; `maxJobMs`: JOB_MAX_MS;
   * `idleMs`: WORKER_IDLE_MS; `onProgress`: told each time the running job reports progress.
   */
  constructor(
    private readonly options: {
      deadlineMs?: number
      maxJobMs?: number
      idleMs?: number
      onProgress?: (kind: Kind) => void
      /** This pool is a short lane (takes only SHORT_JOB_MS jobs, at most SHORT_LANE_JOBS at once). */
      short?: boolean
      /** SYNC_ANSWER_WAIT_MS, for tests. */
      admitWaitMs?: number
    } = {},
  ) {}

  /** Builds an imported file on the worker for `user`, or refuses at once when their share is used. */
  build(user: string, input: ImportInput, maxTextChars: number): Promise<Result<BuiltImport>> {
    return this.run(user, { kind: 'import', input, maxTextChars }) as Promise<Result<BuiltImport>>
  }

  /**
   * Renders stored content as Markdown on the worker for `user` (an export), in pieces (export.ts): each
   * given to `onPiece` as it arrives, before the result (whose `pieces` are then empty), or all in the
   * result without it. Pieces may have arrived before a refusal (the work stopped at its deadline).
   */
  async render(
    user: string,
    stored: Pick<StoredParts, 'snapshot' | 'updates'>,
    onPiece?: (piece: Uint8Array) => void,
  ): Promise<Result<MarkdownFile>> {
    const pieces: Uint8Array[] = []
    const result = (await this.run(
      user,
      { kind: 'export', stored },
      onPiece ?? ((piece) => pieces.push(piece)),
    )) as Result<MarkdownFile>
    return result.kind === 'ok' ? ok({ pieces, bytes: result.value.bytes }) : result
  }

  /**
   * Merges a document's stored content for a compaction on the worker (compact.ts). The server's own job:
   * no share applies (two of one document may wait, a later one finds the snapshot changed and merges
   * again); it waits behind imports and exports like any job, and is refused, like them, when the queue
   * is full (the compaction then runs on the event loop).
   */
  compact(documentId: string, input: CompactInput): Promise<Result<CompactedRead>> {
    return this.run(`${documentId}#${this.nextId}`, { kind: 'compact', input }) as Promise<
      Result<CompactedRead>
    >
  }

  /** Works out a restore's or revert's edit on the worker for `user` (history-undo.ts planUndo). */
  undo(user: string, input: UndoInput): Promise<Result<UndoPlan>> {
    return this.run(user, { kind: 'undo', input }) as Promise<Result<UndoPlan>>
  }

  /**
   * Merges the stored content into a restore's or revert's "before" version on the worker for `user`
   * (compact.ts: state, summary, outline, and the state's bytes in `raw`).
   */
  before(user: string, input: BeforeInput): Promise<Result<Compacted>> {
    return this.run(user, { kind: 'before', input }) as Promise<Result<Compacted>>
  }

  /** Splits a large stored document into parts to load one at a time (split.ts); the server's own job. */
  split(documentId: string, input: SplitInput): Promise<Result<Uint8Array[]>> {
    return this.run(`${documentId}#${this.nextId}`, { kind: 'split', input }) as Promise<Result<Uint8Array[]>>
  }

  /**
   * The start of a document's Markdown for `user`'s whole read (read.ts), or a section read on a live
   * document's copy (read-section.ts): one at a time per user in the
   * worker's queue, waiting behind other jobs like an export; a user's further reads wait for the one
   * before (at most MAX_WAITING_WHOLE_READS_PER_USER), so an agent's parallel reads are all answered
   * without one user holding more than one place in the queue.
   */
  readPrefix(user: string, input: ReadInput): Promise<Result<MarkdownPrefix>>
  /** The same for a live document through its copy on the worker (read.ts renderLivePrefix). */
  readPrefix(user: string, input: LiveReadInput): Promise<Result<LiveReadReply>>
  readPrefix(user: string, input: ReadInput | LiveReadInput): Promise<Result<unknown>> {
    const mine = this.reads.get(user) ?? { count: 0, last: Promise.resolve() }
    if (mine.count > MAX_WAITING_WHOLE_READS_PER_USER) {
      const busy = 'section' in input ? SECTION_READS_BUSY : WORDING.read.busy
      return Promise.resolve(refuse('rate_limited', busy, WORDING.read.field))
    }
    mine.count++
    this.reads.set(user, mine)
    const job: Job = 'key' in input ? { kind: 'read-live', input } : { kind: 'read', input }
    const answer = mine.last.then(() => this.run(user, job))
    mine.last = answer
    return answer.finally(() => {
      if (--mine.count === 0 && this.reads.get(user) === mine) this.reads.delete(user)
    })
  }

  /** A stored document's heading ids, title and search text, or outline (derive.ts); the server's own job. */
  derive(documentId: string, input: DeriveInput): Promise<Result<Derived>> {
    return this.run(`${documentId}#${this.nextId}`, { kind: 'derive', input }) as Promise<Result<never>>
  }

  /** Whether the worker of long jobs is up (working, or idle until WORKER_IDLE_MS). */
  get hasWorker(): boolean {
    return this.worker !== undefined
  }

  /** Jobs running or waiting: on the worker of long jobs, and on the short lane. */
  get jobs(): { long: number; short: number } {
    const here = (this.running ? 1 : 0) + this.waiting.length
    return { long: here, short: this.shortLane?.jobs.long ?? 0 }
  }

  /** Whether the short lane's worker is up (working, or idle until WORKER_IDLE_MS). */
  get hasShortWorker(): boolean {
    return this.shortLane?.worker !== undefined
  }

  /**
   * The first screen of a large stored document on the short lane for `user` (worker/first-screen.ts);
   * refused at once when the lane is full (the page is served without it).
   */
  firstScreen(
    user: string,
    stored: Pick<StoredParts, 'snapshot' | 'updates'>,
    limits: FirstScreenLimits,
  ): Promise<Result<FirstScreen>> {
    return this.run(user, { kind: 'first-screen', stored, limits }) as Promise<Result<FirstScreen>>
  }

  /**
   * The answer to an editor's sync step 1 from the updates a live document was built from
   * (sync-answer.ts), on the short lane (an editor opening a document never waits behind someone's
   * import); when the lane is full it waits for room (admitLater), refused past that wait (Hocuspocus
   * answers it on the event loop).
   */
  syncAnswer(user: string, input: SyncAnswerInput): Promise<Result<SyncAnswer>> {
    return this.run(user, { kind: 'sync-answer', input }) as Promise<Result<SyncAnswer>>
  }

  /** Ends the worker; jobs waiting or running are refused. */
  close(): void {
    this.closed = true
    this.shortLane?.close()
    const refusal = refuse('unavailable', 'server: it is shutting down; try again after it restarts.')
    this.stopWorker(refusal)
    for (const waiting of this.waiting.splice(0)) waiting.resolve(refusal)
    for (const admission of this.admissions.splice(0)) {
      clearTimeout(admission.timer)
      admission.resolve(refusal)
    }
  }

  private run(user: string, job: Job, onPiece?: (piece: Uint8Array) => void): Promise<Result<unknown>> {
    if (this.closed) return Promise.resolve(refuse('unavailable', 'server: it is shutting down; try again.'))
    const key = jobKey(job.kind, user)
    const wording = WORDING[job.kind]
    const short = SHORT_JOB_MS[job.kind] !== undefined
    if (short && !this.options.short) {
      this.shortLane ??= new WorkerPool({ ...this.options, short: true })
      return this.shortLane.run(user, job, onPiece)
    }
    const full = short && this.laneFull()
    const mine = this.hasJob(key)
    if (job.kind === 'sync-answer' && (full || mine)) return this.admitLater(user, job)
    if (full) return Promise.resolve(refuse('unavailable', wording.busy))
    if (mine) return Promise.resolve(refuse('rate_limited', wording.busy, wording.field))
    if (this.waiting.length >= MAX_QUEUED_JOBS) {
      return Promise.resolve(
        refuse(
          'unavailable',
          `server: ${MAX_QUEUED_JOBS} large imports, exports, restores and reverts are waiting; try again in a minute.`,
        ),
      )
    }
    this.perUser.set(key, (this.perUser.get(key) ?? 0) + 1)
    const id = this.nextId++
    return new Promise((resolve) => {
      // A whole read (someone waits for it, and it is short: MAX_RENDER_WORK) goes before the server's
      // compactions (no one waits for those).
      const reading = job.kind === 'read' || job.kind === 'read-live'
      const at = reading ? this.waiting.findIndex((w) => w.job.kind === 'compact') : -1
      this.waiting.splice(at < 0 ? this.waiting.length : at, 0, {
        id,
        job: { ...job, id },
        onPiece,
        resolve: (result) => {
          const left = (this.perUser.get(key) ?? 1) - 1
          if (left > 0) this.perUser.set(key, left)
          else this.perUser.delete(key)
          resolve(result)
        },
      })
      this.next()
    })
  }

  /**
   * A sync answer that finds the short lane full, or its user's answer already there, waits for room
   * (taken in arrival order, a user's own one at a time), up to SYNC_ANSWER_WAIT_MS: the editor waits a
   * little longer for its document, where a refusal had Hocuspocus encode the answer on the event loop that
   * serves everyone (~100-235 ms for 5 MiB). Past the wait, or with MAX_WAITING_SYNC_ANSWERS already
   * waiting (MAX_WAITING_SYNC_ANSWERS_PER_USER of one user), it is refused as before.
   */
  private admitLater(user: string, job: Job): Promise<Result<unknown>> {
    const busy = refuse('unavailable', WORDING[job.kind].busy)
    const theirs = this.admissions.filter((a) => a.user === user).length
    if (this.admissions.length >= MAX_WAITING_SYNC_ANSWERS || theirs >= MAX_WAITING_SYNC_ANSWERS_PER_USER)
      return Promise.resolve(busy)
    return new Promise((resolve) => {
      const admission: Admission = {
        user,
        job,
        resolve,
        timer: setTimeout(() => {
          const at = this.admissions.indexOf(admission)
          if (at >= 0) this.admissions.splice(at, 1)
          resolve(busy)
        }, this.options.admitWaitMs ?? SYNC_ANSWER_WAIT_MS),
      }
      this.admissions.push(admission)
    })
  }

  /** The short lane holds SHORT_LANE_JOBS, running or waiting. */
  private laneFull(): boolean {
    return (this.running ? 1 : 0) + this.waiting.length >= SHORT_LANE_JOBS
  }

  /** A user has their job of this kind waiting or running (MAX_JOBS_PER_USER_AND_KIND; `jobKey`). */
  private hasJob(key: string): boolean {
    return (this.perUser.get(key) ?? 0) >= MAX_JOBS_PER_USER_AND_KIND
  }

  /** Lets in the waiting sync answers the lane has room for, oldest first, skipping users already in. */
  private admit(): void {
    for (let i = 0; i < this.admissions.length; ) {
      if (this.laneFull()) return
      const admission = this.admissions[i]!
      if (this.hasJob(jobKey(admission.job.kind, admission.user))) {
        i++
        continue
      }
      this.admissions.splice(i, 1)
      clearTimeout(admission.timer)
      this.run(admission.user, admission.job).then(admission.resolve)
    }
  }

  private next(): void {
    if (this.running || this.waiting.length === 0) return
    const waiting = this.waiting.shift()!
    clearTimeout(this.idleTimer)
    const worker = this.startedWorker()
    refWorker(worker, true)
    const short = SHORT_JOB_MS[waiting.job.kind]
    const stallMs = Math.min(this.options.deadlineMs ?? JOB_DEADLINE_MS, short ?? JOB_DEADLINE_MS)
    const totalMs = short !== undefined ? stallMs : (this.options.maxJobMs ?? JOB_MAX_MS)
    const endsAt = Date.now() + totalMs
    // Measured before it is posted: an export's buffers are transferred, and empty here after.
    this.running = {
      ...waiting,
      timer: this.deadline(waiting.job.kind, stallMs, endsAt, totalMs),
      large: jobBytes(waiting.job) >= LARGE_JOB_BYTES,
      endsAt,
      totalMs,
      stallMs,
    }
    // An export's, first screen's or whole read's (stored or live) bytes were read (or encoded) for the
    // job, and an undo's states are read by nobody after it: theirs go as they are (a copy of a state of
    // 8 MiB is 8 MiB more held while the job runs). A split's are applied here if it fails. A compaction's
    // and a "before" version's are copied: given away too, restores and agents' writes on PostgreSQL
    // hung until the job's deadline (~1 in 3 runs of history-undo.test.ts three at a time, and 20 writes
    // over 10 s in a clean-clone soak); copied, none in 12 such runs. One caller that posts them again:
    // compact-stored.ts's retry (another instance wrote first) posts the same version base, detached by
    // the first post; its post threw and the job stayed running (now refused at once, below).
    const kind = waiting.job.kind
    // An import's bytes (a request's body) are read for the job alone too.
    const own = ['export', 'first-screen', 'read', 'read-live', 'undo', 'derive', 'import'].includes(kind)
    try {
      const posted = transferable(waiting.job, own)
      worker.postMessage(posted.job, posted.transfer)
    } catch (error) {
      // A job that cannot be posted (a buffer given away before, so detached: the clone throws) is
      // refused now; left running, it held the pool, and every job behind it, until its deadline.
      const field = WORDING[kind].field
      const why = error instanceof Error ? error.message : String(error)
      this.finish(
        refuse('invalid_input', `${field}: the work could not be handed to the worker (${why}).`, field),
      )
    }
  }

  private startedWorker(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(new URL('./worker.ts', import.meta.url).href)
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const running = this.running
      if (!running || running.id !== event.data.id) return
      if ('progress' in event.data || 'piece' in event.data) {
        if ('piece' in event.data) running.onPiece?.(event.data.piece)
        // Still working: its time without progress starts again (never past its end).
        clearTimeout(running.timer)
        running.timer = this.deadline(running.job.kind, running.stallMs, running.endsAt, running.totalMs)
        this.options.onProgress?.(running.job.kind)
        return
      }
      const field = WORDING[running.job.kind].field
      this.finish(
        'result' in event.data
          ? event.data.result
          : refuse(
              'invalid_input',
              `${field}: the work failed on the server (${event.data.crashed}).`,
              field,
            ),
      )
    }
    worker.onerror = (event) => {
      event.preventDefault()
      this.stopWorker(
        refuse('unavailable', `server: the documents' worker failed (${event.message}); try again.`),
      )
    }
    worker.addEventListener('close', () => {
      if (this.worker !== worker) return
      this.worker = undefined
      if (this.running) this.finish(refuse('unavailable', "server: the documents' worker ended; try again."))
    })
    this.worker = worker
    return worker
  }

  /**
   * The timer that stops the running job: `stallMs` from now, or at `endsAt` if sooner. Its refusal says
   * which of the two it was and what to do.
   */
  private deadline(
    kind: Kind,
    stallMs: number,
    endsAt: number,
    totalMs: number,
  ): ReturnType<typeof setTimeout> {
    const wording = WORDING[kind]
    const left = endsAt - Date.now()
    const why =
      left <= stallMs
        ? `the work took longer than ${Math.round(totalMs / 1000)} s in all`
        : `the work went ${Math.round(stallMs / 1000)} s without progress`
    return setTimeout(
      () =>
        this.stopWorker(
          refuse(
            'invalid_input',
            `${wording.field}: ${why} and was stopped; ${wording.slow}.`,
            wording.field,
          ),
        ),
      Math.max(0, Math.min(stallMs, left)),
    )
  }

  private finish(result: Result<unknown>): void {
    const running = this.running
    if (!running) return
    clearTimeout(running.timer)
    this.running = undefined
    running.resolve(result)
    this.admit()
    if (this.running || this.waiting.length > 0) {
      this.next()
      return
    }
    if (running.large) {
      this.stopWorker()
      return
    }
    if (this.worker) refWorker(this.worker, false)
    clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(() => this.stopWorker(), this.options.idleMs ?? WORKER_IDLE_MS)
    this.idleTimer.unref()
  }

  /** Ends the worker; the job it was running (if any) gets `refusal`, and the queue moves on. */
  private stopWorker(refusal?: Result<unknown>): void {
    const worker = this.worker
    this.worker = undefined
    clearTimeout(this.idleTimer)
    worker?.terminate()
    const running = this.running
    if (running) {
      clearTimeout(running.timer)
      this.running = undefined
      running.resolve(refusal ?? refuse('unavailable', 'server: the work was stopped; try again.'))
    }
    if (this.closed) return
    this.admit()
    this.next()
  }
}
