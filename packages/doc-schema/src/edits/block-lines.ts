/**
 * The lines of one block as a section read prints them, and which of them start a list item or a table
 * row: what `editBlocks`' `inBlock` numbers. The numbers are taken from the read itself: the block is
 * rendered by the read view's own functions (`markedBlockPrefix`, `blocksToMarkdown`) and that text is read back with markdown-it,
 * whose tokens say on which line each item and row starts; the items and rows found are paired, in
 * document order, with the block's Yjs elements. Nothing here assumes how the export writes a table or a
 * nested list, so a change of the export moves the numbers with what the read shows.
 */
import type MarkdownIt from 'markdown-it'
import * as Y from 'yjs'
import { markdownIt } from '../lazy-libs.ts'
import { MAX_IN_BLOCK_CHARS } from '../limits.ts'
import { exactBefore, markedBlockPrefix, renderWork } from '../markdown/block-prefix.ts'
import { blocksToMarkdown } from '../markdown/serialize-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { derivedFromText, keepBlockText } from '../sections/block-text-memo.ts'

/** Elements a line can address: an item of a list, a row of a table. */
export const ITEM_TYPES: ReadonlySet<string> = new Set(['listItem', 'taskItem', 'tableRow'])
/** Elements that hold them: what an item's sub-items are written in. */
export const CONTAINER_TYPES: ReadonlySet<string> = new Set([
  'bulletList',
  'orderedList',
  'taskList',
  'table',
])

/** One item or row: its element and the lines it spans as read (1-based, `end` inclusive, sub-items included). */
export type ItemLine = { element: Y.XmlElement; line: number; end: number; index: number }

export type BlockLines = {
  /** The block's Markdown as read, one entry per line (line n is `lines[n - 1]`): all of it when
   * `complete`, else its first lines (enough for the lines asked about). */
  lines: string[]
  complete: boolean
  /** Every item and row in those lines, in the order the read prints them (a parent before its sub-items). */
  items: ItemLine[]
  byLine: ReadonlyMap<number, ItemLine>
  byElement: ReadonlyMap<Y.XmlElement, ItemLine>
  /** A table's `| - |` line, with the header row above it. */
  separators: ReadonlyMap<number, ItemLine>
  /** Every item and row of the block (read or not), in document order. */
  elements: readonly Y.XmlElement[]
}

// The same reading of tables and lists as the Markdown an agent writes (parse-markdown.ts).
let parser: MarkdownIt | undefined
const readParser = () =>
  (parser ??= new (markdownIt())('default', { html: true, linkify: false, typographer: false }))

/** How section reads render a block (render-section.ts): media as readable placeholders. */
const READ_OPTIONS = { media: 'placeholder', suggestions: 'show' } as const

/** Characters of a block's Markdown rendered first; more are rendered while needed (see blockLines). */
const FIRST_CHARS = 1_024

/** Items and rows under `block`, in document order (depth first, a parent before its children). */
function itemElements(block: Y.XmlElement): Y.XmlElement[] {
  const out: Y.XmlElement[] = []
  const stack: Y.XmlElement[] = [block]
  for (let element = stack.pop(); element !== undefined; element = stack.pop()) {
    if (element !== block && ITEM_TYPES.has(element.nodeName)) out.push(element)
    const children = element.toArray()
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i]
      if (child instanceof Y.XmlElement) stack.push(child)
    }
  }
  return out
}

function isInside(element: Y.XmlElement, ancestor: Y.XmlElement): boolean {
  for (let parent = element.parent; parent; parent = parent.parent) if (parent === ancestor) return true
  return false
}

/**
 * Reads `markdown` (the whole block's Markdown, or its start) back: the line each item and row starts on,
 * paired in order with `elements`. A start is cut to whole lines, less the last one, whose meaning can
 * depend on the line after it (a table's header is one only above its delimiter line).
 */
