import type { BlockContent, ListItem, PhrasingContent, RootContent, TableCell, TableRow } from 'mdast'
import type { DocNode } from '../doc-json.ts'
import { CHARACTER_REFERENCE } from './escape-links.ts'
import { htmlBlockLines } from './html-in-text.ts'
import { inlineToMdast } from './inline-to-mdast.ts'
import { docNodeTooDeep, TOO_DEEP_NODE, tooDeepMdast } from './render-depth.ts'
import { escapeTypedMarkers, wholeProposed } from './suggestion-text.ts'

export type MediaStyle =
  /** `[image: alt]`, `[video: url]`, `[audio: url]`: what an agent reads (default). */
  | 'placeholder'
  /** `![alt](src "title")` for images, so a Markdown copy keeps them; embeds as placeholders. */
  | 'source'

export type SerializeOptions = {
  media?: MediaStyle
  /**
   * Pending suggestions (suggestion-marks.ts): `show` writes them as an agent reads them, proposed text as
   * `{++text++}` and text proposed for deletion as `{--text--}`; by default only accepted content is
   * written (proposed text left out, text proposed for deletion kept), as export and search hold it.
   */
  suggestions?: 'show'
  /**
   * Who writes phrasing (a paragraph's, heading's or cell's inline content): ours (phrasing-writer.ts) by
   * default; `library`, mdast-util-to-markdown's own writer, the reference the differential test holds ours
   * to byte for byte; `{ fallbacks }`, ours, adding why to `fallbacks` each time it leaves a container to
   * the library's writer.
   */
  phrasing?: 'library' | { fallbacks: string[] }
}

const NO_TABLE = { inTable: false }
const SHOWN = { inTable: false, suggestions: 'show' } as const
const inlineContext = (opts: SerializeOptions) => (opts.suggestions === 'show' ? SHOWN : NO_TABLE)

/**
 * One top-level block as mdast; an empty paragraph has no Markdown form and yields nothing. A block nested
 * deeper than MAX_NESTING_DEPTH is its placeholder line (render-depth.ts), so the recursion below, and the
 * serialiser's over the mdast, never go deeper than the ceiling.
 */
export function blockToMdast(node: DocNode, opts: SerializeOptions): RootContent[] {
  if (node === TOO_DEEP_NODE || docNodeTooDeep(node)) return [tooDeepMdast()]
  return nestedBlockToMdast(node, opts)
}

/**
 * A run of sibling blocks as mdast, read lazily. With `media: 'source'`, an image marked `sameLine` (it
 * shared a paragraph with what came before it in an imported file, like a row of README badges) is
 * appended to the paragraph written just before it, after a space, as it was in the file.
 */
export function* flowToMdast(
  blocks: Iterable<DocNode>,
  opts: SerializeOptions,
  convert: (node: DocNode, opts: SerializeOptions) => RootContent[] = blockToMdast,
): Generator<RootContent> {
  let last: RootContent | undefined
  for (const block of blocks) {
    if (opts.suggestions !== 'show' && wholeProposed(block)) continue
    const nodes = convert(block, opts)
    const only = nodes[0]
    if (
      opts.media === 'source' &&
      block.type === 'image' &&
      block.attrs?.sameLine === true &&
      last?.type === 'paragraph' &&
      nodes.length === 1 &&
      only?.type === 'paragraph'
    ) {
      last.children.push({ type: 'text', value: ' ' }, ...only.children)
      continue
    }
    if (nodes.length === 0) continue
    last = nodes.at(-1)
    // Yielded at once (a lazy reader reads one block ahead, no further); a `sameLine` image read next is
    // still appended to it, since the serialiser writes a node only after reading the one after it.
    yield* nodes
  }
}

