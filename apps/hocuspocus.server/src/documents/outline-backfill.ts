/**
 * Gives sizes to stored outlines written before they were counted. A cold `get_outline` answers from
 * `document_states.outline` only when every node has its size (modules/mcp/infra/documents.ts), and
 * otherwise decodes the whole state; only a compaction rewrites that column, and a document nobody edits
 * is never compacted, so after an upgrade every old document would pay a full decode per cold outline
 * for ever. At start, each such outline is derived again from its snapshot and written back, one
 * document at a time with a pause between. A snapshot larger than EXPORT_INLINE_BYTES is read in slices
 * and decoded on the documents' worker (DocumentsService.deriveStored), as a cold read of it is: the
 * decode on the server's thread held it as long as the state's size. A snapshot merged alone while its
 * document was loaded (`LIVE_MERGE_STRUCTS`) has no outline until the compaction after its unload, and a
 * stop before that leaves it to this pass: ~0.2 s for a 4.4 MB state of 400,000 items, seconds for one
 * of 22 MB. When the worker's queue refuses, the document waits for the next start. Runs after the
 * search backfill, not beside it.
 *
 * Finding them: a partial index holds exactly the outlines a cold read would not use (null, or a node
 * without a numeric size; migration outline_lacks_sizes, `LACKS_SIZES` below is its predicate), so each
 * start asks it for candidates in key order, OUTLINE_BACKFILL_BATCH per query. A database whose outlines
 * all have sizes costs one index probe (before the index: every row's outline read, ~2 s of queries
 * over 20,000 documents). Its price is paid when a row is written (each compaction): the predicate walks
 * the new outline, and an outline change is no longer a HOT update; for the ~260 KB outline of a 5 MiB
 * document that was 2-5 ms more per write, measured on PGlite and PostgreSQL.
 *
 * Left alone: deleted documents, and snapshots with updates logged after them (a cold read does not use
 * their stored outline, and the compaction that empties the log writes a new one). A live document's
 * snapshot is handled like any other (the outline describes the snapshot, not the live copy), and the
 * write is conditional on the snapshot being unchanged since it was read (`writeStoredOutline`).
 */
import type { OutlineNode } from '@collab/doc-schema'
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import type { Logger } from '../logger.ts'
import { type PacedPass, startPacedPass } from './paced-pass.ts'
import type { DocumentsService } from './service.ts'
import { writeStoredOutline } from './store.ts'

/** Outlines to rewrite asked for per query. */
export const OUTLINE_BACKFILL_BATCH = 200
/** Pause after each document rewritten (ms): the server answers in between. */
export const OUTLINE_BACKFILL_PAUSE_MS = 20

export type OutlineBackfill = PacedPass

/**
 * True for an outline a cold read would not use: none, or a node (at any depth) without a size. In lax
 * mode a node lacking `size` gives an empty comparison, which is false, so the negation holds for it.
 * The same expression as the partial index document_states_outline_lacks_sizes_idx (written here as the
 * migration wrote it, inline rather than as parameters): PostgreSQL uses a partial index only for a query
 * whose condition implies the index's.
 */
const LACKS_SIZES = Prisma.sql`(s.outline IS NULL
  OR jsonb_path_exists(s.outline, 'lax $.** ? (@.sectionId.type() == "string" && !(@.size >= 0))'))`

/**
 * Outlines to rewrite with ids above `afterId`, at most `batch`, in id order: read from the partial
 * index alone, then the deleted and the logged-after ones left out.
 */
export function outlineCandidates(afterId: string, batch: number): Prisma.Sql {
  return Prisma.sql`
    SELECT s.document_id::text AS id
      FROM document_states s JOIN documents d ON d.id = s.document_id
     WHERE ${LACKS_SIZES} AND s.document_id > ${afterId}::uuid AND d.deleted_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM document_updates u WHERE u.document_id = s.document_id)
     ORDER BY s.document_id LIMIT ${batch}`
}

export function startOutlineBackfill(deps: {
  prisma: PrismaClient
  documents: Pick<DocumentsService, 'loadStored' | 'deriveStored'>
  logger: Logger
  /** Started once this settles (the search backfill), so the two never decode documents side by side. */
  after?: Promise<unknown>
}): OutlineBackfill {
  const rewrite = async (documentId: string): Promise<boolean> => {
    // The time the snapshot was stored, read first: the write is conditional on it, so a snapshot
    // stored again meanwhile (read below or not) is left to the compaction that stored it.
    const rows = await deps.prisma.$queryRaw<Array<{ room: string; storedAt: Date }>>`
      SELECT d.room, s.updated_at AS "storedAt"
        FROM document_states s JOIN documents d ON d.id = s.document_id
       WHERE s.document_id = ${documentId}::uuid`
    const row = rows[0]
    if (!row) return false
    try {
      const stored = await deps.documents.loadStored(row.room)
      if (!stored?.snapshot) return false
      // The snapshot alone: the outline describes it (an update logged since is not in it).
      const derived = await deps.documents.deriveStored(
        { documentId, snapshot: stored.snapshot, updates: [], updateBytes: 0 },
        { what: 'outline' },
      )
      if (derived.kind === 'error') {
        deps.logger.debug(
          { documentId, reason: derived.message },
          'outline backfill: left for the next start',
        )
        return false
      }
      return await writeStoredOutline(deps.prisma, documentId, derived.value as OutlineNode[], row.storedAt)
    } catch (error) {
      // Logged by id and reason only (never text); a cold read keeps decoding this document.
      deps.logger.warn({ documentId, err: (error as Error).message }, 'outline backfill: document skipped')
      return false
    }
  }

  return startPacedPass({
    name: 'outline backfill',
    logger: deps.logger,
    after: deps.after,
    batch: OUTLINE_BACKFILL_BATCH,
    pauseMs: OUTLINE_BACKFILL_PAUSE_MS,
    next: (afterId, batch) => deps.prisma.$queryRaw<Array<{ id: string }>>(outlineCandidates(afterId, batch)),
    handle: (row) => rewrite(row.id),
    report({ done, skipped }) {
      if (done > 0 || skipped > 0)
        deps.logger.info({ rewritten: done, skipped }, 'stored outlines rewritten with section sizes')
    },
  })
}
