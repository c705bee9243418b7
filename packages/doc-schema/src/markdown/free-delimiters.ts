/**
 * Which `*` and `_` in a block's text cannot form emphasis, so the export writes them without a backslash
 * (the library escapes every one). CommonMark pairs a run of `*` (or `_`) that can open with a later run of
 * the same character that can close, within one paragraph, heading or cell. A run is left as it is when:
 *
 * - it has whitespace on both sides (`0.2 * 3`, `a _ b`): it can neither open nor close; or
 * - it has no possible partner in the block: no run of its character that could close after it (when it
 *   could open) and none that could open before it (when it could close). `name.*`, `DeepMerge* to
 *   DeepMerge*` (two runs that can only close), `**__:**`.
 *
 * "Could open" is read loosely, as a superset of CommonMark's flanking rules, so the answer errs towards
 * escaping: a run can open when the character after it is not whitespace, or it ends its text node (marks
 * and their markers follow); it can close when the character before it is not whitespace, or it starts its
 * node. Bold and italic marks are written with `*` or `_` (the writer picks the one its neighbours need),
 * so in a block holding either every run counts as having a partner (only runs with whitespace on both
 * sides stay free). Code spans hold no delimiters.
 * Whatever is left free here, a run at a line start (a list bullet, a rule) is still escaped by the
 * caller's line-start rules (escape-text.ts).
 */

import type { DocNode } from '../doc-json.ts'

/** markdown-it's whitespace (isWhiteSpace): tab, line feed, vertical tab, form feed, return, Unicode spaces. */
const WHITESPACE = /[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/
const RUNS = /\*+|_+/g

type Run = { node: DocNode; start: number; end: number; open: boolean; close: boolean; inert: boolean }

const hasMark = (node: DocNode, type: string) => node.marks?.some((mark) => mark.type === type) === true

/**
 * Offsets of the `*`/`_` characters that need no escape, per text node of one block's inline content, or
 * undefined when there are none.
 */
export function freeDelimiters(nodes: readonly DocNode[]): Map<DocNode, number[]> | undefined {
  const runs: Record<'*' | '_', Run[]> = { '*': [], _: [] }
  let attentionMarks = false
  for (const node of nodes) {
    if (node.type !== 'text' || hasMark(node, 'code')) continue
    if (hasMark(node, 'bold') || hasMark(node, 'italic')) attentionMarks = true
    const text = node.text ?? ''
    if (!text.includes('*') && !text.includes('_')) continue
    for (const match of text.matchAll(RUNS)) {
      const start = match.index
      const end = start + match[0].length
      const before = start > 0 ? !WHITESPACE.test(text.charAt(start - 1)) : true
      const after = end < text.length ? !WHITESPACE.test(text.charAt(end)) : true
      const inert = start > 0 && end < text.length && !before && !after
      runs[match[0].charAt(0) as '*' | '_'].push({ node, start, end, open: after, close: before, inert })
    }
  }
  let free: Map<DocNode, number[]> | undefined
  const keep = (run: Run) => {
    free ??= new Map()
    let offsets = free.get(run.node)
    if (!offsets) {
      offsets = []
      free.set(run.node, offsets)
    }
    for (let at = run.start; at < run.end; at++) offsets.push(at)
  }
  for (const list of Object.values(runs)) {
    // Whether a run that could close comes after index i, or one that could open before it.
    const closerAfter: boolean[] = new Array(list.length)
    for (let i = list.length - 1, seen = false; i >= 0; i--) {
      closerAfter[i] = seen
      seen ||= list[i]!.close
    }
    let openerBefore = false
    for (const [i, run] of list.entries()) {
      const partner = attentionMarks || (run.open && closerAfter[i]!) || (run.close && openerBefore)
      if (run.inert || !partner) keep(run)
      openerBefore ||= run.open
    }
  }
  // Ascending, as the writer walks them (the two characters were collected one after the other).
  if (free) for (const offsets of (free as Map<DocNode, number[]>).values()) offsets.sort((a, b) => a - b)
  return free
}
