/**
 * Which `*` and `_` in a block's text cannot form emphasis, so the export writes them without a backslash
 * (the library escapes every one). CommonMark pairs a run of `*` (or `_`) that can open with a later run of
 * the same character that can close, within one paragraph, heading or cell. A run is left as it is when:
 *
 * - it has whitespace on both sides (`0.2 * 3`, `a _ b`): it can neither open nor close; or
 * - it can only close and nothing before it in the block could open: no run of its character that could,
 *   and no bold or italic (written with `*` or `_`, the writer picks). `name.*` at a line's end,
 *   `DeepMerge* to DeepMerge*` (two runs that can only close).
 *
 * Only what comes before a run decides, never what follows it: a bounded read renders a block cut short
 * (block-prefix.ts) and must write the start exactly as the whole block is written. So a run that could
 * open is escaped, whatever follows.
 *
 * "Could open" is read loosely, as a superset of CommonMark's flanking rules, so the answer errs towards
 * escaping: a run can open when the character after it is not whitespace or it ends its text node (marks
 * and their markers follow), unless that is the block's last and unmarked; it can close when the character before it is not
 * whitespace or it starts its node. Code spans hold no delimiters. A run at a line start (a list bullet, a
 * rule) is still escaped by the caller's line-start rules (escape-text.ts).
 */

import type { DocNode } from '../doc-json.ts'

/** markdown-it's whitespace (isWhiteSpace): tab, line feed, vertical tab, form feed, return, Unicode spaces. */
const WHITESPACE = /[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/
const RUNS = /\*+|_+/g

const hasMark = (node: DocNode, type: string) => node.marks?.some((mark) => mark.type === type) === true

/**
 * Offsets (ascending) of the `*`/`_` characters that need no escape, per text node of one block's inline
 * content, or undefined when there are none.
 */
export function freeDelimiters(nodes: readonly DocNode[]): Map<DocNode, number[]> | undefined {
  let free: Map<DocNode, number[]> | undefined
  let attention = false
  const openerBefore = { '*': false, _: false }
  for (const [index, node] of nodes.entries()) {
    if (node.type !== 'text' || hasMark(node, 'code')) continue
    if (hasMark(node, 'bold') || hasMark(node, 'italic')) attention = true
    const text = node.text ?? ''
    if (!text.includes('*') && !text.includes('_')) continue
    // Only the block's last text, with no mark whose closing markers would follow, ends on whitespace.
    const last = index === nodes.length - 1 && !node.marks?.length
    for (const match of text.matchAll(RUNS)) {
      const start = match.index
      const end = start + match[0].length
      const close = start > 0 ? !WHITESPACE.test(text.charAt(start - 1)) : true
      const open = end < text.length ? !WHITESPACE.test(text.charAt(end)) : !last
      const character = match[0].charAt(0) as '*' | '_'
      const inert = start > 0 && !close && !open
      if (inert || (!open && close && !openerBefore[character] && !attention)) {
        free ??= new Map()
        let offsets = free.get(node)
        if (!offsets) {
          offsets = []
          free.set(node, offsets)
        }
        for (let at = start; at < end; at++) offsets.push(at)
      }
      if (open) openerBefore[character] = true
    }
  }
  return free
}
