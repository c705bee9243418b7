/**
 * Live-or-stored document access. Reads use the document Hocuspocus holds in memory when it is loaded
 * (so they see what editors typed a moment ago), and otherwise decode the stored state into a throwaway
 * Y.Doc: a cold read never loads the document into Hocuspocus, so nothing is kept or stored on unload.
 */
import {
  createOutlineMemo,
  FRAGMENT_NAME,
  type OutlineMemo,
  type OutlineNode,
  readOutline,
} from '@collab/doc-schema'
import type { Hocuspocus } from '@hocuspocus/server'
import * as Y from 'yjs'
import type { DocumentsService } from '../../../documents/service.ts'

export type ReadableDocument = {
  fragment: Y.XmlFragment
  /** Where the content came from; logged, never shown to the model. */
  source: 'live' | 'stored'
  /**
   * The outline (equal to `readOutline(fragment)`). For a live document it comes from a memo kept current
   * as the document changes, so a warm outline re-hashes only the sections edited since the last call.
   */
  outline(): OutlineNode[]
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
  // One memo per live Y.Doc: it goes with the document when Hocuspocus unloads it (weak keys).
  const memos = new WeakMap<Y.Doc, OutlineMemo>()
  const memoOf = (doc: Y.Doc) => {
    let memo = memos.get(doc)
    if (!memo) {
      memo = createOutlineMemo(doc.getXmlFragment(FRAGMENT_NAME))
      memos.set(doc, memo)
    }
    return memo
  }
  return {
    async open(room) {
      const live = deps.hocuspocus.documents.get(room)
      if (live) {
        return {
          fragment: live.getXmlFragment(FRAGMENT_NAME),
          source: 'live',
          outline: () => memoOf(live).outline(),
          release() {},
        }
      }
      const stored = await deps.documents.loadState(room)
      if (!stored) return null
      const doc = new Y.Doc()
      if (stored.state) Y.applyUpdate(doc, stored.state)
      const fragment = doc.getXmlFragment(FRAGMENT_NAME)
      return {
        fragment,
        source: 'stored',
        outline: () => readOutline(fragment),
        release: () => doc.destroy(),
      }
    },
  }
}
