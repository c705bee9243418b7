/**
 * A document's content as a read sees it (documents.ts opens it; section-reads.ts renders from it): its
 * own file so the reader and the section reads need not import each other.
 */
import type * as Y from 'yjs'

export type ReadableDocument = {
  fragment: Y.XmlFragment
  /** Where the content came from; logged, never shown to the model. */
  source: 'live' | 'stored'
  /** Frees the throwaway doc of a stored read; a no-op for a live one. */
  release(): void
}
