/**
 * Live-or-stored document access. Reads use the document Hocuspocus holds in memory when it is loaded
 * (so they see what editors typed a moment ago), and otherwise decode the stored state into a throwaway
 * Y.Doc: a cold read never loads the document into Hocuspocus, so nothing is kept or stored on unload.
 */
import { FRAGMENT_NAME, liveOutline, type OutlineNode, readOutline } from '@collab/doc-schema'
import type { Hocuspocus } from '@hocuspocus/server'
import * as Y from 'yjs'
import type { DocumentsService } from '../../../documents/service.ts'
import { applyStored } from '../../../documents/stored-parts.ts'
import { stopIfCancelled } from './cancel.ts'

export type ReadableDocument = {
  fragment: Y.XmlFragment
  /** Where the content came from; logged, never shown to the model. */
  source: 'live' | 'stored'
  /** Frees the throwaway doc of a stored read; a no-op for a live one. */
  release(): void
}

export type DocumentReader = {
  /**
   * The document's content, or null when it has no stored row any more (deleted meanwhile). With
   * `call.signal`: a caller gone while the stored state loaded stops here (CallCancelled) before it is
   * decoded; `call.beforeDecode` is the test seam awaited just before that check.
   */
  open(
    room: string,
    call?: { signal?: AbortSignal; beforeDecode?: () => Promise<void> },
  ): Promise<ReadableDocument | null>
  /**
   * Only the outline (equal to `readOutline` of the content): the live document's memo, kept current as
   * it changes (only edited sections are re-hashed); else the outline the store step saved with the state
   * (no state read or decoded) when it holds section sizes; else by decoding the state. Null when the
   * document is gone.
   */
  openOutline(room: string): Promise<OutlineNode[] | null>
}

export function createDocumentReader(deps: {
  hocuspocus: Pick<Hocuspocus, 'documents'>
  documents: Pick<DocumentsService, 'loadStored' | 'loadOutline'>
}): DocumentReader {
  const reader: DocumentReader = {
    async open(room, call = {}) {
      const { signal } = call
      stopIfCancelled(signal)
      const live = deps.hocuspocus.documents.get(room)
      if (live) {
        return { fragment: live.getXmlFragment(FRAGMENT_NAME), source: 'live', release() {} }
      }
      const stored = await deps.documents.loadStored(room)
      if (!stored) return null
      // Decoding a large state is the costly step of a cold read: not for a caller that went away.
      await call.beforeDecode?.()
      stopIfCancelled(signal)
      const doc = new Y.Doc()
      applyStored(doc, stored)
      return { fragment: doc.getXmlFragment(FRAGMENT_NAME), source: 'stored', release: () => doc.destroy() }
    },

    async openOutline(room) {
      const live = deps.hocuspocus.documents.get(room)
      // The memo shared with the store step (one per live fragment, dropped with the document).
      if (live) return liveOutline(live.getXmlFragment(FRAGMENT_NAME))
      const stored = await deps.documents.loadOutline(room)
      if (!stored) return null
      if (stored.outline && hasSizes(stored.outline)) return stored.outline
      // Stored before outlines were, or before they held sizes: decode it.
      const content = await reader.open(room)
      if (!content) return null
      try {
        return readOutline(content.fragment)
      } finally {
        content.release()
      }
    },
  }
  return reader
}

/** Whether every node of a stored outline has its size (an outline stored before sizes were counted has none). */
function hasSizes(roots: readonly OutlineNode[]): boolean {
  const stack = [...roots]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (!Number.isSafeInteger(node.size) || node.size < 0) return false
    if (Array.isArray(node.children)) stack.push(...node.children)
  }
  return true
}