function readBack(
  blockNumber: number,
  markdown: string,
  complete: boolean,
  elements: Y.XmlElement[],
): Result<BlockLines> {
  let lines = markdown.split('\n')
  if (!complete) lines = lines.slice(0, -1)
  const starts: Array<[number, number]> = []
  const separators: number[] = []
  if (elements.length > 0) {
    for (const token of readParser().parse(lines.join('\n'), {})) {
      if ((token.type === 'list_item_open' || token.type === 'tr_open') && token.map)
        starts.push([token.map[0] + 1, token.map[1]])
      if (token.type === 'table_open' && token.map) separators.push(token.map[0] + 2)
    }
  }
  if (complete ? starts.length !== elements.length : starts.length > elements.length) {
    return refuseFor(
      'lines_unmatched',
      `inBlock: block ${blockNumber}'s Markdown as read does not show its ${elements.length} items and rows one ` +
        'to a line; edit the block whole (removeBlocks and markdown without inBlock).',
      'inBlock',
    )
  }
  const items = starts.map(
    ([line, end], index): ItemLine => ({ element: elements[index]!, line, end, index }),
  )
  const byLine = new Map(items.map((item) => [item.line, item]))
  const separatorMap = new Map<number, ItemLine>()
  for (const line of separators) {
    const header = byLine.get(line - 1)
    if (header) separatorMap.set(line, header)
  }
  return ok({
    lines,
    complete,
    items,
    byLine,
    byElement: new Map(items.map((item) => [item.element, item])),
    separators: separatorMap,
    elements,
  })
}

/**
 * True when `read` settles every line in `lines`: each is among the lines read with a line after it, an
 * item or row starts after it, and each item starting on one of them is closed (an item that is not inside
 * it starts after it), so its sub-items and its last line are known.
 */
function settles(read: BlockLines, lines: readonly number[]): boolean {
  if (read.complete) return true
  const last = Math.max(0, ...lines)
  if (read.lines.length <= last + 1 || (read.items.at(-1)?.line ?? 0) <= last) return false
  for (const n of lines) {
    const item = read.byLine.get(n)
    if (!item) continue
    let next = item.index + 1
    while (next < read.elements.length && isInside(read.elements[next]!, item.element)) next++
    if (next >= read.items.length) return false
  }
  return true
}

/**
 * The start of the block's Markdown as a read renders it, about `budget` characters of its text: only what
 * the serialiser wrote before the cut is kept, and of that only what the whole block's Markdown starts with
 * (exactBefore), so the start is exact, if shorter than the budget; a read's MAX_RENDER_WORK bounds it too.
 */
function markdownStart(
  block: Y.XmlElement,
  budget: number,
): { text: string; complete: boolean; byWork?: boolean } {
  const { node, cut, markable, byWork } = markedBlockPrefix(block, budget, renderWork())
  const text = blocksToMarkdown([node], READ_OPTIONS)
  if (!cut) return { text, complete: true }
  return { text: text.slice(0, markable ? Math.max(0, exactBefore(text)) : 0), complete: false, byWork }
}

/**
 * The lines of block `blockNumber` as a section read prints them (rendered by the read's own function) and
 * the items and rows they start, as far as needed to settle `lines` (see `settles`; all of the block when
 * `lines` is undefined), rendering no more than MAX_IN_BLOCK_CHARS characters of it, nor more than a read's
 * MAX_RENDER_WORK: past that, `complete` is false and the lines asked about may be beyond what was read.
 * Refused when the read's text does not read back as the block's items.
 *
 * When the block's text is kept (block-text-memo.ts: what a read printed of it, or an earlier call
 * rendered, with no change to the block since) and it settles `lines`, nothing is rendered: the lines come
 * from that text, and are kept beside it for the next call.
 */
