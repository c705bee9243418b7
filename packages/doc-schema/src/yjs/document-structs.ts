/**
 * How many Yjs structs a document holds, and whether it may take more (MAX_DOCUMENT_STRUCTS): the size
 * that what a live document costs follows (its heap, its load, every sync answer and whole read), where its
 * state's bytes can understate it ~20 times.
 *
 * Counting is a walk of the store's clients (one array length each), so a document with thousands of
 * writers would pay for it on every message. Instead each document checked is given a bound that only
 * ever lies high: its exact count when last counted, raised after every transaction (whatever its origin:
 * an editor, an agent, another instance through Redis) by three per new struct and two per deleted range.
 * A new struct splits at most two others (at its origin and its right origin) and a deleted range at most
 * two (at its ends); merges only lower the true count. The exact count is taken again only when the bound
 * would pass the ceiling, so a document far below it is never walked twice.
 */
import type * as Y from 'yjs'
import { MAX_DOCUMENT_STRUCTS } from '../limits.ts'
import { type Refusal, refuseFor } from '../result.ts'
import { eachNewStruct } from './top-level-changes.ts'
import { countUpdateWork } from './update-work.ts'

/** The structs in `doc`'s store, counted exactly (items, GC runs and skips alike). */
export function documentStructs(doc: Y.Doc): number {
  let count = 0
  for (const structs of doc.store.clients.values()) count += structs.length
  return count
}

/** Per document: an upper bound of its structs, kept by its own `afterTransaction` listener. */
const bounds = new WeakMap<Y.Doc, { bound: number }>()

/** At most how many structs `transaction` added to its document (splits included). */
function growthBound(transaction: Y.Transaction): number {
  let added = 0
  eachNewStruct(transaction, () => added++)
  let ranges = 0
  for (const deleted of transaction.deleteSet.clients.values()) ranges += deleted.length
  return 3 * added + 2 * ranges
}

function tracked(doc: Y.Doc): { bound: number } {
  const known = bounds.get(doc)
  if (known) return known
  const entry = { bound: documentStructs(doc) }
  doc.on('afterTransaction', (transaction: Y.Transaction) => {
    entry.bound += growthBound(transaction)
  })
  bounds.set(doc, entry)
  return entry
}

/**
 * Whether `doc` may take `inserted` more structs and stay within `max`: true at once while its bound
 * allows; else it is counted exactly, and the answer is from that count. Two splits per inserted struct
 * are not counted against it, so a document ends at most that far past the ceiling.
 */
export function structsAdmitted(doc: Y.Doc, inserted: number, max = MAX_DOCUMENT_STRUCTS): boolean {
  const entry = tracked(doc)
  if (entry.bound + inserted <= max) return true
  entry.bound = documentStructs(doc)
  return entry.bound + inserted <= max
}

/**
 * The account every refusal of this ceiling gives agents and restores (an editor's close reason is
 * shorter): what the document holds, what the change would add, the limit, and what to do, since deleting
 * content seldom lowers the count.
 */
export function structsOverMessage(holds: number, adding = 0, max = MAX_DOCUMENT_STRUCTS): string {
  const count = (n: number) => n.toLocaleString('en-US')
  const added = adding > 0 ? ` and this change would add ${count(adding)}` : ''
  return `the document holds ${count(holds)} Yjs items (every run of text, element and attribute it keeps, deleted ones too)${added}; its limit is ${count(max)}, and deleting content seldom lowers the count. Export it as Markdown and import that as a new document to keep writing.`
}

/**
 * The refusal of a new document's state (an import, a created document) that holds more than the item
 * limit, counted from its bytes (update-work.ts, stopping past the limit); null when it fits. The import
 * element ceiling keeps files below it (its largest make ~300,000-320,000 items); this keeps it so.
 */
export function newStateOverStructs(state: Uint8Array, max = MAX_DOCUMENT_STRUCTS): Refusal | null {
  if (!countUpdateWork(state, null, max)?.over) return null
  return refuseFor(
    'too_large',
    `markdown: the document would hold more than ${max.toLocaleString('en-US')} Yjs items (runs of text, elements, attributes), the most one document may hold; split the file into several documents.`,
    'markdown',
  )
}
