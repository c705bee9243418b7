import * as Y from 'yjs'
import type { DocMark, DocNode } from '../doc-json.ts'

type YChild = Y.XmlElement | Y.XmlText | Y.XmlHook

/**
 * ProseMirror JSON of one Y element, read directly (attributes as stored; no schema defaults filled).
 * Iterative (an explicit stack): the nesting depth is the document's choice, never the call stack's.
 */
export function yElementToJSON(element: Y.XmlElement): DocNode {
  const root = shallowNode(element)
  const stack: Array<[Y.XmlElement, DocNode]> = [[element, root]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [current, node] = entry
    const content: DocNode[] = []
    for (const child of current.toArray() as YChild[]) {
      if (child instanceof Y.XmlElement) {
        const childNode = shallowNode(child)
        content.push(childNode)
        stack.push([child, childNode])
      } else if (child instanceof Y.XmlText) {
        for (const textNode of yTextToJSON(child)) content.push(textNode)
      }
    }
    if (content.length > 0) node.content = content
  }
  return root
}

/** An element's type and attributes; its content is filled in by the walk. */
function shallowNode(element: Y.XmlElement): DocNode {
  const node: DocNode = { type: element.nodeName }
  const attrs = element.getAttributes() as Record<string, unknown>
  if (Object.keys(attrs).length > 0) node.attrs = attrs
  return node
}

/** Text nodes of a Y.XmlText; formatting attributes become marks (a `name--hash` key names its mark). */
export function yTextToJSON(text: Y.XmlText): DocNode[] {
  const nodes: DocNode[] = []
  for (const op of text.toDelta() as { insert: unknown; attributes?: Record<string, unknown> }[]) {
    if (typeof op.insert !== 'string' || op.insert === '') continue
    const node: DocNode = { type: 'text', text: op.insert }
    const marks = marksOf(op.attributes ?? {})
    if (marks.length > 0) node.marks = marks
    nodes.push(node)
  }
  return nodes
}

/** A text run's formatting attributes as marks (a `name--hash` key names its mark), in their order. */
export function marksOf(attributes: Record<string, unknown>): DocMark[] {
  return Object.entries(attributes).map(([key, attrs]): DocMark => {
    const type = key.replace(/--[A-Za-z0-9+/=]+$/, '')
    const markAttrs = attrs && typeof attrs === 'object' ? (attrs as Record<string, unknown>) : {}
    return Object.keys(markAttrs).length > 0 ? { type, attrs: markAttrs } : { type }
  })
}

/** Top-level children of the fragment that are elements (stray text at top level is not a block). */
export function topLevelElements(fragment: Y.XmlFragment): Y.XmlElement[] {
  return (fragment.toArray() as YChild[]).filter(
    (child): child is Y.XmlElement => child instanceof Y.XmlElement,
  )
}

/** The whole document as ProseMirror JSON. */
export function fragmentToJSON(fragment: Y.XmlFragment): DocNode {
  return { type: 'doc', content: topLevelElements(fragment).map(yElementToJSON) }
}
