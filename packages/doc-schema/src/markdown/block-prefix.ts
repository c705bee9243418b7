import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { MAX_RENDER_WORK } from '../limits.ts'
import { yTextToJSON } from '../yjs/read-y.ts'
import type { SerializeOptions } from './blocks-to-mdast.ts'
import { LABEL_LOOKAHEAD_CHARS } from './escape-links.ts'
import { TOO_DEEP_NODE, yElementTooDeep } from './render-depth.ts'
import { blocksToMarkdown } from './serialize-markdown.ts'

/**
 * The start of one top-level block, for reads that show only the start of a block. A block is one unit
 * for the serialiser, and one block can be most of a document (a list of 100,000 items, a 15 MB
 * paragraph): rendering it whole to show 500 characters of it costs the block, not the read. So the block
 * is converted only as far as a text budget reaches (`blockPrefix`), and rendered from that.
 *
 * Where the cut lands in the rendered text is found by a marker appended to the last text kept, so only
 * what the serialiser wrote before it is used (less a few characters, whose escaping can depend on the
 * next ones: a short link's text, a definition's label; CUT_MARK_MARGIN). A cut table keeps its column count
 * (see `padCutTables`). What the serialiser writes for content otherwise depends only on that content and
 * what came before it; the exceptions, all in content only a hostile editor writes, change how the start is
 * written, never what it says: a code block whose later text has a longer run of backticks (a longer
 * fence), a code span of spaces cut, a list whose later item starts with a horizontal rule (the other
 * bullet character), a paragraph in a list item or quote that starts like an HTML block and has a marked
 * line after the cut (written as an HTML block when cut, as escaped text whole).
 */
/** Text past the needed characters that a cut block keeps, so the end of the cut never reaches them. */
export const PREFIX_SLACK_CHARS = 4_096

/** What is left of one read's MAX_RENDER_WORK, shared by the blocks it renders. */
export type RenderWork = { left: number }

/** A fresh allowance for one read. */
export const renderWork = (): RenderWork => ({ left: MAX_RENDER_WORK })

type YChild = Y.XmlElement | Y.XmlText | Y.XmlHook

/** One entry of an element's content as blockPrefix reads it: an element, a text, or anything else. */
export type BlockChild<E> = { element: E } | { runs(): DocNode[] } | null

/**
 * What blockPrefix reads of a block's elements: Yjs's (`Y_BLOCKS`), or a document read flat's rows
 * (yjs/flat-read.ts), which give the same answers.
 */
export type BlockSource<E> = {
  /** `yElementTooDeep`. */
  tooDeep(element: E): boolean
  /** Its type and attributes (`shallowNode`). */
  shallow(element: E): DocNode
  /** Its content in order, one entry per entry of Yjs's `toArray` (a text's runs as `yTextToJSON`). */
  children(element: E): Array<BlockChild<E>>
  name(element: E): string
  /** Yjs's `length`: its count of content entries. */
  entries(element: E): number
}

/** Yjs elements as blockPrefix reads them. */
export const Y_BLOCKS: BlockSource<Y.XmlElement> = {
  tooDeep: yElementTooDeep,
  shallow: shallowNode,
  children: (element) =>
    (element.toArray() as YChild[]).map((child) =>
      child instanceof Y.XmlElement
        ? { element: child }
        : child instanceof Y.XmlText
          ? { runs: () => yTextToJSON(child) }
          : null,
    ),
  name: (element) => element.nodeName,
  entries: (element) => element.length,
}

export type BlockPrefix = {
  /** The block as JSON: whole, TOO_DEEP_NODE, or its start when `cut`. */
  node: DocNode
  /** True when content was left out. */
  cut: boolean
  /** The last text node kept (a fresh object, safe to change), if any. */
  lastText?: DocNode
  /** True when the cut came from the work allowance running out, not the character budget. */
  byWork?: boolean
}

/**
 * Marks where a cut block's kept text ends; private-use characters, which the serialiser never escapes.
 * The last occurrence is the marker: everything written after it is structure, never content text.
 */
const CUT_MARK = '\uE000\uE001\uE002'

