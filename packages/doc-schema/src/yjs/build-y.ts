import type { Node as PMNode } from '@tiptap/pm/model'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { editorSchema } from '../lazy-libs.ts'

/**
 * A detached Y element for a checked ProseMirror node, in exactly the shape TipTap's Collaboration
 * (y-prosemirror / @tiptap/y-tiptap) writes: element named by type with every non-null attribute,
 * each run of text one Y.XmlText whose marks are formatting attributes `{ [markName]: attrs }`.
 * Iterative (an explicit stack of nodes still to fill): the nesting depth is the input's, not the stack's.
 * Everything stays detached until the caller inserts the root, so filling a child after it was put into
 * its parent gives the same Yjs content as building it first.
 */
export function nodeToY(node: PMNode): Y.XmlElement {
  const root = new Y.XmlElement(node.type.name)
  const stack: Array<[PMNode, Y.XmlElement]> = [[node, root]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [current, element] = entry
    for (const [key, value] of Object.entries(current.attrs)) {
      if (value !== null && value !== undefined) element.setAttribute(key, value as string)
    }
    const children: (Y.XmlElement | Y.XmlText)[] = []
    let texts: PMNode[] = []
    const flushTexts = () => {
      if (texts.length === 0) return
      const text = new Y.XmlText()
      text.applyDelta(texts.map((t) => ({ insert: t.text ?? '', attributes: marksToAttributes(t) })))
      children.push(text)
      texts = []
    }
    current.forEach((child) => {
      if (child.isText) {
        texts.push(child)
        return
      }
      flushTexts()
      const childElement = new Y.XmlElement(child.type.name)
      children.push(childElement)
      stack.push([child, childElement])
    })
    flushTexts()
    element.insert(0, children)
  }
  return root
}

export function marksToAttributes(node: PMNode): Record<string, unknown> {
  const attributes: Record<string, unknown> = {}
  // No mark in this schema overlaps itself, so no `name--hash` keys are needed.
  for (const mark of node.marks) attributes[mark.type.name] = mark.attrs
  return attributes
}

/** Detached Y elements for JSON blocks; throws on invalid JSON, so pass blocks already checked. */
export function blocksToY(blocks: DocNode[]): Y.XmlElement[] {
  return blocks.map((block) => {
    const node = editorSchema().nodeFromJSON(block)
    node.check()
    return nodeToY(node)
  })
}
