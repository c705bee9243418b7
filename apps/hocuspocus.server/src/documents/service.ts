/**
 * Documents: the one service every transport uses, put together from its parts: which document a slug
 * or room names and who may do what with it (resolve.ts, deciding through access.ts), the catalog
 * (catalog.ts: create, import, list, share, flags, delete), exports (export-markdown.ts) and the stored
 * content (stored-content.ts). Imports, large exports and the edits of restores and reverts are worked out
 * on the documents' worker (worker/pool.ts).
 */
import type { FirstScreen, MarkdownPrefix, SerializeOptions } from '@collab/doc-schema'
import { documentStructs, FRAGMENT_NAME, ok, type Result } from '@collab/doc-schema'
import * as Y from 'yjs'
import type { AccessChanges } from '../access-changes.ts'
import type { PrismaClient } from '../db/generated/client.ts'
import { COMPARE_INLINE_STRUCTS, HISTORY_INLINE_BYTES } from '../limits.ts'
import { createCatalog } from './catalog.ts'
import { createStoredCompaction } from './compact-stored.ts'
import { createMarkdownExport, EXPORT_INLINE_BYTES } from './export-markdown.ts'
import { createHistory } from './history.ts'
import { createBeforeVersions } from './history-before.ts'
import { diffSinceState, type SectionChange } from './history-diff.ts'
import { planUndo, type UndoInput, type UndoPlan } from './history-undo.ts'
import { createResolver } from './resolve.ts'
import { createStoredContent } from './stored-content.ts'
import { applyStored, type StoredParts } from './stored-parts.ts'
import { type Derived, type DeriveInput, deriveStored } from './worker/derive.ts'
import { type FirstScreenLimits, renderFirstScreen } from './worker/first-screen.ts'
import { LiveCopies } from './worker/live-copies.ts'
import { WorkerPool } from './worker/pool.ts'
import type { LiveReadInput, ReadInput } from './worker/read.ts'
import type { SectionAsk, SectionReadResult } from './worker/read-section.ts'
import type { SyncAnswerInput } from './worker/sync-answer.ts'

/** What deriveStored is asked: heading ids, the title and search text (at most `maxTextChars`), or the outline. */
type DeriveRequest = { what: 'headings' } | { what: 'search'; maxTextChars: number } | { what: 'outline' }

