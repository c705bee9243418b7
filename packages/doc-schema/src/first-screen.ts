/**
 * The first screen of a document as static HTML: its first top-level blocks drawn by the schema's own
 * `toDOM` (what the editor draws for them), for the web page to show, read-only, while its live editor
 * syncs and builds (docs/web.md, "Opening a large document"). Pure: the HTML is written as text by a small
 * element tree below, every text and attribute value escaped, no DOM needed.
 *
 * Bounded by the caller's limits: at most `maxBlocks` blocks and `maxWork` work in all (characters of text
 * plus elements, counted on the Yjs content before a block is converted); the first block that would pass
 * the work budget ends the screen, so one huge table or paragraph is never read whole. `more` says blocks
 * were left out (the page then says the rest is loading). A task's checkbox is written disabled: nothing
 * on this screen changes the document.
 */
import type { Node as PMNode } from '@tiptap/pm/model'
import * as Y from 'yjs'
import type { DocNode } from './doc-json.ts'
import { editorSchema, prosemirrorModel } from './lazy-libs.ts'
import type { FlatDocument } from './yjs/flat-read.ts'
import { yElementToJSON } from './yjs/read-y.ts'

export type FirstScreen = { html: string; blocks: number; more: boolean }

export function firstScreenHtml(
  source: Y.XmlFragment | FlatDocument,
  limits: { maxBlocks: number; maxWork: number },
): FirstScreen {
  const serializer = prosemirrorModel().DOMSerializer.fromSchema(editorSchema())
  const document = new TextDocument()
  const root = document.createDocumentFragment()
  // One past the limit: whether there is more is known without counting the rest.
  const children =
    source instanceof Y.XmlFragment
      ? yBlocks(source, limits.maxBlocks + 1)
      : flatBlocks(source, limits.maxBlocks + 1)
  let work = 0
  let blocks = 0
  let more = false
  for (const child of children) {
    if (blocks === limits.maxBlocks) {
      more = true
      break
    }
    const cost = child.work(limits.maxWork - work)
    if (cost === null) {
      more = true
      break
    }
    let node: PMNode
    try {
      node = editorSchema().nodeFromJSON(child.json())
      // The serializer builds with `document` alone, so what it returns is one of its nodes.
      const dom = serializer.serializeNode(node, { document: document as unknown as Document })
      root.appendChild(dom as unknown as ElementNode | TextNode)
    } catch {
      // Content the schema does not know (written before a type was removed): the screen ends before it.
      more = true
      break
    }
    work += cost
    blocks++
  }
  return { html: root.html(), blocks, more }
}

/** A top-level element of the first screen: what it costs (null past a budget), and its JSON. */
type ScreenBlock = { work(budget: number): number | null; json(): DocNode }

/** The elements among the fragment's first `count` entries (Yjs's `slice`: a string counts its characters). */
function* yBlocks(fragment: Y.XmlFragment, count: number): Generator<ScreenBlock> {
  for (const child of fragment.slice(0, count))
    if (child instanceof Y.XmlElement)
      yield { work: (budget) => workOf(child, budget), json: () => yElementToJSON(child) }
}

/** The same of a document read flat (yjs/flat-read.ts), counted the same way. */
function* flatBlocks(flat: FlatDocument, count: number): Generator<ScreenBlock> {
  let entries = 0
  for (const item of flat.topLevel()) {
    if (entries >= count) return
    if (item.name !== null) yield { work: (budget) => flat.work(item, budget), json: () => flat.json(item) }
    entries += item.length
  }
}

/** Characters of text plus elements in `element`, or null once past `budget` (the walk stops there). */
function workOf(element: Y.XmlElement, budget: number): number | null {
  let work = 0
  const stack: Array<Y.XmlElement | Y.XmlText | Y.XmlHook> = [element]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item instanceof Y.XmlText) work += item.length
    else if (item instanceof Y.XmlElement) {
      work += 1
      stack.push(...(item.toArray() as Array<Y.XmlElement | Y.XmlText>))
    }
    if (work > budget) return null
  }
  return work
}

/** Elements written without an end tag. */
const VOID = new Set(['area', 'br', 'col', 'embed', 'hr', 'img', 'input', 'source', 'track', 'wbr'])
/** Names as the schema's specs write them; anything else (or an event handler) is never written. */
const TAG_NAME = /^[a-z][a-z0-9-]*$/i
const ATTRIBUTE_NAME = /^[a-z_:][-a-z0-9_:.]*$/i
/** Elements whose content is not parsed as HTML: no spec of the schema makes them, and none is written. */
const NEVER = new Set(['script', 'style', 'template', 'textarea', 'title', 'noscript', 'xmp', 'plaintext'])

const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const escapeAttribute = (value: string) => escapeText(value).replace(/"/g, '&quot;')

/** The part of a DOM element tree DOMSerializer uses, written out as HTML. */
class TextNode {
  readonly nodeType = 3
  constructor(readonly text: string) {}
  html(): string {
    return escapeText(this.text)
  }
}

class ElementNode {
  readonly nodeType = 1
  private readonly attributes: Array<[string, string]> = []
  private readonly children: Array<ElementNode | TextNode | FragmentNode> = []
  constructor(readonly tag: string) {
    if (!TAG_NAME.test(tag) || NEVER.has(tag.toLowerCase())) throw new Error(`no element <${tag}>`)
  }
  setAttribute(name: string, value: unknown): void {
    if (!ATTRIBUTE_NAME.test(name) || /^on/i.test(name)) return
    this.attributes.push([name, String(value)])
  }
  setAttributeNS(_ns: string | null, name: string, value: unknown): void {
    this.setAttribute(name, value)
  }
  appendChild<T extends ElementNode | TextNode | FragmentNode>(child: T): T {
    this.children.push(child)
    return child
  }
  html(): string {
    // A task's checkbox on this screen changes nothing: it says so, as the editor does for a reader.
    if (this.tag.toLowerCase() === 'input') this.setAttribute('disabled', '')
    const attributes = this.attributes.map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`).join('')
    if (VOID.has(this.tag.toLowerCase())) return `<${this.tag}${attributes}>`
    return `<${this.tag}${attributes}>${this.children.map((c) => c.html()).join('')}</${this.tag}>`
  }
}

class FragmentNode {
  readonly nodeType = 11
  private readonly children: Array<ElementNode | TextNode | FragmentNode> = []
  appendChild<T extends ElementNode | TextNode | FragmentNode>(child: T): T {
    this.children.push(child)
    return child
  }
  html(): string {
    return this.children.map((c) => c.html()).join('')
  }
}

class TextDocument {
  createElement(tag: string) {
    return new ElementNode(tag)
  }
  createElementNS(_ns: string, tag: string) {
    return new ElementNode(tag)
  }
  createTextNode(text: string) {
    return new TextNode(text)
  }
  createDocumentFragment() {
    return new FragmentNode()
  }
}
