/**
 * Gives sizes to stored outlines written before they were counted. A cold `get_outline` answers from
 * `document_states.outline` only when every node has its size (modules/mcp/infra/documents.ts), and
 * otherwise decodes the whole state; only a compaction rewrites that column, and a document nobody edits
 * is never compacted, so after an upgrade every old document would pay a full decode per cold outline
 * for ever. At start, each such outline is derived again from its snapshot (decoded as a cold read
 * decodes it) and written back, one document at a time with a pause between, so a large backlog never
 * holds the server's thread (the decode runs there) for long. Runs after the search backfill, not beside it.
 *
 * Finding them: no index can say which outlines lack sizes, so document_states is walked once per start
 * in primary-key order, OUTLINE_BACKFILL_SCAN rows per query (each query reads at most that many rows and
 * returns one flag per row, a JSON path check of the outline: null, or a node without a numeric size).
 * A database whose outlines all have sizes costs rows / OUTLINE_BACKFILL_SCAN short queries, with pauses.
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
import { applyStored } from './service.ts'
import { writeStoredOutline } from './store.ts'

/** Rows of document_states read per query while looking for outlines without sizes. */
export const OUTLINE_BACKFILL_SCAN = 200
/** Pause after each document rewritten, and after each scan query (ms): the server answers in between. */
export const OUTLINE_BACKFILL_PAUSE_MS = 20

export type OutlineBackfill = {
  /** Resolves with the number of outlines rewritten once none is left (or the backfill was stopped). */
  done: Promise<number>
  stop(): Promise<void>
}

/**
 * True for an outline a cold read would not use: none, or a node (at any depth) without a size. In lax
 * mode a node lacking `size` gives an empty comparison, which is false, so the negation holds for it.
 */
const LACKS_SIZES = Prisma.sql`s.outline IS NULL
  OR jsonb_path_exists(s.outline, 'lax $.** ? (@.sectionId.type() == "string" && !(@.size >= 0))')`

export function startOutlineBackfill(deps: {
  prisma: PrismaClient
  logger: Logger
  /** Started once this settles (the search backfill), so the two never decode documents side by side. */
  after?: Promise<unknown>
}): OutlineBackfill {
  let stopped = false
  const run = async (): Promise<number> => {
    await deps.after
    let rewritten = 0
    let skipped = 0
    // Keyset by id: a document that cannot be rewritten (changed meanwhile, a failure) is not asked again.
    let after = '00000000-0000-0000-0000-000000000000'
    while (!stopped) {
      const rows = await deps.prisma.$queryRaw<Array<{ id: string; stale: boolean }>>`
        SELECT s.document_id::text AS id,
               (d.deleted_at IS NULL AND (${LACKS_SIZES})
                AND NOT EXISTS (SELECT 1 FROM document_updates u WHERE u.document_id = s.document_id)) AS stale
          FROM document_states s JOIN documents d ON d.id = s.document_id
         WHERE s.document_id > ${after}::uuid
         ORDER BY s.document_id LIMIT ${OUTLINE_BACKFILL_SCAN}`
      if (rows.length === 0) break
      after = rows[rows.length - 1]!.id
      for (const row of rows) {
        if (stopped) break
        if (!row.stale) continue
        if (await rewrite(row.id)) rewritten++
        else skipped++
        await Bun.sleep(OUTLINE_BACKFILL_PAUSE_MS)
      }
      if (rows.length < OUTLINE_BACKFILL_SCAN) break
      await Bun.sleep(OUTLINE_BACKFILL_PAUSE_MS)
    }
    if (rewritten > 0 || skipped > 0)
      deps.logger.info({ rewritten, skipped }, 'stored outlines rewritten with section sizes')
    return rewritten
  }

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

  const done = run().catch((error: Error) => {
    deps.logger.warn(
      { err: error.message },
      'outline backfill stopped by a failure; it runs again at the next start',
    )
    return 0
  })
  return {
    done,
    async stop() {
      stopped = true
      await done
    },
  }
}
