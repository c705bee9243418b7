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

/**
 * The item that replaces `old`: `given` (a Markdown item) with the parts of `old` it does not write out.
 * An item has three parts: its text (the first paragraph, on its line), the blocks under the text (more
 * paragraphs, code blocks), and its sub-items (the lists and tables in it). The Markdown item's text always
 * replaces the old text; blocks written under its text replace the old blocks under the text; a list
 * written under it replaces the old sub-items. A part it does not write is kept as it was, in its place,
 * less the sub-items `removed` names. Returns the new item and the old elements it no longer holds.
 */
export function mergeItem(
  old: Y.XmlElement,
  given: DocNode,
  removed: ReadonlySet<Y.XmlElement>,
): { json: DocNode; gone: Y.XmlElement[] } {
  const [head, ...rest] = given.content ?? []
  const body = rest.filter((node) => !isContainer(node))
  const subs = rest.filter(isContainer)
  const content: DocNode[] = []
  const gone: Y.XmlElement[] = []
  for (const [index, child] of elementChildren(old).entries()) {
    if (index === 0) {
      gone.push(child)
      if (head) content.push(head)
      content.push(...body)
    } else if (CONTAINER_TYPES.has(child.nodeName)) {
      if (subs.length > 0) {
        gone.push(child)
        continue
      }
      const left: Y.XmlElement[] = []
      const json = without(child, removed, left)
      gone.push(...left)
      if (json) content.push(json)
    } else if (body.length > 0) {
      gone.push(child)
    } else {
      const left: Y.XmlElement[] = []
      const json = without(child, removed, left)
      gone.push(...left)
      if (json) content.push(json)
    }
  }
  content.push(...subs)
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
