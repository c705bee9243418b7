/**
 * What replace_text looks in: the texts (Y.XmlText) of a section's heading and blocks, each with its block
 * number, and the shapes a read shows that are not text (media, tables, code fences, rules), so a line of
 * them copied from a read is refused for what it is.
 */
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { MAX_NESTING_DEPTH } from '../limits.ts'
import { mediaInline } from '../markdown/blocks-to-mdast.ts'
import { blocksToMarkdown } from '../markdown/serialize-markdown.ts'
import { yTextString } from '../yjs/plain-text.ts'
import { yElementToJSON } from '../yjs/read-y.ts'

/** One Y.XmlText of the section: its block number (0 = the heading), its text, and its code block if any. */
export type TextUnit = {
  text: Y.XmlText
  string: string
  block: number
  inCode: boolean
  /** For text in a code block: the code block (its line prefix is `codeLinePrefix(root, code)`). */
  code?: Y.XmlElement
  /** The heading or block the text is in. */
  root: Y.XmlElement
}

/** Elements a read shows as lines that are not text: media, tables, code blocks and rules, with their block. */
export type Shape = { element: Y.XmlElement; block: number; top: boolean }

export type SectionTexts = { units: TextUnit[]; shapes: Shape[] }

const MEDIA = new Set(['image', 'youtube', 'mediaEmbed'])
const SHAPES = new Set([...MEDIA, 'table', 'codeBlock', 'horizontalRule'])

/** Every Y.XmlText under the elements (block number = index), in document order, and their shapes. */
export function sectionTexts(elements: readonly Y.XmlElement[], only?: number): SectionTexts {
  const out: SectionTexts = { units: [], shapes: [] }
  elements.forEach((element, number) => {
    if (only === undefined || only === number) collect(element, number, out)
  })
  return out
}

/** Iterative: depth is the document's choice. */
function collect(root: Y.XmlElement, block: number, out: SectionTexts) {
  const stack: Array<[Y.XmlElement | Y.XmlText, Y.XmlElement | undefined]> = [[root, undefined]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, code] = entry
    if (node instanceof Y.XmlText) {
      const unit: TextUnit = {
        text: node,
        string: yTextString(node),
        block,
        inCode: code !== undefined,
        root,
      }
      if (code) unit.code = code
      out.units.push(unit)
      continue
    }
    if (SHAPES.has(node.nodeName)) out.shapes.push({ element: node, block, top: node === root })
    const childCode = code ?? (node.nodeName === 'codeBlock' ? node : undefined)
    const children = node.toArray()
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i]
      if (child instanceof Y.XmlElement || child instanceof Y.XmlText) stack.push([child, childCode])
    }
  }
}

/** How a read shows a media element: its placeholder line (`[image: alt]`, `[video: url]`). */
export function mediaPlaceholder(element: Y.XmlElement): string | undefined {
  if (!MEDIA.has(element.nodeName)) return undefined
  const shown = mediaInline(yElementToJSON(element), { media: 'placeholder' })
  return shown.type === 'html' ? shown.value : undefined
}

/** Stands in for the code's text while its line prefix is rendered; a private-use character. */
const SENTINEL = '\uE000'

/**
 * What a read writes before each line of the code block `code` (inside `root`): '' at the top level, the
 * indentation and quote markers of the lists and quotes around it otherwise. Rendered, not assumed: the
 * elements from `root` down to it (each with only the child on that path, an ordered list starting at that
 * item's number) go through the read's own Markdown writer with the code replaced by a sentinel line.
 */
export function codeLinePrefix(root: Y.XmlElement, code: Y.XmlElement): string {
  const path: Y.XmlElement[] = [code]
  for (let node = code; node !== root; ) {
    const parent = node.parent
    // Past the render ceiling a read shows no code there (TOO_DEEP_TEXT).
    if (!(parent instanceof Y.XmlElement) || path.length > MAX_NESTING_DEPTH) return ''
    path.unshift(parent)
    node = parent
  }
  if (path.length <= 1) return ''
  let node: DocNode = {
    type: 'codeBlock',
    attrs: yElementToJSON(path.at(-1)!).attrs ?? {},
    content: [{ type: 'text', text: SENTINEL }],
  }
  for (let level = path.length - 2; level >= 0; level--) {
    const element = path[level]!
    const child = path[level + 1]!
    const attrs: Record<string, unknown> = { ...element.getAttributes() }
    if (element.nodeName === 'orderedList') {
      const index = element.toArray().indexOf(child)
      attrs.start = Number(attrs.start ?? 1) + Math.max(0, index)
    }
    node = { type: element.nodeName, attrs, content: [node] }
  }
  const line = blocksToMarkdown([node])
    .split('\n')
    .find((l) => l.includes(SENTINEL))
  return line === undefined ? '' : line.slice(0, line.indexOf(SENTINEL))
}
