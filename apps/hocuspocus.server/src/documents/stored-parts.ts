/** A document's stored content as it is kept (the snapshot, then its update log), and applying it. */
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
