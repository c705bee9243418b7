/**
 * Fills the search chunks (search-chunks.ts) of documents stored before they existed: every document has
 * at least one (its title), so one without any was written before the migration that brought them, which
 * cannot compute them (the text lives in the Yjs state); a document edited since has them from its title
 * and search refresh, one never edited again would lack them for ever. At start, each such document is read as a cold read is (the snapshot,
 * then the update log) and its title and search columns written, one at a time with a pause between, so
 * a large backlog never holds the server (on PGlite, its only thread) for long (the loop: paced-pass.ts).
 * Documents loaded by Hocuspocus are read live; a large stored one is decoded on the documents' worker
 * (deriveStored), and skipped when the worker refuses (its queue is full; the next start fills it).
 */
import { FRAGMENT_NAME, readPlainText, readTitle } from '@collab/doc-schema'
import type * as Y from 'yjs'
import type { PrismaClient } from '../db/generated/client.ts'
import { CONTENT_TRANSACTION } from '../db/transactions.ts'
import { MAX_FIND_TEXT_CHARS } from '../limits.ts'
import type { Logger } from '../logger.ts'
import { type PacedPass, startPacedPass } from './paced-pass.ts'
import type { DocumentsService } from './service.ts'
import { writeDerived } from './store.ts'

/** Documents asked for per query while filling. */
export const SEARCH_BACKFILL_BATCH = 20
/** Pause after each document (ms): the server answers its editors and agents in between. */
export const SEARCH_BACKFILL_PAUSE_MS = 20

export type SearchBackfill = PacedPass

export function startSearchBackfill(deps: {
  prisma: PrismaClient
  documents: Pick<DocumentsService, 'loadStored' | 'deriveStored'>
  /** A loaded document's live content, when Hocuspocus holds it. */
  live: (room: string) => Y.Doc | undefined
  logger: Logger
}): SearchBackfill {
  const fill = async (row: { id: string; room: string }): Promise<boolean> => {
    try {
      const derived = await derivedFor(row.room)
      if (!derived) return false
      await deps.prisma.$transaction((tx) => writeDerived(tx, row.id, derived), CONTENT_TRANSACTION)
      return true
    } catch (error) {
      // Logged by id and reason only (never text); the document keeps the older word search.
      deps.logger.warn(
        { documentId: row.id, err: (error as Error).message },
        'search backfill: document skipped',
      )
      return false
    }
  }

  /** The title and search text: the live document's, or the stored one's (decoded where its size says). */
  const derivedFor = async (room: string): Promise<{ title: string; text: string } | null> => {
    const live = deps.live(room)
    if (live) {
      const fragment = live.getXmlFragment(FRAGMENT_NAME)
      return { title: readTitle(fragment), text: readPlainText(fragment, MAX_FIND_TEXT_CHARS) }
    }
    const stored = await deps.documents.loadStored(room)
    if (!stored) return null
    const derived = await deps.documents.deriveStored(stored, {
      what: 'search',
      maxTextChars: MAX_FIND_TEXT_CHARS,
    })
    if (derived.kind === 'error') throw new Error(derived.message)
    return derived.value as { title: string; text: string }
  }

  return startPacedPass({
    name: 'search backfill',
    logger: deps.logger,
    batch: SEARCH_BACKFILL_BATCH,
    pauseMs: SEARCH_BACKFILL_PAUSE_MS,
    next: (afterId, batch) => deps.prisma.$queryRaw<Array<{ id: string; room: string }>>`
      SELECT id::text AS id, room FROM documents
       WHERE deleted_at IS NULL AND id > ${afterId}::uuid
         AND NOT EXISTS (SELECT 1 FROM document_search_chunks c WHERE c.document_id = documents.id)
       ORDER BY id LIMIT ${batch}`,
    handle: fill,
    report({ done }) {
      if (done > 0)
        deps.logger.info({ filled: done }, 'search columns filled for documents stored before them')
    },
  })
}