/** `changes`: told of every share, unshare, flag change and delete, so open connections follow them. */
export function createDocumentsService(prisma: PrismaClient, changes?: AccessChanges) {
  /** Imports and large exports run on a worker thread (worker/pool.ts), one at a time, a share per user. */
  const jobs = new WorkerPool()
  const liveCopies = new LiveCopies()
  const { accessChanged, forgetResolutions, ...resolver } = createResolver(prisma, changes)
  const catalog = createCatalog(prisma, { jobs, accessChanged })
  const stored = createStoredContent(prisma, { forgetResolutions })
  const exports = createMarkdownExport({
    jobs,
    loadStored: stored.loadStored,
    bySlugForAdmin: catalog.bySlugForAdmin,
  })
  const history = createHistory(prisma, stored)
  const storedCompaction = createStoredCompaction(prisma, { jobs, forgetResolutions })
  return {
    ...resolver,
    ...catalog,
    ...exports,
    ...stored,
    ...history,
    ...storedCompaction,
    /**
     * A version named on request (history.ts), of the stored content merged under the state row's lock:
     * decoded here when small (EXPORT_INLINE_BYTES, as an export), else merged on the documents' worker
     * as a compaction that takes it (compact-stored.ts; its outline with section totals, its summary
     * against the newest version): decoding the state, the newest version and the outline here held the
     * event loop ~160-210 ms in one piece for a 5 MB document. Null: gone.
     */
    async saveNamedVersion(room: string, name: string): Promise<{ id: bigint } | null> {
      const [row] = await prisma.$queryRaw<Array<{ id: string; bytes: number | bigint }>>`
        SELECT d.id::text AS id,
               COALESCE(s.byte_size, 0) + COALESCE((SELECT sum(u.byte_size) FROM document_updates u
                                                     WHERE u.document_id = d.id), 0) AS bytes
          FROM documents d LEFT JOIN document_states s ON s.document_id = d.id
         WHERE d.room = ${room} AND d.deleted_at IS NULL`
      if (!row || Number(row.bytes) <= EXPORT_INLINE_BYTES) return history.saveNamedVersion(room, name)
      const newest = await history.newestVersionState(row.id)
      const done = await storedCompaction.compactStored(row.id, {
        maxTextChars: 0,
        version: { request: { reason: 'named', name }, base: newest?.state ?? null },
      })
      if (done?.versionId === undefined)
        throw new Error(`the named version of ${row.id} was not taken: its stored content kept changing`)
      return { id: done.versionId }
    },
    ...createBeforeVersions(prisma, { jobs }),
    /**
     * A restore's or revert's edit (history-actions.ts), worked out on the worker with `user`'s share, or
     * here when its states are small (HISTORY_INLINE_BYTES).
     */
    async planUndo(user: string, input: UndoInput): Promise<Result<UndoPlan>> {
      const bytes = [input.live, input.base, ...input.steps.map((step) => step.state)].reduce(
        (sum, state) => sum + (typeof state === 'string' ? (state.length * 3) / 4 : (state?.byteLength ?? 0)),
        0,
      )
      return bytes <= HISTORY_INLINE_BYTES ? planUndo(input) : jobs.undo(user, input)
    },
    /**
     * A large stored document as parts to load one at a time (worker/split.ts), split on the worker as
     * the server's own job; a refusal (the queue is full, the deadline passed) loads it whole instead.
     */
    splitStored(documentId: string, stored: { snapshot: Uint8Array | string | null; updates: Uint8Array[] }) {
      return jobs.split(documentId, { snapshot: stored.snapshot, updates: stored.updates })
    },

    /**
     * An editor's sync answer for a large live document, from the updates it was built from
     * (worker/sync-answer.ts), on the worker's short lane for `user`; refused when the lane is full
     * (Hocuspocus answers it then).
     */
    syncAnswer(user: string, input: SyncAnswerInput) {
      return jobs.syncAnswer(user, input)
    },

    /** Jobs running or waiting on the documents' worker (long) and its short lane (the metrics' gauges). */
    workerJobs(): { long: number; short: number } {
      return jobs.jobs
    },

    /**
     * The first screen of stored content (its web page's, http/first-screen.ts): decoded here when small
     * (EXPORT_INLINE_BYTES, as an export), else on the worker's short lane for `user`
     * (FIRST_SCREEN_JOB_MS); refused when the lane is full or the job is too slow.
     */
    async firstScreenOf(
      user: string,
      stored: StoredParts,
      limits: FirstScreenLimits,
    ): Promise<Result<FirstScreen>> {
      const bytes = (stored.snapshot?.byteLength ?? 0) + stored.updateBytes
      return bytes <= EXPORT_INLINE_BYTES
        ? ok(renderFirstScreen(stored, limits))
        : jobs.firstScreen(user, stored, limits)
    },

    /**
     * A stored document's top-level heading ids or title and search text (worker/derive.ts), read by the
     * server for itself: decoded here when small (EXPORT_INLINE_BYTES), else on the worker as the server's
     * own job; refused when its queue is full or the job too slow (the caller says what then).
     */
    async deriveStored(stored: StoredParts, input: DeriveRequest): Promise<Result<Derived>> {
      const bytes = (stored.snapshot?.byteLength ?? 0) + stored.updateBytes
      const job = { ...input, stored } as DeriveInput
      return bytes <= EXPORT_INLINE_BYTES ? ok(deriveStored(job)) : jobs.derive(stored.documentId, job)
    },

    /**
     * The start of a document's Markdown for `user`'s whole read, rendered on the worker (worker/read.ts)
     * with their share: the caller decides which reads are dear enough (modules/mcp/infra/documents.ts).
     */
    readPrefixOf(user: string, input: ReadInput): Promise<Result<MarkdownPrefix>> {
      return jobs.readPrefix(user, input)
    },

    /**
     * The same for a live document, on its copy kept on the worker (worker/live-copies.ts): only what
     * changed since the copy's last read is encoded here and sent.
     */
    readLivePrefixOf(
      user: string,
      doc: Y.Doc,
      read: { minChars: number; opts: SerializeOptions },
    ): Promise<Result<MarkdownPrefix>> {
      return liveCopies.readPrefix(doc, read.minChars, read.opts, (input) => jobs.readPrefix(user, input))
    },

    /**
     * A section read of `doc` rendered on the worker (worker/read-section.ts) with `user`'s share of whole
     * reads: on a live document's copy there (`keep`), sent only what changed since; else (a cold read's
     * decoded content) on a copy of its whole state for this read alone.
     */
    readSectionOf(
      user: string,
      doc: Y.Doc,
      ask: SectionAsk,
      keep: boolean,
    ): Promise<Result<SectionReadResult>> {
      return liveCopies.readSection(doc, ask, keep, (input) => jobs.readPrefix(user, input))
    },

    /**
     * What changed in the document since the version whose state is `since` (changes_since and the web
     * page's changes, history-diff.ts `diffSinceState`), for `user`: compared here when both are small
     * (HISTORY_INLINE_BYTES, COMPARE_INLINE_STRUCTS), else on the documents' worker with the user's share
     * of whole reads: a live document (`live`, this instance's) on its copy there, sent only what changed
     * since; stored content on a copy of its snapshot and log made for this comparison alone, never decoded
     * here. Comparing a 5 MB document here held the event loop 98-171 ms. `since` may be transferred to
     * the worker (empty after). `beforeDecode`: awaited before stored content is decoded or sent (a caller
     * gone stops there). Null when the document is gone.
     */
    async changesSince(
      user: string,
      room: string,
      since: Uint8Array | null,
      live?: Y.Doc,
      beforeDecode?: () => Promise<void>,
    ): Promise<Result<SectionChange[]> | null> {
      const run = (input: LiveReadInput) => jobs.readPrefix(user, input)
      const sinceBytes = since?.byteLength ?? 0
      if (live) {
        if (documentStructs(live) <= COMPARE_INLINE_STRUCTS && sinceBytes <= HISTORY_INLINE_BYTES)
          return ok(diffSinceState(since, live.getXmlFragment(FRAGMENT_NAME)))
        return liveCopies.readChanges(live, since, run)
      }
      const content = await stored.loadStored(room)
      if (!content) return null
      await beforeDecode?.()
      if ((content.snapshot?.byteLength ?? 0) + content.updateBytes + sinceBytes <= HISTORY_INLINE_BYTES) {
        const doc = new Y.Doc()
        try {
          applyStored(doc, content)
          return ok(diffSinceState(since, doc.getXmlFragment(FRAGMENT_NAME)))
        } finally {
          doc.destroy()
        }
      }
      const reply = await run({
        key: '',
        base: null,
        update: content.snapshot ?? new Uint8Array([0, 0]), // an update of nothing: no snapshot yet
        more: content.updates,
        drop: [],
        changesSince: since,
      })
      return reply.kind === 'error' ? reply : ok(reply.value.changes as SectionChange[])
    },

    /** Bytes the live documents' whole reads sent to the worker: whole states and changes (tests). */
    liveReadBytes(): { whole: number; changes: number } {
      return { ...liveCopies.sent }
    },

    /** Ends the documents' worker (shutdown); imports and exports still running are refused. */
    close(): void {
      jobs.close()
    },
  }
}

export type DocumentsService = ReturnType<typeof createDocumentsService>