/** A block already known to be within the ceiling, and the blocks inside it. */
function nestedBlockToMdast(node: DocNode, opts: SerializeOptions): RootContent[] {
  const content = node.content ?? []
  switch (node.type) {
    case 'paragraph': {
      const children = inlineToMdast(content, inlineContext(opts))
      return children.length === 0 ? [] : [{ type: 'paragraph', children }]
    }
    case 'heading': {
      const depth = Math.min(6, Math.max(1, Number(node.attrs?.level ?? 1))) as 1 | 2 | 3 | 4 | 5 | 6
      return [{ type: 'heading', depth, children: inlineToMdast(content, inlineContext(opts)) }]
    }
    case 'blockquote':
      return [{ type: 'blockquote', children: flow(content, opts) }]
    case 'bulletList':
    case 'orderedList':
    case 'taskList': {
      const ordered = node.type === 'orderedList'
      const start = ordered ? Number(node.attrs?.start ?? 1) : null
      const items = opts.suggestions === 'show' ? content : content.filter((item) => !wholeProposed(item))
      if (items.length === 0) return []
      const children = items.map((item) => listItem(item, opts))
      return [{ type: 'list', ordered, start, spread: false, children }]
    }
    case 'codeBlock': {
      const language = node.attrs?.language
      const value = content.map((text) => text.text ?? '').join('')
      // A `|` in the info string would let GFM read the fence line as a table header: not written.
      const lang = typeof language === 'string' && language && !language.includes('|') ? language : null
      return [{ type: 'code', lang, value }]
    }
    case 'horizontalRule':
      return [{ type: 'thematicBreak' }]
    case 'table':
      return [table(node, opts)]
    case 'image':
    case 'youtube':
    case 'mediaEmbed':
      return [{ type: 'paragraph', children: [mediaInline(node, opts)] }]
    default:
      // An unknown node (from a newer schema) still shows its text rather than vanishing.
      return [{ type: 'paragraph', children: [{ type: 'text', value: `[${node.type}]` }] }]
  }
}

/** Blocks inside a list item or a quote. */
function flow(nodes: DocNode[], opts: SerializeOptions): BlockContent[] {
  return [...flowToMdast(nodes, opts, innerBlockToMdast)] as BlockContent[]
}

/**
 * A block inside a list item or a quote: as at the top level, except that a paragraph holding the lines of
 * an HTML block (imported from one there) is written as that HTML block again (html-in-text.ts). At the
 * top level a file's HTML block imports as an `html` code block instead, so such a paragraph stays text.
 */
function innerBlockToMdast(node: DocNode, opts: SerializeOptions): RootContent[] {
  const html = htmlBlockLines(node)
  return html === null ? nestedBlockToMdast(node, opts) : [{ type: 'html', value: html }]
}

function listItem(item: DocNode, opts: SerializeOptions): ListItem {
  const checked = item.type === 'taskItem' ? Boolean(item.attrs?.checked) : null
  const [first, ...rest] = item.content ?? []
  const after = rest.flatMap(withoutEmptyItems)
  // An empty first paragraph has to be written when it is all there is, or a task item loses its checkbox;
  // before other blocks it cannot be (an item may not start with a blank line) and the parser restores it,
  // except under a checkbox, which keeps the line from being blank.
  if (
    first?.type === 'paragraph' &&
    (first.content ?? []).length === 0 &&
    (rest.length === 0 || checked !== null)
  )
    return itemOf(checked, [{ type: 'paragraph', children: [] }, ...flow(after, opts)])
  // The rest is written in the same run as the first block, so an image marked `sameLine` joins its line
  // whether the first block or one after it precedes it. After a checkbox a line is no HTML block: a task
  // item's first paragraph stays a paragraph.
  const head = first
  const convert = (node: DocNode, o: SerializeOptions) =>
    node === head && checked !== null ? nestedBlockToMdast(node, o) : innerBlockToMdast(node, o)
  const blocks = first ? [first, ...after] : after
  return itemOf(checked, [...flowToMdast(blocks, opts, convert)] as BlockContent[])
}

function itemOf(checked: boolean | null, children: BlockContent[]): ListItem {
  return { type: 'listItem', spread: false, checked, children }
}

/**
 * A nested list drops its empty items: an empty item cannot follow a paragraph in Markdown (it would read
 * back as a setext underline), and an empty item carries nothing.
 */
function withoutEmptyItems(block: DocNode): DocNode[] {
  if (!LIST_TYPES.has(block.type)) return [block]
  const items = (block.content ?? []).filter((item) => !(item.content ?? []).every(isBlank))
  return items.length === 0 ? [] : [{ ...block, content: items }]
}

