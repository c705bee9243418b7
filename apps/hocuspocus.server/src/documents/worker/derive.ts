/**
 * What the server reads off a stored document that nobody has open, for itself: the ids of its top-level
 * headings (a chat message names one: collab/headings.ts, when the stored outline is stale), its title
 * and search text (search-backfill.ts) and its outline (outline-backfill.ts). Pure work, run on the
 * documents' worker for a document stored larger than EXPORT_INLINE_BYTES: decoding its state here held
 * the event loop as long as its size (a 22 MB state: seconds).
 */
import {
  FRAGMENT_NAME,
  flatTopLevel,
  HEADING_ID_ATTR,
  type OutlineNode,
  readOutline,
  readOutlineOf,
  readPlainText,
  readTitle,
  readTitleAndTextOf,
} from '@collab/doc-schema'
import * as Y from 'yjs'
import { applyStored, readStoredFlat, type StoredParts } from '../stored-parts.ts'

export type DeriveInput =
  | { what: 'headings'; stored: Pick<StoredParts, 'snapshot' | 'updates'> }
  | { what: 'search'; stored: Pick<StoredParts, 'snapshot' | 'updates'>; maxTextChars: number }
  | { what: 'outline'; stored: Pick<StoredParts, 'snapshot' | 'updates'> }

/** The ids of the top-level headings, in order (headings are top-level blocks: the flat document model). */
export type HeadingIds = string[]
/** The title and search text a store derives (documents/store.ts writeDerived). */
export type SearchText = { title: string; text: string }

export type Derived = HeadingIds | SearchText | OutlineNode[]

export function deriveStored(input: DeriveInput): Derived {
  // Read flat when it can be (stored-parts.ts `readStoredFlat`): no Y.Doc (at the item limit, ~100 MB of
  // one on the worker for the outline backfill, the search backfill or a cold outline).
  const flat = readStoredFlat(input.stored)
  if (flat && input.what !== 'headings') {
    const rows = flatTopLevel(flat)
    return input.what === 'outline'
      ? readOutlineOf(flat.tree, rows)
      : readTitleAndTextOf(flat.tree, rows, input.maxTextChars)
  }
  if (flat) {
    const ids: string[] = []
    for (const item of flat.topLevel()) {
      if (item.name !== 'heading') continue
      const id = flat.attribute(item, HEADING_ID_ATTR)
      if (typeof id === 'string') ids.push(id)
    }
    return ids
  }
  const doc = new Y.Doc()
  try {
    applyStored(doc, input.stored)
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    if (input.what === 'search')
      return { title: readTitle(fragment), text: readPlainText(fragment, input.maxTextChars) }
    if (input.what === 'outline') return readOutline(fragment)
    const ids: string[] = []
    for (const child of fragment.toArray()) {
      if (!(child instanceof Y.XmlElement) || child.nodeName !== 'heading') continue
      const id = child.getAttribute(HEADING_ID_ATTR)
      if (typeof id === 'string') ids.push(id)
    }
    return ids
  } finally {
    doc.destroy()
  }
}
