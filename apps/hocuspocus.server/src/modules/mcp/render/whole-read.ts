/**
 * The whole-document read within a budget: the document's Markdown if it fits, else the line walk of
 * budget.ts over it. Only the start of the Markdown is rendered (top-level blocks one at a time, stopping a
 * character past the budget), so the cost follows the budget, not the document; the text is the same as
 * walking the whole render.
 */
import { documentMarkdownPrefix } from '@collab/doc-schema'
import type * as Y from 'yjs'
import { walkLines } from './budget.ts'

export type WholeRead = {
  /** What the frame shows (not yet escaped). */
  text: string
  /** True when the document's Markdown did not fit and `text` is its start. */
  cut: boolean
}

export function readWholeDocument(fragment: Y.XmlFragment, max: number): WholeRead {
  // One character past the budget tells a fitting document from a cut one, and finishes the line the
  // walk would stop on: any line reaching past `max` is cut the same way whatever follows it.
  const prefix = documentMarkdownPrefix(fragment, max + 1)
  if (prefix.complete && prefix.text.length <= max) return { text: prefix.text, cut: false }
  return { text: walkLines(prefix.text.split('\n'), max).text, cut: true }
}
