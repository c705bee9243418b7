/**
 * A document's stored content as it is kept (the snapshot, then its update log), applying it, and what a
 * store derives from a state (search text, outline).
 */
import {
  adoptRevs,
  adoptTotals,
  type FlatDocument,
  FRAGMENT_NAME,
  mergeAppended,
  readFlat,
  readOutline,
  readOutlineWithTotals,
  readPlainText,
  type StoredOutlineNode,
  type StoredSectionRev,
} from '@collab/doc-schema'
import * as Y from 'yjs'

/**
 * Applies a document's stored content to `doc`: the snapshot, then each logged update in order. The
 * section totals stored with the snapshot's outline go with the fragment (`adoptTotals`), so a cut read of
 * a section unchanged since then names its total without rendering the section; and when that outline
 * describes exactly what is applied (`revs`: no update logged after the snapshot) into an empty doc, its
 * revs do too (`adoptRevs`), so such a read does not hash the section either.
 */
export function applyStored(
  doc: Y.Doc,
  stored: Pick<StoredParts, 'snapshot' | 'updates' | 'totals' | 'revs'>,
  origin?: unknown,
): void {
  const empty = doc.store.clients.size === 0
  Y.transact(
    doc,
    () => {
      if (stored.snapshot) Y.applyUpdate(doc, stored.snapshot)
      for (const update of stored.updates) Y.applyUpdate(doc, update)
    },
    origin,
  )
  adoptStoredOutline(doc, stored, empty)
}

/**
 * The stored content read flat (doc-schema yjs/flat-read.ts: its top-level blocks from the bytes, without
 * a Y.Doc) when its parts continue each other as a log does (`mergeAppended`); null otherwise (the caller
 * decodes it with Yjs, `applyStored`). A Y.Doc of a document at the item limit is ~100 MB, and applying
 * its state leaves ~55 MB more of garbage: what an export or a first screen of a large document cost the
 * documents' worker, beside the live copy. Read-only work (no edit, no encode) takes this when it can.
 */
export function readStoredFlat(stored: Pick<StoredParts, 'snapshot' | 'updates'>): FlatDocument | null {
  const parts = stored.snapshot ? [stored.snapshot, ...stored.updates] : stored.updates
  if (parts.length === 0) return null
  const merged = parts.length === 1 ? parts[0]! : mergeAppended(parts)?.update
  return merged ? readFlat(merged, FRAGMENT_NAME) : null
}

/**
 * What applyStored adopts from the stored outline once the content is in `doc` (`wasEmpty`: it held
 * nothing before): the section totals, and the revs when the outline describes exactly what was applied.
 */
export function adoptStoredOutline(
  doc: Y.Doc,
  stored: Pick<StoredParts, 'updates' | 'totals' | 'revs'>,
  wasEmpty: boolean,
): void {
  if (stored.totals) adoptTotals(doc.getXmlFragment(FRAGMENT_NAME), stored.totals)
  if (stored.revs && wasEmpty && stored.updates.length === 0)
    adoptRevs(doc.getXmlFragment(FRAGMENT_NAME), stored.revs)
}

/** A document's stored content: the snapshot, then the log's updates in order. */
export type StoredParts = {
  documentId: string
  snapshot: Uint8Array | null
  updates: Uint8Array[]
  /** Total bytes of `updates`. */
  updateBytes: number
  /**
   * The section totals the snapshot's stored outline carries (`storedTotals`: by rev and block count), valid
   * for every section the log left unchanged; absent when none were stored.
   */
  totals?: ReadonlyMap<string, number>
  /**
   * The revs of the snapshot's stored outline by section id (`storedRevs`), only when no update is logged
   * after the snapshot: the outline then describes the content exactly. Absent otherwise.
   */
  revs?: ReadonlyMap<string, StoredSectionRev>
}

/**
 * The search text and outline of a state, as the store step writes them. `withTotals`: each section's
 * exact total measured too (rendering the document once, ~4x the outline's hash walk), for the import
 * worker, off the event loop. A create runs on the event loop and leaves them out: its Markdown is at most
 * MAX_MARKDOWN_CHARS, below a read's default budget, and its first compaction measures them.
 */
export function derivedOf(
  state: Uint8Array,
  maxTextChars: number,
  withTotals = false,
): { text: string; outline: StoredOutlineNode[] } {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const outline = withTotals ? readOutlineWithTotals(fragment) : readOutline(fragment)
  const derived = { text: readPlainText(fragment, maxTextChars), outline }
  doc.destroy()
  return derived
}
