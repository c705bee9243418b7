import type * as Y from 'yjs'

/**
 * The Markdown of a list or table block as a section read prints it whole, kept while the block is
 * unchanged, so an `inBlock` edit that follows a read numbers the block's lines from the text the read
 * rendered instead of rendering it again (block-lines.ts). The text is whatever the read's render gave,
 * never built here, so it follows the export's escaping as the read does.
 *
 * Kept per block element (weakly: it goes with the element) and dropped by a deep observer on the block
 * when a change lands under it; the observer is added once per block, the first time its text is kept.
 * Observers run when a transaction ends, so nothing is kept or answered inside one (the entry could be
 * stale there). Only blocks that hold items or rows are kept, and only up to MAX_KEPT_CHARS of text.
 */

/** Top-level blocks whose lines `inBlock` numbers: only their text is kept. */
const KEPT_TYPES: ReadonlySet<string> = new Set(['bulletList', 'orderedList', 'taskList', 'table'])

/** Longest text kept for one block; `inBlock` renders no more than MAX_IN_BLOCK_CHARS of a block anyway. */
const MAX_KEPT_CHARS = 200_000

type Kept = { text: string; derived?: unknown }

const kept = new WeakMap<Y.XmlElement, Kept>()
const observed = new WeakSet<Y.XmlElement>()

function inTransaction(block: Y.XmlElement): boolean {
  return block.doc === null || block.doc._transaction !== null
}

/** Keeps `text`, the block's whole Markdown as a read renders it (no label, not cut). */
export function keepBlockText(block: Y.XmlElement, text: string): void {
  if (!KEPT_TYPES.has(block.nodeName) || text.length > MAX_KEPT_CHARS || inTransaction(block)) return
  if (kept.get(block)?.text === text) return
  if (!observed.has(block)) {
    observed.add(block)
    block.observeDeep(() => kept.delete(block))
  }
  kept.set(block, { text })
}

/** The block's whole Markdown as last kept, if the block has not changed since. */
export function keptBlockText(block: Y.XmlElement): string | undefined {
  if (inTransaction(block)) return undefined
  return kept.get(block)?.text
}

/**
 * Something computed from the kept text (the caller's own, e.g. its line map), kept beside it and dropped
 * with it; `make` runs when there is none yet, and what it gives is kept unless undefined. Undefined when
 * no text is kept. What is kept is shared by every caller, which must not change it.
 */
export function derivedFromText<T>(
  block: Y.XmlElement,
  make: (text: string) => T | undefined,
): T | undefined {
  if (inTransaction(block)) return undefined
  const entry = kept.get(block)
  if (!entry) return undefined
  if (entry.derived === undefined) entry.derived = make(entry.text)
  return entry.derived as T | undefined
}