/**
 * Characters before the marker not relied on: escaping of a character can depend on what follows it, up to
 * a link's whole text when it is short (LABEL_LOOKAHEAD_CHARS, escape-links.ts: its brackets balance).
 */
const CUT_MARK_MARGIN = LABEL_LOOKAHEAD_CHARS + 56

/** A block cut for rendering, with the marker appended to its last text; `markable` is false without one. */
export function markedBlockPrefix<E = Y.XmlElement>(
  element: E,
  budget: number,
  work?: RenderWork,
  freeChars = 0,
  source: BlockSource<E> = Y_BLOCKS as unknown as BlockSource<E>,
): BlockPrefix & { markable: boolean } {
  const prefix = blockPrefix(element, budget, work, freeChars, source)
  if (!prefix.cut || !prefix.lastText) return { ...prefix, markable: false }
  prefix.lastText.text = `${prefix.lastText.text ?? ''}${CUT_MARK}`
  return { ...prefix, markable: true }
}

/**
 * How many characters of `rendered` (Markdown holding one marked cut block) are exactly what the whole
 * block would give; -1 when the marker is not in it (the cut block was not written).
 */
export function exactBefore(rendered: string): number {
  const at = rendered.lastIndexOf(CUT_MARK)
  return at === -1 ? -1 : Math.max(0, at - CUT_MARK_MARGIN)
}

/**
 * The block as `yElementToJSON` gives it, but with content (in document order) only up to `budget`
 * characters of text, each element counting one: the rest is left out and `cut` says so. A block past
 * MAX_NESTING_DEPTH is TOO_DEEP_NODE. Iterative; reads nothing past the budget except the child lists of
 * the elements it enters (and a cut table's row lengths).
 *
 * With `work`, each element and text run kept also spends from it (a run two more per mark) once the
 * first `freeChars` of the budget are kept, and the block is cut where it runs out (`byWork`), though
 * only after some text is kept, so the cut can be marked; elements with no text stay bounded by `budget`.
 */
export function blockPrefix<E = Y.XmlElement>(
  element: E,
  budget: number,
  work?: RenderWork,
  freeChars = 0,
  source: BlockSource<E> = Y_BLOCKS as unknown as BlockSource<E>,
): BlockPrefix {
  if (source.tooDeep(element)) return { node: TOO_DEEP_NODE, cut: false }
  type Frame = { element: E; node: DocNode; children: Array<BlockChild<E>>; next: number }
  const root = source.shallow(element)
  const stack: Frame[] = [{ element, node: root, children: source.children(element), next: 0 }]
  let left = budget - 1
  let cut = false
  let byWork = false
  let lastText: DocNode | undefined
  /** Spends `units` of work, once past the free start. */
  const spend = (units: number) => {
    if (!work || budget - 1 - left < freeChars) return
    work.left -= units
  }
  const exhausted = () => work !== undefined && lastText !== undefined && work.left <= 0
  walk: while (stack.length > 0) {
    const frame = stack.at(-1)!
    if (frame.next >= frame.children.length) {
      stack.pop()
      continue
    }
    if (left <= 0) {
      cut = true
      break
    }
    if (exhausted()) {
      cut = byWork = true
      break
    }
    const child = frame.children[frame.next++]
    if (!child) continue
    if ('element' in child) {
      const node = source.shallow(child.element)
      append(frame.node, node)
      left -= 1
      spend(1)
      stack.push({ element: child.element, node, children: source.children(child.element), next: 0 })
    } else {
      const runs = child.runs()
      const before = lastText
      for (let index = 0; index < runs.length; index++) {
        const text = runs[index]!
        const value = text.text ?? ''
        if (left <= 0) {
          cut = true
          break walk
        }
        if (exhausted()) {
          // Marks nest by the reach of their runs (inline-to-mdast.ts), so a cut inside a mark's run can
          // change how the runs before it are written. Cut back to where no mark goes on across.
          let keep = index
          while (keep > 0 && sharesMark(runs[keep - 1]!, runs[keep]!)) keep--
          const content = frame.node.content ?? []
          content.splice(content.length - (index - keep), index - keep)
          lastText = keep > 0 ? runs[keep - 1] : before
          cut = byWork = true
          break walk
        }
        spend(1 + 2 * (text.marks?.length ?? 0))
        if (value.length > left) {
          text.text = value.slice(0, safeEnd(value, left))
          append(frame.node, text)
          lastText = text
          cut = true
          break walk
        }
        append(frame.node, text)
        lastText = text
        left -= value.length
      }
    }
  }
  if (cut) padCutTables(stack, source)
  const prefix: BlockPrefix = lastText ? { node: root, cut, lastText } : { node: root, cut }
  if (byWork) prefix.byWork = true
  return prefix
}

