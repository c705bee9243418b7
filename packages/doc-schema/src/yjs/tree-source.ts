/**
 * What the walks that describe a document read of its tree (section revs and sizes, section-rev.ts; plain
 * text and titles, plain-text.ts): Yjs's types (`Y_TREE`), or the rows of a stored state read flat
 * (flat-read.ts `FlatDocument.tree`), which answer the same. A node is an element, a text or other
 * content (one entry per entry of Yjs's `toArray`: a character of a string in an element, a hook).
 */
import * as Y from 'yjs'

export const ELEMENT = 0
export const TEXT = 1
export const OTHER = 2

/** One operation of Yjs's `toDelta`: a string run with its format attributes, or an embed or a type. */
export type DeltaOp = { insert: unknown; attributes?: Record<string, unknown> }

export type TreeSource<N> = {
  kind(node: N): typeof ELEMENT | typeof TEXT | typeof OTHER
  /** An element's name (`nodeName`). */
  name(element: N): string
  /** `getAttributes()`: every attribute set, by key. */
  attributes(element: N): Record<string, unknown>
  /** `getAttribute(key)`. */
  attribute(element: N, key: string): unknown
  /** `toArray()`: its content in order, one node per entry (a fresh array the caller may change). */
  children(element: N): N[]
  /** A text's `toDelta()`. */
  delta(text: N): DeltaOp[]
}

type YNode = Y.XmlElement | Y.XmlText | Y.XmlHook | unknown

/** Yjs's types as the walks read them. */
export const Y_TREE: TreeSource<YNode> = {
  kind: (node) => (node instanceof Y.XmlElement ? ELEMENT : node instanceof Y.XmlText ? TEXT : OTHER),
  name: (element) => (element as Y.XmlElement).nodeName,
  attributes: (element) => (element as Y.XmlElement).getAttributes() as Record<string, unknown>,
  attribute: (element, key) => (element as Y.XmlElement).getAttribute(key),
  children: (element) => (element as Y.XmlElement).toArray(),
  delta: (text) => (text as Y.XmlText).toDelta() as DeltaOp[],
}
