/**
 * The first screen of a document, for the web page `/d/<slug>` to be served with (web.ts): a person reads
 * the top of a large document at once, while the page's script loads, the document syncs and the editor
 * builds (seconds for a 1 MiB document on a loaded machine: docs/web.md, "Opening a large document"). The
 * page shows it read-only and replaces it with the live editor once that holds the synced document.
 *
 * Only for a reader (the same `resolve` as GET /api/documents/:slug; anything else gets no screen and the
 * page's script says why). From the live document when this instance holds it (what editors typed a moment
 * ago), else from the stored state: decoded here when it is small (EXPORT_INLINE_BYTES, as an export),
 * on the documents' worker's short lane when larger (decoding it here would hold every editor of this
 * instance), when the lane has room, within FIRST_SCREEN_JOB_MS; otherwise no first screen (the page waits
 * for its editor). Bounded by FIRST_SCREEN_BLOCKS and FIRST_SCREEN_WORK.
 */
import { type FirstScreen, FRAGMENT_NAME, firstScreenHtml } from '@collab/doc-schema'
import type * as Y from 'yjs'
import type { Principal } from '../auth/tokens.ts'
import type { DocumentsService } from '../documents/service.ts'
import { FIRST_SCREEN_BLOCKS, FIRST_SCREEN_WORK } from '../limits.ts'
import type { Logger } from '../logger.ts'

export type FirstScreenPage = {
  title: string
  /** The first blocks as HTML (every text and attribute escaped: `firstScreenHtml`). */
  html: string
  /** Blocks were left out: the page says the rest is coming. */
  more: boolean
}

export type FirstScreenOf = (slug: string, principal: Principal) => Promise<FirstScreenPage | null>

export function createFirstScreen(deps: {
  documents: Pick<DocumentsService, 'resolve' | 'loadStored' | 'firstScreenOf'>
  /** The document this instance holds live, if any. */
  live: (room: string) => Y.Doc | undefined
  logger: Logger
}): FirstScreenOf {
  const limits = { maxBlocks: FIRST_SCREEN_BLOCKS, maxWork: FIRST_SCREEN_WORK }
  return async (slug, principal) => {
    try {
      const resolved = await deps.documents.resolve(slug, principal)
      if (resolved.kind === 'error') return null
      const { title, room } = resolved.value.document
      // Nothing to show (an empty document, or one still loading into Hocuspocus): no screen rather than
      // an empty page that would look like an empty document.
      const page = (screen: FirstScreen) =>
        screen.blocks === 0 ? null : { title, html: screen.html, more: screen.more }
      const live = deps.live(room)
      if (live) return page(firstScreenHtml(live.getXmlFragment(FRAGMENT_NAME), limits))
      const stored = await deps.documents.loadStored(room)
      if (!stored) return null
      const screen = await deps.documents.firstScreenOf(principal.user.id, stored, limits)
      return screen.kind === 'ok' ? page(screen.value) : null
    } catch (error) {
      // The page works without it (the editor shows the document once synced): never an error page.
      deps.logger.warn({ err: error, slug }, 'first screen not rendered')
      return null
    }
  }
}
