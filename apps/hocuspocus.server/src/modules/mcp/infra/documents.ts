/**
 * Live-or-stored document access. Reads use the document Hocuspocus holds in memory when it is loaded
 * (so they see what editors typed a moment ago), and otherwise decode the stored state into a throwaway
 * Y.Doc: a cold read never loads the document into Hocuspocus, so nothing is kept or stored on unload.
 */
import { FRAGMENT_NAME } from '@collab/doc-schema'
import type { Hocuspocus } from '@hocuspocus/server'
import * as Y from 'yjs'
import type { DocumentsService } from '../../../documents/service.ts'

export type ReadableDocument = {
  fragment: Y.XmlFragment
  /** Where the content came from; logged, never shown to the model. */
  source: 'live' | 'stored'
  /** Frees the throwaway doc of a stored read; a no-op for a live one. */
  release(): void
}

export type DocumentReader = {
  /** The document's content, or null when it has no stored row any more (deleted meanwhile). */
  open(room: string): Promise<ReadableDocument | null>
}

export function createDocumentReader(deps: {
  hocuspocus: Pick<Hocuspocus, 'documents'>
  documents: Pick<DocumentsService, 'loadState'>
}): DocumentReader {
  return {
    async open(room) {
      const live = deps.hocuspocus.documents.get(room)
      if (live) return { fragment: live.getXmlFragment(FRAGMENT_NAME), source: 'live', release() {} }
      const stored = await deps.documents.loadState(room)
      if (!stored) return null
      const doc = new Y.Doc()
      if (stored.state) Y.applyUpdate(doc, stored.state)
      return { fragment: doc.getXmlFragment(FRAGMENT_NAME), source: 'stored', release: () => doc.destroy() }
    },
  }
}
