/**
 * Fills the search columns of documents stored before they existed. `documents.search_text` (terms as
 * written) and `search_stem` (other forms of a word) came with migrations that cannot compute them (the
 * text lives in the Yjs state); a document edited since has them from its title and search refresh, one
 * never edited again would lack them for ever. At start, each such document is read as a cold read is (the snapshot,
 * then the update log) and its title and search columns written, one at a time with a pause between, so
 * a large backlog never holds the server (on PGlite, its only thread) for long (the loop: paced-pass.ts).
 * Documents loaded by Hocuspocus are read live.
 */
import { FRAGMENT_NAME, readPlainText, readTitle } from '@collab/doc-schema'
import * as Y from 'yjs'
import type { PrismaClient } from '../db/generated/client.ts'
import { MAX_FIND_TEXT_CHARS } from '../limits.ts'
import type { Logger } from '../logger.ts'
import { type PacedPass, startPacedPass } from './paced-pass.ts'
import type { DocumentsService } from './service.ts'
import { writeDerived } from './store.ts'
import { applyStored } from './stored-parts.ts'

/** Documents asked for per query while filling. */
export const SEARCH_BACKFILL_BATCH = 20
/** Pause after each document (ms): the server answers its editors and agents in between. */
export const SEARCH_BACKFILL_PAUSE_MS = 20

export type SearchBackfill = PacedPass

export function startSearchBackfill(deps: {
  prisma: PrismaClient
  documents: Pick<DocumentsService, 'loadStored'>
  /** A loaded document's live content, when Hocuspocus holds it. */
  live: (room: string) => Y.Doc | undefined
  logger: Logger
}): SearchBackfill {
  const fill = async (row: { id: string; room: string }): Promise<boolean> => {
    const live = deps.live(row.room)
    const doc = live ?? new Y.Doc()
    try {
      if (!live) {
        const stored = await deps.documents.loadStored(row.room)
        if (!stored) return false
        applyStored(doc, stored)
      }
      const fragment = doc.getXmlFragment(FRAGMENT_NAME)
      await writeDerived(deps.prisma, row.id, {
        title: readTitle(fragment),
        text: readPlainText(fragment, MAX_FIND_TEXT_CHARS),
      })
      return true
    } catch (error) {
      // Logged by id and reason only (never text); the document keeps the older word search.
      deps.logger.warn(
        { documentId: row.id, err: (error as Error).message },
        'search backfill: document skipped',
      )
      return false
    } finally {
      if (!live) doc.destroy()
    }
  }

  return startPacedPass({
    name: 'search backfill',
    logger: deps.logger,
    batch: SEARCH_BACKFILL_BATCH,
    pauseMs: SEARCH_BACKFILL_PAUSE_MS,
    next: (afterId, batch) => deps.prisma.$queryRaw<Array<{ id: string; room: string }>>`
      SELECT id::text AS id, room FROM documents
       WHERE (search_text IS NULL OR search_stem IS NULL) AND deleted_at IS NULL AND id > ${afterId}::uuid
       ORDER BY id LIMIT ${batch}`,
    handle: fill,
    report({ done }) {
      if (done > 0)
        deps.logger.info({ filled: done }, 'search columns filled for documents stored before them')
    },
  })
}
