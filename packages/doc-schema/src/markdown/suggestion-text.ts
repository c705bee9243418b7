/** Pending suggestions in Markdown: shown to agents as CriticMarkup-like markers, left out of accepted content. */
import type { DocNode } from '../doc-json.ts'
import { SUGGESTION_DELETE, SUGGESTION_INSERT } from '../suggestion-marks.ts'

const hasMark = (node: DocNode, type: string) => node.marks?.some((mark) => mark.type === type) ?? false

/** Suggestions first when shown (the tie-breaking order): their markers hold the formatting they cover. */
export const SUGGESTION_ORDER = [SUGGESTION_DELETE, SUGGESTION_INSERT]

/** The markers around a shown suggestion, or undefined for another mark. */
export function suggestionMarkers(type: string): [string, string] | undefined {
  if (type === SUGGESTION_INSERT) return ['{++', '++}']
  if (type === SUGGESTION_DELETE) return ['{--', '--}']
  return undefined
}

/**
 * A marker typed as text, as reads show it beside real suggestions: the brace of each `{++`, `{--`, `++}`
 * and `--}` (escape-text.ts escapes the same in block text; a brace that forms no marker, as in `{-1}`,
 * stays as it is).
 */
const TYPED_MARKER_BRACE = /\{(?=\+\+|--)|(?<=\+\+|--)\}/g

/**
 * Text shown outside the Markdown writer (an image's `[image: …]` placeholder, a search snippet) with its
 * markers escaped as block text's are (`\{++`, `++\}`), so only a real suggestion mark shows as one; the
 * escapes are Markdown's own, so the text copied back into a write reads as the braces.
 */
export function escapeTypedMarkers(text: string): string {
  return text.includes('{') || text.includes('}') ? text.replace(TYPED_MARKER_BRACE, '\\$&') : text
}

/** Inline nodes as accepted: proposed text left out (text proposed for deletion stays until accepted). */
export function acceptedInline(nodes: readonly DocNode[]): DocNode[] {
  return nodes.filter((node) => !hasMark(node, SUGGESTION_INSERT))
}

/**
 * Whether a block holds text and all of it is proposed (a block an agent proposed as a whole): left out
 * of accepted content rather than written as an empty heading or list item. Iterative: nesting is bounded
 * by the render's own ceiling, but the walk need not rely on it.
 */
export function wholeProposed(block: DocNode): boolean {
  let sawText = false
  const stack: DocNode[] = [block]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === 'text') {
      if (!hasMark(node, SUGGESTION_INSERT)) return false
      sawText = true
    } else if (node.type !== 'hardBreak') {
      if (!node.content || node.content.length === 0) {
        // Media or a rule inside the block: not text, so the block is not all proposed text.
        if (node !== block && node.type !== 'paragraph') return false
      } else stack.push(...node.content)
    }
  }
  return sawText
}
