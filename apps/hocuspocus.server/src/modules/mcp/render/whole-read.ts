/**
 * The whole-document read within a budget: the document's Markdown if it fits, else the line walk of
 * budget.ts over it. Only the start of the Markdown is rendered (top-level blocks one at a time), up to
 * MAX_COUNTED_CHARS when the budget is smaller, so a cut read knows the document's total size when it is
 * at most that, and its cost follows that bound, not the document; the text is the same as walking the
 * whole render. The render also stops at the document model's MAX_RENDER_WORK (elements, text runs and
 * their marks): past it, a read shows what was rendered and says so, so markup cannot make a read cost
 * more than that either.
 */
import { documentMarkdownPrefix, type MarkdownPrefix, type SerializeOptions } from '@collab/doc-schema'
import type * as Y from 'yjs'
import { MAX_COUNTED_CHARS } from '../limits.ts'
import { walkLines } from './budget.ts'

export type WholeRead = {
  /** What the frame shows (not yet escaped). */
  text: string
  /** True when the document's Markdown did not fit and `text` is its start. */
  cut: boolean
  /** The length of the document's Markdown; undefined when it is longer than what was counted (and cut). */
  total?: number
  /**
   * With `total` undefined: the characters counted, all exact, which the Markdown is longer than
   * (MAX_COUNTED_CHARS, or fewer when the render stopped at MAX_RENDER_WORK).
   */
  counted?: number
  /** True when the render stopped at MAX_RENDER_WORK before the budget: `text` is all that was rendered. */
  byWork?: boolean
}

/** How the whole read writes Markdown: suggestions shown as such (the agent reviews them). */
export const WHOLE_READ_OPTIONS: SerializeOptions = { suggestions: 'show' }

/**
 * Characters of the Markdown a whole read within `max` renders: one past the bound tells a counted document
 * from a longer one, and finishes the line the walk would stop on (any line reaching past `max` is cut the
 * same way whatever follows it).
 */
export const wholeReadChars = (max: number): number => Math.max(max, MAX_COUNTED_CHARS) + 1

export function readWholeDocument(fragment: Y.XmlFragment, max: number): WholeRead {
  // Bounded: the render also stops at MAX_RENDER_WORK units of markup (document-model), so a document
  // dense in marks or nodes costs what that allows, not what its markup would.
  return wholeReadOf(documentMarkdownPrefix(fragment, wholeReadChars(max), WHOLE_READ_OPTIONS, true), max)
}

/**
 * The whole read within `max` from the start of the Markdown (`documentMarkdownPrefix` bounded, of
 * `wholeReadChars(max)` characters, rendered here or on the documents' worker: the same text).
 */
export function wholeReadOf(prefix: MarkdownPrefix, max: number): WholeRead {
  const total = prefix.complete ? prefix.text.length : undefined
  if (total !== undefined && total <= max) return { text: prefix.text, cut: false, total }
  if (total !== undefined)
    return { text: walkLines(prefix.text.slice(0, max + 1).split('\n'), max).text, cut: true, total }
  // Longer than counted: `prefix.text` is exact up to its end (MAX_COUNTED_CHARS + 1 characters, or fewer
  // when the work allowance ran out), and the Markdown goes on past it.
  const counted = prefix.byWork ? prefix.text.length : MAX_COUNTED_CHARS
  if (prefix.text.length > max)
    return { text: walkLines(prefix.text.slice(0, max + 1).split('\n'), max).text, cut: true, counted }
  // The work allowance ran out within the budget: all that was rendered is shown, its last line in part.
  return { text: prefix.text, cut: true, counted, byWork: true }
}