/**
 * The Markdown of a block's start: whole (`complete`), or exactly its first `minChars` characters. With
 * `work`, spent from it past the first `freeChars` characters (see blockPrefix), the start can be shorter
 * than `minChars` when the allowance ran out first (`byWork`); it still reaches past `freeChars`.
 */
export function blockMarkdownPrefix(
  element: Y.XmlElement,
  minChars: number,
  opts: SerializeOptions = {},
  work?: RenderWork,
  freeChars = 0,
): { text: string; complete: boolean; byWork?: boolean } {
  let free = freeChars
  for (let slack = PREFIX_SLACK_CHARS; ; slack *= 4) {
    // Each attempt starts from what was left: only the attempt returned is charged.
    const attempt = work ? { left: work.left } : undefined
    const { node, cut, markable, byWork } = markedBlockPrefix(element, minChars + slack, attempt, free)
    const text = blocksToMarkdown([node], opts)
    const charge = () => {
      if (work && attempt) work.left = attempt.left
    }
    if (!cut) {
      charge()
      return { text, complete: true }
    }
    const exact = markable ? exactBefore(text) : -1
    if (exact >= minChars) {
      charge()
      return { text: text.slice(0, minChars), complete: false }
    }
    if (byWork) {
      // Past the part already shown: a read from `freeChars` progresses. Else (Markdown shorter than its
      // text before that point, as code spans of spaces are) more of the start is free.
      if (exact > freeChars) {
        charge()
        return { text: text.slice(0, exact), complete: false, byWork: true }
      }
      free = Math.max(free * 2, minChars + slack)
    }
    // Too little was written before the cut (little or no text, or Markdown shorter than its text, as a
    // code span of spaces is): read further.
  }
}

/** Whether two adjacent runs carry the same mark (same attributes): a mark that goes on across them. */
function sharesMark(left: DocNode, right: DocNode): boolean {
  if (!left.marks || !right.marks) return false
  const keys = new Set(left.marks.map((mark) => JSON.stringify(mark)))
  return right.marks.some((mark) => keys.has(JSON.stringify(mark)))
}

function shallowNode(element: Y.XmlElement): DocNode {
  const node: DocNode = { type: element.nodeName }
  const attrs = element.getAttributes() as Record<string, unknown>
  if (Object.keys(attrs).length > 0) node.attrs = attrs
  return node
}

function append(parent: DocNode, child: DocNode) {
  if (parent.content) parent.content.push(child)
  else parent.content = [child]
}

/** `at`, or one less when that would split a surrogate pair. */
function safeEnd(text: string, at: number): number {
  const before = text.charCodeAt(at - 1)
  return before >= 0xd800 && before <= 0xdbff ? at - 1 : at
}

/**
 * A table is written with as many columns as its longest row; a cut table may have lost that row, so its
 * last kept row is given empty cells up to that count (what the serialiser fills short rows with anyway).
 */
function padCutTables<E>(stack: Array<{ element: E; node: DocNode }>, source: BlockSource<E>) {
  for (const { element, node } of stack) {
    if (source.name(element) !== 'table') continue
    let columns = 0
    for (const row of source.children(element))
      if (row && 'element' in row) columns = Math.max(columns, source.entries(row.element))
    const last = node.content?.at(-1)
    if (!last) continue
    const cells = last.content ?? []
    while (cells.length < columns) cells.push({ type: 'tableCell' })
    last.content = cells
  }
}
