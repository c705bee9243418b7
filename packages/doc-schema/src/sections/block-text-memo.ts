import type * as Y from 'yjs'
import { MAX_IN_BLOCK_CHARS } from '../limits.ts'

/**
 * The Markdown of a list or table block as a section read prints it whole, kept while the block is
 * unchanged, so an `inBlock` edit that follows a read numbers the block's lines from the text the read
 * rendered instead of rendering it again (block-lines.ts). The text is whatever the read's render gave,
 * never built here, so it follows the export's escaping as the read does.
 *
 * Kept per block element (weakly: it goes with the element) and dropped by a deep observer on the block
 * when a change lands under it; the observer is added once per block, the first time its text is kept.
 * Observers run when a transaction ends, so inside one (the server applies every MCP edit in one) an entry
 * is used only while the block is unchanged in it (`observersCaughtUp`). Only blocks that hold items or rows are kept, and only up to MAX_KEPT_CHARS of text. A
 * cut read keeps the exact start it rendered, which serves an edit of the lines it settles.
 */

/** Top-level blocks whose lines `inBlock` numbers: only their text is kept. */
const KEPT_TYPES: ReadonlySet<string> = new Set(['bulletList', 'orderedList', 'taskList', 'table'])

/**
 * Longest text kept for one block: what `inBlock` renders of a block at most (its MAX_IN_BLOCK_CHARS
 * counts the text and elements of the block, each element writing at least a character of Markdown), so
 * a kept text never lets an edit number lines past those an edit would render itself.
 */
const MAX_KEPT_CHARS = MAX_IN_BLOCK_CHARS

/** The block's Markdown: whole when `complete`, else exactly its first characters. */
export type KeptText = { text: string; complete: boolean }

type Kept = KeptText & { derived?: unknown }

const kept = new WeakMap<Y.XmlElement, Kept>()
const observed = new WeakSet<Y.XmlElement>()

/**
 * True when every change to `type` or under it has reached its observers: no transaction is open or being
 * cleaned up, or the only one is open and has changed nothing under `type` yet. False while observers of an
 * ended transaction are still being called (a transaction opened by one of them runs before the others).
 */
// biome-ignore lint/suspicious/noExplicitAny: any Yjs type (its event type is not known here)
export function observersCaughtUp(type: Y.AbstractType<any>): boolean {
  const doc = type.doc
  if (!doc) return false
  const current = doc._transaction
  const pending = doc._transactionCleanups
  if (pending.length === 0) return current === null
  if (pending.length > 1 || pending[0] !== current || !current) return false
  for (const changed of current.changed.keys()) {
    // biome-ignore lint/suspicious/noExplicitAny: as Yjs types `parent`
    for (let at: Y.AbstractType<any> | null = changed; at; at = at.parent) if (at === type) return false
  }
  return true
}

const inTransaction = (block: Y.XmlElement) => !observersCaughtUp(block)

/**
 * Keeps `text`, the block's Markdown as a read renders it (no label): whole when `complete`, else exactly
 * its start (a cut read's). A start shorter than what is kept already is not kept.
 */
export function keepBlockText(block: Y.XmlElement, text: string, complete: boolean): void {
  if (!KEPT_TYPES.has(block.nodeName) || text.length > MAX_KEPT_CHARS || inTransaction(block)) return
  const now = kept.get(block)
  if (now && (now.complete || (!complete && now.text.length >= text.length))) return
  if (!observed.has(block)) {
    observed.add(block)
    block.observeDeep(() => kept.delete(block))
  }
  kept.set(block, { text, complete })
}

/** The block's Markdown as last kept, if the block has not changed since. */
export function keptBlockText(block: Y.XmlElement): KeptText | undefined {
  if (inTransaction(block)) return undefined
  const entry = kept.get(block)
  return entry && { text: entry.text, complete: entry.complete }
}

/**
 * Something computed from the kept text (the caller's own, e.g. its line map), kept beside it and dropped
 * with it (or when a longer start replaces it); `make` runs when there is none yet, and what it gives is
 * kept unless undefined. Undefined when no text is kept. What is kept is shared by every caller, which
 * must not change it.
 */
export function derivedFromText<T>(
  block: Y.XmlElement,
  make: (kept: KeptText) => T | undefined,
): T | undefined {
  if (inTransaction(block)) return undefined
  const entry = kept.get(block)
  if (!entry) return undefined
  if (entry.derived === undefined) entry.derived = make(entry)
  return entry.derived as T | undefined
}
