/**
 * A compaction of what is stored, merged on the documents' worker: the snapshot and the log rows are read
 * (base64 text, as the database sends them), merged on the worker (worker/compact.ts: the state, its
 * vector, title, plain text, outline with section totals, a version's summary), and written in one
 * transaction that deletes exactly the rows read (store.ts `storeCompacted`). The event loop only passes
 * text along and serialises the statements, in STATE_SLICE_BYTES slices: the stall of a 5 MiB
 * document's compaction when its last editor leaves was ~0.6 s with the merge on the event loop.
 */
import type { PrismaClient } from '../db/generated/client.ts'
import { CONTENT_TRANSACTION } from '../db/transactions.ts'
import type { VersionRequest } from './history-store.ts'
import { recentStatesOf } from './recent-states.ts'
import { STATE_SLICE_BYTES } from './sliced-read.ts'
import { readForCompaction, storeCompacted } from './store.ts'
import type { CompactionRead } from './worker/compact.ts'
import type { WorkerPool } from './worker/pool.ts'

export type StoredCompaction = {
  /** Title and search text too, cut at this many characters; 0: they are current, left as they are. */
  maxTextChars: number
  /** A version asked for (history-store.ts), with the newest version's state its summary is made against. */
  version?: { request: VersionRequest; base: Uint8Array | string | null }
  /** When the content last changed (the content-updated time written with the title and search text). */
  changedAt?: Date
  /**
   * Merge the log rows up to this one only (a version bounded at an agent's write, collab/persistence/
   * versions.ts): later rows stay in the log, as rows appended during the merge do.
   */
  upTo?: bigint
  /**
   * The stored bytes merged alone, nothing decoded (worker/compact.ts `mergeOnly`): the snapshot is
   * written without an outline, and a version taken without a summary. `maxTextChars` must be 0.
   */
  mergeOnly?: boolean
  /** Awaited between the read and the merge: a test lands a store there, as one landing meanwhile would. */
  afterRead?: () => Promise<void>
}

/**
 * Done: the snapshot's size, the version taken, and the log rows merged (their count and bytes). Null:
 * the snapshot changed while the worker merged (a restore, an import, another instance's compaction),
 * COMPACTION_ATTEMPTS times: the other write won, nothing was written and the log stays for the next one.
 */
export type StoredCompactionDone = {
  bytes: number
  versionId?: bigint
  mergedRows: number
  mergedBytes: number
  /** How the worker read the stored parts (compact.ts); absent when nothing was merged. */
  read?: CompactionRead
  /** The flat reading's error when `read` is `flat_failed`. */
  flatError?: string
} | null

/** Reads and merges again this many times in all when the snapshot changed while the worker merged. */
const COMPACTION_ATTEMPTS = 3

export function createStoredCompaction(
  prisma: PrismaClient,
  deps: { jobs: WorkerPool; forgetResolutions: (documentId: string) => void },
) {
  const recent = recentStatesOf(prisma, STATE_SLICE_BYTES)
  /** One read, merge and write; null when the snapshot changed meanwhile (nothing written). */
  async function compactOnce(documentId: string, request: StoredCompaction): Promise<StoredCompactionDone> {
    const read = await readForCompaction(prisma, documentId, recent, undefined, request.upTo)
    // Bounded, and its rows are gone: something else merged them (a named or "before" version, another
    // instance's compaction), whose version holds them. Nothing to take.
    if (request.upTo !== undefined && read.ids.length === 0)
      return { bytes: read.snapshot?.byteLength ?? 0, mergedRows: 0, mergedBytes: 0 }
    await request.afterRead?.()
    const merged = await deps.jobs.compact(documentId, {
      snapshot: read.snapshot,
      updates: read.updates,
      storedOutline: read.outline,
      maxTextChars: request.maxTextChars,
      versionBase: request.version && !request.mergeOnly ? request.version.base : undefined,
      mergeOnly: request.mergeOnly,
    })
    if (merged.kind === 'error') throw new Error(`the documents' worker did not merge it: ${merged.message}`)
    const { state, title, text, outline, summary, read: how, flatError } = merged.value
    const version = request.version && { ...request.version.request, summary: summary ?? null }
    const written = await prisma.$transaction(
      (tx) =>
        storeCompacted(
          tx,
          documentId,
          read,
          { state, title, text, outline, changedAt: request.changedAt },
          { keepDerived: request.maxTextChars === 0, version },
        ),
      CONTENT_TRANSACTION,
    )
    if (!written) return null
    // The load, the summary and the compaction that follow take these bytes instead of reading them back.
    recent.written(documentId, written.rowVersion, state, written.versionId)
    deps.forgetResolutions(documentId) // the title may have changed
    return { ...written, mergedRows: read.ids.length, mergedBytes: read.updateBytes, read: how, flatError }
  }

  return {
    /**
     * Compacts the stored content of `documentId` on the documents' worker. Throws when the database
     * does, and when the worker refuses or fails (its queue is full, its deadline passed, a bug).
     */
    async compactStored(documentId: string, request: StoredCompaction): Promise<StoredCompactionDone> {
      // Another instance compacting the same document at the same moment (each logs every update it
      // hears, so both fall due together) writes first: read again what it wrote and merge that.
      for (let attempt = 1; attempt <= COMPACTION_ATTEMPTS; attempt++) {
        const done = await compactOnce(documentId, request)
        if (done) return done
      }
      return null
    },
  }
}
