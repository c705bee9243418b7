/**
 * A restore's or revert's "before" version (history-actions.ts; docs/history.md "Bounds"): the document's
 * stored content, merged on the documents' worker (worker/compact.ts, with its summary against the newest
 * version and its outline) and written as a named version the way a compaction on the worker is
 * (store.ts `storeCompacted`: the snapshot in STATE_SLICE_BYTES slices, the log rows read deleted by id,
 * only while the snapshot is still the one read). The event loop decodes and encodes a slice of base64 at
 * a time and serialises the statements; the states go to the worker and back as transfers, and nothing
 * is merged here. The caller stores what the live document
 * has unstored first (the writer's `storePending`), so the stored content is the document as it is.
 */
import { ok, type Result, refuse } from '@collab/doc-schema'
import type { PrismaClient } from '../db/generated/client.ts'
import { CONTENT_TRANSACTION } from '../db/transactions.ts'
import { HISTORY_INLINE_BYTES } from '../limits.ts'
import { type KnownVersion, newestVersionState } from './history-store.ts'
import { recentStatesOf } from './recent-states.ts'
import { STATE_SLICE_BYTES } from './sliced-read.ts'
import { readForCompaction, storeCompacted } from './store.ts'
import type { WorkerPool } from './worker/pool.ts'
import { type BeforeInput, beforeVersionOf } from './worker/worker-jobs.ts'

/**
 * Reads and merges again this many times in all when the snapshot changed while the worker merged, with a
 * pause before each new attempt (BEFORE_RETRY_PAUSE_MS, doubled each time: 50, 100, 200, 400 ms) so that
 * compactions already queued for the document land first. Three attempts back to back lost to three
 * compactions queued by the writes just before it (the access matrix's owner writes, then restores, on a
 * loaded machine: CI, 2026-12-04).
 */
const BEFORE_ATTEMPTS = 5
const BEFORE_RETRY_PAUSE_MS = 50

/** The version taken, and its state's bytes (what the edit is worked out against). */
export type BeforeVersion = { id: bigint; state: Uint8Array }

export function createBeforeVersions(prisma: PrismaClient, deps: { jobs: WorkerPool }) {
  const recent = recentStatesOf(prisma, STATE_SLICE_BYTES)
  return {
    /**
     * Takes the named version `name` of document `documentId` as stored (`slug` names it in refusals),
     * with `user`'s share of the worker; `known`: a version whose state the caller holds (not read again
     * when it is the newest). Refused when the document is gone, its state is over
     * MAX_HISTORY_STATE_BYTES, or other writes replaced its snapshot BEFORE_ATTEMPTS times meanwhile.
     */
    async saveBeforeVersion(
      user: string,
      document: { id: string; slug: string },
      name: string,
      known?: KnownVersion,
    ): Promise<Result<BeforeVersion>> {
      for (let attempt = 1; attempt <= BEFORE_ATTEMPTS; attempt++) {
        // The snapshot is often the version the action read (a revert of the newest version, nothing
        // compacted since): the database compares them, and it is not read again.
        const read = await readForCompaction(prisma, document.id, recent, known)
        if (read.snapshot === null && read.ids.length === 0)
          return refuse('not_found', `slug: "${document.slug}" is gone (deleted meanwhile).`, 'slug')
        const newest = await newestVersionState(prisma, document.id, known, recent)
        const input: BeforeInput = {
          snapshot: read.snapshot,
          updates: read.updates,
          storedOutline: read.outline,
          maxTextChars: 0,
          versionBase: newest?.state ?? null,
          field: 'slug',
          what: `"${document.slug}"`,
        }
        // As planUndo: small states are merged here (less than the worker's round trip, and two small
        // restores of one user both go through); the rest on the worker with the user's share.
        const inputBytes =
          (read.snapshot?.byteLength ?? 0) + read.updateBytes + (newest?.state.byteLength ?? 0)
        const merged =
          inputBytes <= HISTORY_INLINE_BYTES ? beforeVersionOf(input) : await deps.jobs.before(user, input)
        if (merged.kind === 'error') return merged
        const { state, outline, summary } = merged.value
        const written = await prisma.$transaction(
          (tx) =>
            storeCompacted(
              tx,
              document.id,
              read,
              { state, title: '', text: '', outline },
              { keepDerived: true, version: { reason: 'named', name, summary: summary ?? null } },
            ),
          CONTENT_TRANSACTION,
        )
        if (!written) {
          // Another compaction replaced the snapshot meanwhile: let the queued ones land, then read again.
          if (attempt < BEFORE_ATTEMPTS) await Bun.sleep(BEFORE_RETRY_PAUSE_MS * 2 ** (attempt - 1))
          continue
        }
        if (written.versionId === undefined)
          return refuse('internal', `slug: the version of "${document.slug}" was not taken.`, 'slug')
        // Kept (a copy) before `state` goes to the worker with the edit: the load of the document for the
        // edit, and the summary and compaction after it, take these bytes instead of reading them back.
        recent.written(document.id, written.rowVersion, state, written.versionId)
        return ok({ id: written.versionId, state })
      }
      return refuse(
        'unavailable',
        `slug: "${document.slug}" was stored by others ${BEFORE_ATTEMPTS} times while its version was being taken; call again.`,
        'slug',
      )
    },
  }
}
