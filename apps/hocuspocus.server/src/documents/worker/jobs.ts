/**
 * The jobs the documents' worker runs (worker.ts runs them, pool.ts queues and posts them, transfer.ts
 * readies their bytes), and how large a job's input is: types and sizes only, so the three share them
 * without importing each other.
 */
import type { Result } from '@collab/doc-schema'
import type { UndoInput } from '../history-undo.ts'
import type { StoredParts } from '../stored-parts.ts'
import type { CompactInput } from './compact.ts'
import type { DeriveInput } from './derive.ts'
import type { FirstScreenLimits } from './first-screen.ts'
import type { ImportInput } from './import.ts'
import type { LiveReadInput, ReadInput } from './read.ts'
import type { SplitInput } from './split.ts'
import type { SyncAnswerInput } from './sync-answer.ts'
import type { BeforeInput } from './worker-jobs.ts'

export type Job =
  | { kind: 'import'; input: ImportInput; maxTextChars: number }
  | { kind: 'export'; stored: Pick<StoredParts, 'snapshot' | 'updates'> }
  | { kind: 'compact'; input: CompactInput }
  | { kind: 'undo'; input: UndoInput }
  | { kind: 'before'; input: BeforeInput }
  | { kind: 'split'; input: SplitInput }
  | { kind: 'first-screen'; stored: Pick<StoredParts, 'snapshot' | 'updates'>; limits: FirstScreenLimits }
  | { kind: 'read'; input: ReadInput }
  | { kind: 'read-live'; input: LiveReadInput }
  | { kind: 'derive'; input: DeriveInput }
  | { kind: 'sync-answer'; input: SyncAnswerInput }
export type WorkerJob = Job & { id: number }

/**
 * A job's Result (an import's built document or refusal, an export's size), or how it crashed; or, before
 * either, word that a long job is still getting on (its deadline without progress starts again), or an
 * export's next piece of Markdown (progress too; its buffer transferred).
 */
export type WorkerReply =
  | { id: number; result: Result<unknown> }
  | { id: number; crashed: string }
  | { id: number; progress: true }
  | { id: number; piece: Uint8Array }

/**
 * A job whose input is at least this large (Markdown characters, state or log bytes) ends its worker as
 * soon as no job waits: its heap grew by hundreds of MB (a 20 MiB import ~300 MB at its peak, a file at
 * the element ceiling ~600 MB) and an ended worker's heap is returned whole, where a kept one held it for
 * WORKER_IDLE_MS (pool.ts). Starting the next worker (~0.1-0.3 s of module loading) is small beside such a job.
 */
export const LARGE_JOB_BYTES = 1024 * 1024

/** The size of a job's input, as LARGE_JOB_BYTES counts it. */
export function jobBytes(job: Job): number {
  const sum = (parts: ReadonlyArray<{ length: number } | null>) =>
    parts.reduce((total, part) => total + (part?.length ?? 0), 0)
  switch (job.kind) {
    case 'import':
      return job.input.markdown.length
    case 'export':
      return sum([job.stored.snapshot, ...job.stored.updates])
    case 'compact':
      return sum([job.input.snapshot, ...job.input.updates])
    case 'undo':
      return sum([job.input.base, job.input.live])
    case 'before':
      return sum([job.input.snapshot, ...job.input.updates])
    case 'split':
      return sum([job.input.snapshot, ...job.input.updates])
    case 'first-screen':
      return sum([job.stored.snapshot, ...job.stored.updates])
    case 'read':
    case 'derive':
      return sum([job.input.stored.snapshot, ...job.input.stored.updates])
    // Kept on purpose (a live document's copy, bounded by MAX_LIVE_COPY_STRUCTS): never ends the worker.
    case 'read-live':
      return 0
    // Short and frequent (every editor opening a large document): the worker is kept for the next one.
    case 'sync-answer':
      return 0
  }
}
