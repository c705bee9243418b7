/**
 * Gives sizes to stored outlines written before they were counted. A cold `get_outline` answers from
 * `document_states.outline` only when every node has its size (modules/mcp/infra/documents.ts), and
 * otherwise decodes the whole state; only a compaction rewrites that column, and a document nobody edits
 * is never compacted, so after an upgrade every old document would pay a full decode per cold outline
 * for ever. At start, each such outline is derived again from its snapshot (decoded as a cold read
 * decodes it) and written back, one document at a time with a pause between, so a large backlog never
 * holds the server's thread (the decode runs there) for long. Runs after the search backfill, not beside it.
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
import { FRAGMENT_NAME, readOutline } from '@collab/doc-schema'
import * as Y from 'yjs'
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import type { Logger } from '../logger.ts'
import { type PacedPass, startPacedPass } from './paced-pass.ts'
import { writeStoredOutline } from './store.ts'
import { applyStored } from './stored-parts.ts'

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
  logger: Logger
  /** Started once this settles (the search backfill), so the two never decode documents side by side. */
  after?: Promise<unknown>
}): OutlineBackfill {
  const rewrite = async (documentId: string): Promise<boolean> => {
    // The snapshot and the time it was stored, read together: the write is conditional on that time.
    const rows = await deps.prisma.$queryRaw<Array<{ state: string; storedAt: Date }>>`
      SELECT encode(state, 'base64') AS state, updated_at AS "storedAt"
        FROM document_states WHERE document_id = ${documentId}::uuid`
    const row = rows[0]
    if (!row) return false
    const doc = new Y.Doc()
    try {
      applyStored(doc, { snapshot: new Uint8Array(Buffer.from(row.state, 'base64')), updates: [] })
      const outline = readOutline(doc.getXmlFragment(FRAGMENT_NAME))
      return await writeStoredOutline(deps.prisma, documentId, outline, row.storedAt)
    } catch (error) {
      // Logged by id and reason only (never text); a cold read keeps decoding this document.
      deps.logger.warn({ documentId, err: (error as Error).message }, 'outline backfill: document skipped')
      return false
    } finally {
      doc.destroy()
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
