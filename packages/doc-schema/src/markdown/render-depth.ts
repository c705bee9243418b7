import type { RootContent } from 'mdast'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { MAX_NESTING_DEPTH } from '../limits.ts'
import { yElementToJSON } from '../yjs/read-y.ts'

/**
 * The render ceiling. A block nested deeper than MAX_NESTING_DEPTH element levels is not converted or
 * serialised: its Markdown is one placeholder line. Both checks walk with an explicit stack and stop at the
 * first element past the ceiling, so a block 100,000 levels deep costs what its first levels cost; below the
 * ceiling, rendering recurses at most MAX_NESTING_DEPTH levels (plus the fixed inline mark nesting).
 */

/** What a block past the ceiling shows, inside the data frame. */
export const TOO_DEEP_TEXT = `[block nested deeper than ${MAX_NESTING_DEPTH} levels; not shown]`

/** The placeholder as mdast: raw so its brackets are not escaped, as media placeholders are. */
export function tooDeepMdast(): RootContent {
  return { type: 'paragraph', children: [{ type: 'html', value: TOO_DEEP_TEXT }] }
}

/**
 * Stands in for a block found too deep before conversion (`yBlockForRender`); recognised by identity, so
 * no content (a node type is whatever an editor wrote) can pose as it.
 */
export const TOO_DEEP_NODE: DocNode = Object.freeze({ type: 'tooDeep' })

/** True when an element below `node` (itself level 1) sits deeper than MAX_NESTING_DEPTH. Text is no level. */
export function docNodeTooDeep(node: DocNode): boolean {
  const stack: Array<[DocNode, number]> = [[node, 1]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [current, level] = entry
    if (current.type === 'text') continue
    if (level > MAX_NESTING_DEPTH) return true
    for (const child of current.content ?? []) stack.push([child, level + 1])
  }
  return false
}

/** The same test on a Y element, before anything is converted. */
export function yElementTooDeep(element: Y.XmlElement): boolean {
  const stack: Array<[Y.XmlElement, number]> = [[element, 1]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [current, level] = entry
    if (level > MAX_NESTING_DEPTH) return true
    for (const child of current.toArray()) {
      if (child instanceof Y.XmlElement) stack.push([child, level + 1])
    }
  }
  return false
}

/** A top-level Y block as JSON to render, or TOO_DEEP_NODE without converting it when it is past the ceiling. */
export function yBlockForRender(element: Y.XmlElement): DocNode {
  return yElementTooDeep(element) ? TOO_DEEP_NODE : yElementToJSON(element)
}