export function blockLines(
  block: Y.XmlElement,
  blockNumber: number,
  lines?: readonly number[],
): Result<BlockLines> {
  const known = derivedFromText(block, ({ text, complete }) => {
    const read = readBack(blockNumber, text, complete, itemElements(block))
    return read.kind === 'ok' ? read.value : undefined
  })
  if (known && (lines === undefined ? known.complete : settles(known, lines))) return ok(known)
  const elements = itemElements(block)
  const last = lines === undefined ? undefined : Math.max(0, ...lines)
  for (let chars = FIRST_CHARS; ; ) {
    const budget = Math.min(chars, MAX_IN_BLOCK_CHARS)
    // Markup costs the serialiser more than characters do: a read's allowance bounds it too.
    const prefix = markdownStart(block, budget)
    keepBlockText(block, prefix.text, prefix.complete)
    const read = readBack(blockNumber, prefix.text, prefix.complete, elements)
    if (read.kind === 'error' || budget === MAX_IN_BLOCK_CHARS || prefix.byWork) return read
    if (lines !== undefined && settles(read.value, lines)) return read
    if (read.value.complete) return read
    // Next, about as many characters as the lines up to the last one named take at this block's rate
    // (a quarter more, and a few lines past it, so one more rendering is usually the last), at least twice
    // as many as this time.
    const perLine = prefix.text.length / Math.max(1, read.value.lines.length)
    const wanted = last === undefined ? chars * 4 : Math.ceil(perLine * (last + 8) * 1.25)
    chars = Math.max(chars * 2, wanted)
  }
}

/** The items and rows inside `item` (its sub-items, at any depth), in print order. */
export function subItems(read: BlockLines, item: ItemLine): ItemLine[] {
  const out: ItemLine[] = []
  for (let i = item.index + 1; i < read.items.length && read.items[i]!.line <= item.end; i++)
    out.push(read.items[i]!)
  return out
}

/** Line numbers as a short list: "2, 3, 5" or, past a few, "2, 3, 5, … 40 (12 lines)". */
export function lineList(numbers: readonly number[]): string {
  if (numbers.length <= 6) return numbers.join(', ')
  return `${numbers.slice(0, 4).join(', ')}, … ${numbers.at(-1)} (${numbers.length} lines)`
}

/** The item lines around line `n`: the one before it and the one after it, for a refusal to offer. */
function neighbours(read: BlockLines, n: number): string {
  const before = read.items.filter((item) => item.line < n).at(-1)
  const after = read.items.find((item) => item.line > n)
  const near = [before?.line, after?.line].filter((line): line is number => line !== undefined)
  return near.length > 0 ? ` (the nearest are ${near.join(' and ')})` : ''
}

/**
 * Why line `n` (a line of the block, not one an item or row starts on) cannot be named, and what to name
 * instead; `field` is the argument that named it.
 */
export function describeLine(read: BlockLines, blockNumber: number, n: number, field: string): string {
  const where = `${field}: line ${n} of block ${blockNumber}`
  const header = read.separators.get(n)
  if (header) {
    // A table prints one line a row: its header, the "| - |" line, then the other rows.
    const rows = (header.element.parent as Y.XmlElement).toArray().length
    const last = n + rows - 1
    const body = last > n ? `lines ${header.line} and ${n + 1}–${last}` : `line ${header.line}`
    return (
      `${where} is the table's "| - |" separator line, which is no row (the header row above it draws it); ` +
      `the rows are ${body}. To change the header, replace line ${header.line}; to add a row right under ` +
      `the header, give afterBlock: ${n}.`
    )
  }
  const text = read.lines[n - 1] ?? ''
  if (/^[\s>]*$/.test(text)) {
    return `${where} is a blank line; name the line an item or row starts on${neighbours(read, n)}.`
  }
  const holder = read.items.filter((item) => item.line < n && item.end >= n).at(-1)
  if (holder) {
    return (
      `${where} is part of the item on line ${holder.line}, not an item of its own; to change it, replace ` +
      `that item: removeBlocks: [${holder.line}] with the item's new Markdown.`
    )
  }
  return `${where} starts no list item or table row; name the line an item or row starts on${neighbours(read, n)}, or edit the block whole without inBlock.`
}
