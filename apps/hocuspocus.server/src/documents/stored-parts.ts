/**
 * A document's stored content as it is kept (the snapshot, then its update log), applying it, and what a
 * store derives from a state (search text, outline).
 */
import { FRAGMENT_NAME, type OutlineNode, readOutline, readPlainText } from '@collab/doc-schema'
import * as Y from 'yjs'

/** Applies a document's stored content to `doc`: the snapshot, then each logged update in order. */
export function applyStored(
  doc: Y.Doc,
  stored: Pick<StoredParts, 'snapshot' | 'updates'>,
  origin?: unknown,
): void {
  Y.transact(
    doc,
    () => {
      if (stored.snapshot) Y.applyUpdate(doc, stored.snapshot)
      for (const update of stored.updates) Y.applyUpdate(doc, update)
    },
    origin,
  )
}

/** A document's stored content: the snapshot, then the log's updates in order. */
export type StoredParts = {
  documentId: string
  snapshot: Uint8Array | null
  updates: Uint8Array[]
  /** Total bytes of `updates`. */
  updateBytes: number
}

/** The search text and outline of a state, as the store step writes them. */
export function derivedOf(state: Uint8Array, maxTextChars: number): { text: string; outline: OutlineNode[] } {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const derived = { text: readPlainText(fragment, maxTextChars), outline: readOutline(fragment) }
  doc.destroy()
  return derived
}
