/**
 * Builders of document content through Yjs, as an editor's updates build it (Markdown cannot build some of
 * it: a list nested past every ceiling): doc-schema's tests use them, and test-support hands them on to the
 * server's tests and the benchmarks (`@collab/doc-schema/test-builders`).
 */
import * as Y from 'yjs'

export { type Rng, seededRandom } from './seeded-random.ts'

/** A Yjs element with attributes and children, as an editor would insert it. */
export function element(
  name: string,
  attrs: Record<string, unknown> = {},
  children: Array<Y.XmlElement | Y.XmlText> = [],
): Y.XmlElement {
  const el = new Y.XmlElement(name)
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value as string)
  el.insert(0, children)
  return el
}

export const paragraph = (text: string): Y.XmlElement => element('paragraph', {}, [new Y.XmlText(text)])

/**
 * A bullet list nested `depth` levels deep, each item a paragraph "level N" and the next list: the deepest
 * paragraph sits at element level 2 × depth + 1.
 */
export function nestedList(depth: number): Y.XmlElement {
  let inner: Y.XmlElement | undefined
  for (let level = depth; level >= 1; level--) {
    const item = new Y.XmlElement('listItem')
    item.insert(0, inner ? [paragraph(`level ${level}`), inner] : [paragraph(`level ${level}`)])
    const list = new Y.XmlElement('bulletList')
    list.insert(0, [item])
    inner = list
  }
  return inner!
}