const LIST_TYPES = new Set(['bulletList', 'orderedList', 'taskList'])

/** An empty paragraph, or a list whose items hold only blanks. */
function isBlank(block: DocNode): boolean {
  if (block.type === 'paragraph') return (block.content ?? []).length === 0
  if (!LIST_TYPES.has(block.type)) return false
  return (block.content ?? []).every((item) => (item.content ?? []).every(isBlank))
}

/** An `&` that reads as a character reference's start (escape-links.ts). */
const CHARACTER_REFERENCE_START = new RegExp(`&(?=${CHARACTER_REFERENCE})`, 'g')

/** Media as one inline node: a placeholder an agent can read and write back, or an image. */
export function mediaInline(node: DocNode, opts: SerializeOptions): PhrasingContent {
  const src = String(node.attrs?.src ?? '')
  if (node.type === 'image') {
    const alt = typeof node.attrs?.alt === 'string' ? node.attrs.alt : ''
    if (opts.media === 'source' && src) {
      const title = typeof node.attrs?.title === 'string' ? node.attrs.title : null
      const image: PhrasingContent = { type: 'image', url: src, alt, title }
      const href = node.attrs?.href
      return typeof href === 'string' && href
        ? { type: 'link', url: href, title: null, children: [image] }
        : image
    }
    // Raw html so the brackets are not escaped: the placeholder reads the same in every view. Shown with
    // suggestions, a marker typed into the alt text is escaped as block text's is.
    const shown = opts.suggestions === 'show' ? escapeTypedMarkers(alt) : alt
    return { type: 'html', value: alt ? `[image: ${shown}]` : '[image]' }
  }
  const kind = node.type === 'mediaEmbed' && node.attrs?.kind === 'audio' ? 'audio' : 'video'
  // A source holding what reads as a character reference (`x&#x20;`, only from a file that escaped it)
  // keeps it as text: the parsers decode it otherwise, and the placeholder would read back as other text.
  return { type: 'html', value: `[${kind}: ${src.replace(CHARACTER_REFERENCE_START, '\\&')}]` }
}

function table(node: DocNode, opts: SerializeOptions) {
  const rows = node.content ?? []
  const first = rows[0]?.content ?? []
  const align = first.map((cell) => {
    const value = cell.attrs?.align
    return value === 'left' || value === 'center' || value === 'right' ? value : null
  })
  const children: TableRow[] = rows.map((row) => ({
    type: 'tableRow',
    children: (row.content ?? []).map((cell) => tableCell(cell, opts)),
  }))
  return { type: 'table' as const, align, children }
}

/** A cell holds blocks; Markdown cells hold one line: blocks are joined by `<br>`, lists become text. */
function tableCell(cell: DocNode, opts: SerializeOptions): TableCell {
  const children: PhrasingContent[] = []
  const blocks = cell.content ?? []
  for (const block of blocks) {
    const inline = cellBlockInline(block, opts, blocks.length > 1)
    if (inline.length === 0) continue
    const sameLine = opts.media === 'source' && block.type === 'image' && block.attrs?.sameLine === true
    if (children.length > 0)
      children.push(sameLine ? { type: 'text', value: ' ' } : { type: 'html', value: '<br>' })
    children.push(...inline)
  }
  return { type: 'tableCell', children }
}

function cellBlockInline(block: DocNode, opts: SerializeOptions, sharedLine: boolean): PhrasingContent[] {
  if (block.type === 'paragraph' || block.type === 'heading') {
    return inlineToMdast(block.content ?? [], { inTable: true, sharedLine, suggestions: opts.suggestions })
  }
  if (block.type === 'image' || block.type === 'youtube' || block.type === 'mediaEmbed') {
    return [mediaInline(block, opts)]
  }
  const text = plainTextOf(block)
  return text === '' ? [] : [{ type: 'text', value: text }]
}

function plainTextOf(node: DocNode): string {
  if (node.type === 'text') return node.text ?? ''
  return (node.content ?? []).map(plainTextOf).join(' ')
}
