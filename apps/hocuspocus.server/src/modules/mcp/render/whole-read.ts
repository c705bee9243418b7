/**
 * The whole-document read within a budget: the document's Markdown if it fits, else the line walk of
 * budget.ts over it. Only the start of the Markdown is rendered (top-level blocks one at a time), up to
 * MAX_COUNTED_CHARS when the budget is smaller, so a cut read knows the document's total size when it is
 * at most that, and its cost follows that bound, not the document; the text is the same as walking the
 * whole render.
 */
import { documentMarkdownPrefix } from '@collab/doc-schema'
import type * as Y from 'yjs'
import { MAX_COUNTED_CHARS } from '../limits.ts'
import { walkLines } from './budget.ts'

export type WholeRead = {
  /** What the frame shows (not yet escaped). */
  text: string
  /** True when the document's Markdown did not fit and `text` is its start. */
  cut: boolean
  /** The length of the document's Markdown; undefined when it is longer than MAX_COUNTED_CHARS (and cut). */
  total?: number
}

export function readWholeDocument(fragment: Y.XmlFragment, max: number): WholeRead {
  // One character past the bound tells a counted document from a longer one, and finishes the line the
  // walk would stop on: any line reaching past `max` is cut the same way whatever follows it.
  const prefix = documentMarkdownPrefix(fragment, Math.max(max, MAX_COUNTED_CHARS) + 1)
  const total = prefix.complete ? prefix.text.length : undefined
  if (total !== undefined && total <= max) return { text: prefix.text, cut: false, total }
  const head = prefix.text.slice(0, max + 1)
  return { text: walkLines(head.split('\n'), max).text, cut: true, total }
}
