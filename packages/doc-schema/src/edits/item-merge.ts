/**
 * What a replaced item keeps: the parts of the old item (its text, the blocks under its text, its
 * sub-items) that the Markdown item replacing it does not write out, less the sub-items an edit removes.
 */
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { yElementToJSON } from '../yjs/read-y.ts'
import { CONTAINER_TYPES } from './block-lines.ts'

const isContainer = (node: DocNode): boolean => CONTAINER_TYPES.has(node.type)

const elementChildren = (element: Y.XmlElement): Y.XmlElement[] =>
  element.toArray().filter((child): child is Y.XmlElement => child instanceof Y.XmlElement)

/** An item's children in the three parts a read prints in order (see mergeItem). */
function parts<T>(children: readonly T[], container: (child: T) => boolean) {
  const first = children.findIndex((child, index) => index > 0 && container(child))
  const split = first < 0 ? children.length : first
  return { text: children.slice(0, 1), under: children.slice(1, split), subs: children.slice(split) }
}

/**
 * The item that replaces `old`: `given` (a Markdown item) with the parts of `old` it does not write out.
 * An item prints in three parts: its text (the first paragraph, on the item's line), the blocks under its
 * text (more paragraphs, code blocks, up to its first list), and its sub-items (from its first list on).
 * The Markdown item's text always replaces the old text; blocks it writes under its text replace the old
 * blocks under the text; a list it writes under it replaces the old sub-items and what follows them. A
 * part it does not write is kept as it was, less the items `removed` names. Returns the new item and the
 * old elements it no longer holds.
 */
export function mergeItem(
  old: Y.XmlElement,
  given: DocNode,
  removed: ReadonlySet<Y.XmlElement>,
): { json: DocNode; gone: Y.XmlElement[] } {
  const next = parts(given.content ?? [], isContainer)
  const before = parts(elementChildren(old), (child) => CONTAINER_TYPES.has(child.nodeName))
  const content: DocNode[] = [...next.text]
  const gone: Y.XmlElement[] = [...before.text]
  const keep = (elements: readonly Y.XmlElement[]) => {
    for (const element of elements) {
      const left: Y.XmlElement[] = []
      const json = without(element, removed, left)
      gone.push(...left)
      if (json) content.push(json)
    }
  }
  if (next.under.length > 0) {
    content.push(...next.under)
    gone.push(...before.under)
  } else keep(before.under)
  if (next.subs.length > 0) {
    content.push(...next.subs)
    gone.push(...before.subs)
  } else keep(before.subs)
  return { json: content.length > 0 ? { ...given, content } : given, gone }
}

/** `element` as JSON without the removed items under it; undefined for a list or table left empty. */
function without(
  element: Y.XmlElement,
  removed: ReadonlySet<Y.XmlElement>,
  left: Y.XmlElement[],
): DocNode | undefined {
  const children = element.toArray()
  if (!children.every((child) => child instanceof Y.XmlElement)) return yElementToJSON(element)
  const content: DocNode[] = []
  for (const child of children as Y.XmlElement[]) {
    if (removed.has(child)) {
      left.push(child)
      continue
    }
    const json = without(child, removed, left)
    if (json) content.push(json)
  }
  if (content.length === 0 && CONTAINER_TYPES.has(element.nodeName)) return undefined
  const attrs = element.getAttributes() as Record<string, unknown>
  const node: DocNode = { type: element.nodeName }
  if (Object.keys(attrs).length > 0) node.attrs = attrs
  if (content.length > 0) node.content = content
  return node
}
