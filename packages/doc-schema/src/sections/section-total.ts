/**
 * A section's total: the exact length in characters of the section read whole (its heading line, then each
 * block as `[n] markdown`, blank-line separated: what `renderSection` shows with a budget that holds it
 * all). A cut read names it, so it must be exact, and it must not cost a read a render of the section.
 *
 * It is the sum of each element's Markdown length, rendered by the very function a read renders with
 * (`blockMarkdownPrefix`, run to the end), so whatever the Markdown escaping becomes, the total follows it.
 * Rendering costs ~2 µs a character, so lengths are kept: per element by the outline memo of a live
 * fragment (dropped when a change lands under that element, so an edit re-renders only the blocks it
 * touched), and per section revision (`rev`) here, so a read of a throwaway fragment (a cold read) finds
 * the total a read of the same content measured before; and with the stored outline (stored-totals.ts),
 * adopted per fragment by whoever decodes stored content, so a read after a restart renders nothing extra.
 */
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { blockMarkdownPrefix } from '../markdown/block-prefix.ts'
import type { SerializeOptions } from '../markdown/blocks-to-mdast.ts'
import { TOO_DEEP_NODE, yElementTooDeep } from '../markdown/render-depth.ts'
import { blocksToMarkdown } from '../markdown/serialize-markdown.ts'
import type { FlatDocument } from '../yjs/flat-read.ts'
import { yElementToJSON } from '../yjs/read-y.ts'
import { eachTopLevelChange } from '../yjs/top-level-changes.ts'

/** How section reads show a block's media: as readable placeholders. */
export const BLOCK_OPTIONS: SerializeOptions = { media: 'placeholder', suggestions: 'show' }
/** How section reads show the heading line (`headingLine`); pending suggestions shown, as in blocks. */
export const HEADING_OPTIONS: SerializeOptions = { suggestions: 'show' }

/** Headings and blocks rendered by `elementReadLength` so far (`measuredElements`). */
let measured = 0

/**
 * The length of an element's Markdown as a section read shows it whole: the heading line for a heading,
 * else a block's Markdown without its `[n] ` label. The same render as a read's, not stopped early.
 */
export function elementReadLength(element: Y.XmlElement, rendered?: () => void): number {
  measured++
  if (LIST_TYPES.has(element.nodeName) && element.length > LIST_ITEMS_PER_RENDER) {
    const length = listReadLength(element, LIST_ITEMS_PER_RENDER, rendered)
    if (length !== undefined) return length
  }
  const opts = element.nodeName === 'heading' ? HEADING_OPTIONS : BLOCK_OPTIONS
  return blockMarkdownPrefix(element, Number.MAX_SAFE_INTEGER, opts).text.length
}

/**
 * Whether an element holds more than `max` Yjs items not deleted (its children, its texts' runs and their
 * format marks, nested): what rendering it costs grows with them. Counts at most `max + 1`, so asking costs
 * at most that many steps whatever the element holds.
 */
export function elementItemsOver(element: Y.XmlElement, max: number): boolean {
  let count = 0
  const types: Array<Pick<Y.AbstractType<unknown>, '_start'>> = [element]
  for (let type = types.pop(); type !== undefined; type = types.pop()) {
    for (let item = type._start; item !== null; item = item.right) {
      if (item.deleted) continue
      if (++count > max) return true
      if (item.content instanceof Y.ContentType) types.push(item.content.type)
    }
  }
  return false
}

const LIST_TYPES = new Set(['bulletList', 'orderedList', 'taskList'])
const ITEM_TYPES = new Set(['listItem', 'taskItem'])

/**
 * Items of one long list rendered together to measure it (`listReadLength`): a list of 75,000 items
 * rendered whole held ~240 MB of JSON, mdast and strings at once.
 */
export const LIST_ITEMS_PER_RENDER = 1_000

/**
 * The length of a long top-level list as a read shows it whole, rendered `perRender` items at a time: a
 * list's Markdown is its items' Markdown joined by line breaks (the lists here are tight), each item written
 * from its own content and its number (an ordered list's later items are a list starting at their number);
 * the bullet a list uses may depend on all its items, but every bullet is one character. undefined when the
 * list holds anything but items or is nested past the render ceiling (it is then rendered whole).
 */
export function listReadLength(
  list: Y.XmlElement,
  perRender: number,
  /** Called after each part's render (the import worker collects its garbage). */
  rendered?: () => void,
): number | undefined {
  const children = list.toArray()
  if (!children.every((child) => child instanceof Y.XmlElement && ITEM_TYPES.has(child.nodeName)))
    return undefined
  if (yElementTooDeep(list)) return undefined
  const items = children as Y.XmlElement[]
  return listLengthInParts(
    list.nodeName,
    list.getAttributes() as Record<string, unknown>,
    items.length,
    perRender,
    (from, to) => items.slice(from, to).map((item) => yElementToJSON(item)),
    rendered,
  )
}

/**
 * A list of `count` items measured `perRender` at a time: `contentOf(from, to)` gives those items'
 * render JSON (`listReadLength` of Yjs's list, `elementReadLengthOf` of rows read flat).
 */
function listLengthInParts(
  nodeName: string,
  attrs: Record<string, unknown>,
  count: number,
  perRender: number,
  contentOf: (from: number, to: number) => DocNode[],
  rendered?: () => void,
): number {
  let total = 0
  for (let from = 0; from < count; from += perRender) {
    total += listContentReadLength(nodeName, attrs, contentOf(from, from + perRender), from)
    rendered?.()
  }
  return total
}

/**
 * What items `from`… of a long list (`items`, rendered together) add to its read length (`listReadLength`
 * sums these over its parts); `attrs` the list's attributes. For a builder that measures a list a part at
 * a time as it builds it (the import worker).
 */
export function listPartReadLength(
  nodeName: string,
  attrs: Record<string, unknown>,
  items: readonly Y.XmlElement[],
  from: number,
): number {
  return listContentReadLength(
    nodeName,
    attrs,
    items.map((item) => yElementToJSON(item)),
    from,
  )
}

/** `listPartReadLength` of the items' render JSON (`content`), however it was read. */
export function listContentReadLength(
  nodeName: string,
  attrs: Record<string, unknown>,
  content: DocNode[],
  from: number,
): number {
  const chunk: DocNode =
    nodeName === 'orderedList'
      ? { type: nodeName, attrs: { ...attrs, start: Number(attrs.start ?? 1) + from }, content }
      : { type: nodeName, ...(Object.keys(attrs).length > 0 ? { attrs } : {}), content }
  return (from === 0 ? 0 : 1) + blocksToMarkdown([chunk], BLOCK_OPTIONS).length
}

/**
 * The length of a section read whole, from its elements' lengths (`lengthOf`, by default rendered now):
 * the heading line, then per block a blank line and `[n] markdown` (`[n]` alone for an empty block).
 */
export function sectionReadLength(
  heading: Y.XmlElement,
  blocks: readonly Y.XmlElement[],
  lengthOf: (element: Y.XmlElement) => number = elementReadLength,
): number {
  let total = lengthOf(heading)
  for (let i = 0; i < blocks.length; i++) total += blockReadCost(i + 1, lengthOf(blocks[i]!))
  return total
}

/**
 * `elementReadLength` of the element at `row` of a state read flat (yjs/flat-read.ts): its render JSON is
 * what `yElementToJSON` gives, rendered the same way; a long list a part at a time, as `listReadLength`.
 */
export function elementReadLengthOf(flat: FlatDocument, row: number): number {
  measured++
  const name = flat.tree.name(row)
  if (LIST_TYPES.has(name)) {
    const children = flat.tree.children(row)
    if (
      children.length > LIST_ITEMS_PER_RENDER &&
      !flat.blockSource.tooDeep(row) &&
      children.every((child) => child >= 0 && ITEM_TYPES.has(flat.tree.name(child)))
    ) {
      return listLengthInParts(
        name,
        flat.tree.attributes(row),
        children.length,
        LIST_ITEMS_PER_RENDER,
        (from, to) =>
          children
            .slice(from, to)
            .map((child) => flat.json({ row: child, name: flat.tree.name(child), length: 1 })),
      )
    }
  }
  const node = flat.blockSource.tooDeep(row) ? TOO_DEEP_NODE : flat.json({ row, name, length: 1 })
  return blocksToMarkdown([node], name === 'heading' ? HEADING_OPTIONS : BLOCK_OPTIONS).length
}

/** `sectionReadLength` of a section of a state read flat (`elementReadLengthOf` each element). */
export function sectionReadLengthOf(flat: FlatDocument, heading: number, blocks: readonly number[]): number {
  let total = elementReadLengthOf(flat, heading)
  for (let i = 0; i < blocks.length; i++) total += blockReadCost(i + 1, elementReadLengthOf(flat, blocks[i]!))
  return total
}

/** What block `n` (from 1) of a section, of `markdown` characters, adds to the section read whole. */
export const blockReadCost = (n: number, markdown: number) =>
  2 + `[${n}]`.length + (markdown === 0 ? 0 : 1 + markdown)

/**
 * Section totals kept by revision, for every fragment of the process: a rev is a hash of the section's
 * content (heading and blocks, ids aside) and the total depends on nothing else, so the same rev has the
 * same total in any document. Bounded; the least recently used is dropped first.
 */
export const MAX_KEPT_SECTION_TOTALS = 4_096

const totalsByRev = new Map<string, number>()

/** The key of one revision: its rev and its block count (a second check against a hash collision). */
export const totalKey = (rev: string, blockCount: number) => `${rev}/${blockCount}`
const revKey = totalKey

/** The total kept for this revision, if any (it becomes the most recently used). */
export function keptTotal(rev: string, blockCount: number): number | undefined {
  const key = revKey(rev, blockCount)
  const total = totalsByRev.get(key)
  if (total === undefined) return undefined
  totalsByRev.delete(key)
  totalsByRev.set(key, total)
  return total
}

/** Keeps a revision's total, dropping the least recently used past MAX_KEPT_SECTION_TOTALS. */
export function keepTotal(rev: string, blockCount: number, total: number): void {
  const key = revKey(rev, blockCount)
  totalsByRev.delete(key)
  totalsByRev.set(key, total)
  if (totalsByRev.size > MAX_KEPT_SECTION_TOTALS) {
    const oldest = totalsByRev.keys().next().value
    if (oldest !== undefined) totalsByRev.delete(oldest)
  }
}

/** Forgets every kept total (tests that must measure from nothing). */
export function forgetKeptTotals(): void {
  totalsByRev.clear()
}

/** Totals adopted per fragment (from the outline stored with its content: stored-totals.ts), by `totalKey`. */
const adopted = new WeakMap<Y.XmlFragment, ReadonlyMap<string, number>>()

/**
 * Gives `fragment` the totals stored with the content it was decoded from (`storedTotals`): its outline
 * memo takes a section's total from them when the section's rev and block count match (an edited section
 * has a new rev). Replaces what was adopted before; the totals go with the fragment.
 */
export function adoptTotals(fragment: Y.XmlFragment, totals: ReadonlyMap<string, number>): void {
  if (totals.size > 0) adopted.set(fragment, totals)
}

/** The adopted total of one revision of a section of `fragment`, if any. */
export function adoptedTotal(fragment: Y.XmlFragment, rev: string, blockCount: number): number | undefined {
  return adopted.get(fragment)?.get(totalKey(rev, blockCount))
}

/** A section as a stored outline describes it: its rev and size, and its block count when its total was measured. */
export type StoredSectionRev = { rev: string; size: number; blocks?: number }

/**
 * Revs adopted per fragment from a stored outline that describes its content (`adoptRevs`), by section id,
 * with the ids of the sections changed since (whose adopted rev no longer holds).
 */
const adoptedRevs = new WeakMap<
  Y.XmlFragment,
  { revs: ReadonlyMap<string, StoredSectionRev>; changed: Set<string> }
>()

/**
 * Gives `fragment` the revs of the stored outline that describes exactly what it was decoded from (the
 * snapshot, with no update logged after it: `storedRevs`), so its outline memo describes a section by
 * them instead of hashing it: a cold read of a section names its rev (and, through it, its adopted total)
 * without a walk over the section's content. A change drops the rev of the section it lands in only
 * (`sectionsChangedBy`): the first store after a large document is opened and typed into used to hash every
 * section of it again (issue 30: ~150 ms of slices for 5 MiB, in the way of every other document's
 * keystrokes), where one section changed.
 */
export function adoptRevs(fragment: Y.XmlFragment, revs: ReadonlyMap<string, StoredSectionRev>): void {
  if (revs.size === 0) return
  const adopted = { revs, changed: new Set<string>() }
  adoptedRevs.set(fragment, adopted)
  // Top-level blocks whose section is known changed: typing goes on in the same block, and a walk to the
  // section's heading stops at one of them.
  const known = new WeakSet<Y.XmlElement>()
  // biome-ignore lint/suspicious/noExplicitAny: as observeDeep gives them
  const observer = (events: Array<Y.YEvent<any>>, transaction: Y.Transaction) => {
    const ids = sectionsChangedBy(fragment, events, transaction, known)
    for (const id of ids ?? []) adopted.changed.add(id)
    // A change that could not be placed, or every section changed: nothing adopted holds any more.
    if (!ids || adopted.changed.size >= revs.size) {
      adoptedRevs.delete(fragment)
      fragment.unobserveDeep(observer)
    }
  }
  fragment.observeDeep(observer)
}

/**
 * The ids of the sections whose content one transaction's `events` (observed deep on `fragment`) changed:
 * that of the section each changed element sits in, the section an element was inserted into or deleted
 * from (a heading's too: its blocks move from one section to the other), the id of each heading inserted
 * or deleted, and the old id of a heading whose id changed. Null when a change cannot be placed (an item
 * of the top level that holds no element): the caller drops every rev. A section is the heading and the
 * blocks up to the next heading; Yjs never moves an element, so a section none of these name holds exactly
 * the elements it held when the revs were adopted.
 */
function sectionsChangedBy(
  fragment: Y.XmlFragment,
  // biome-ignore lint/suspicious/noExplicitAny: as observeDeep gives them
  events: Array<Y.YEvent<any>>,
  transaction: Y.Transaction,
  known: WeakSet<Y.XmlElement>,
): Set<string> | null {
  const ids = new Set<string>()
  let placed = true
  for (const event of events) {
    if (event.target === fragment) continue // its items, once, below
    // biome-ignore lint/suspicious/noExplicitAny: Yjs types of any content
    let element: Y.AbstractType<any> | null = event.target
    // biome-ignore lint/suspicious/noExplicitAny: Yjs types of any content
    while (element && element.parent !== fragment) element = element.parent as Y.AbstractType<any> | null
    if (!(element instanceof Y.XmlElement) || !element._item) {
      placed &&= element === null // under something no longer in the fragment: its deletion is an event
      continue
    }
    if (element.nodeName === 'heading') {
      // The heading's own attributes: its id may have changed, and the old one names the section no more.
      const old = event.target === element ? event.keys.get(HEADING_ID_ATTR) : undefined
      if (old) ids.add(typeof old.oldValue === 'string' ? old.oldValue : '')
    } else if (known.has(element)) continue
    sectionBefore(element._item, ids, known)
  }
  if (events.some((event) => event.target === fragment))
    eachTopLevelChange(transaction, fragment, (item) => {
      const element = item.content instanceof Y.ContentType ? item.content.type : undefined
      if (!(element instanceof Y.XmlElement)) {
        // Content deleted before it came (a remote update's) never sat in a section.
        if (!(item.content instanceof Y.ContentDeleted)) placed = false
        return
      }
      if (element.nodeName === 'heading') {
        const id = element.getAttribute(HEADING_ID_ATTR)
        ids.add(typeof id === 'string' ? id : '')
      }
      // The section it was inserted into or deleted from: the one before it.
      if (item.left) sectionBefore(item.left, ids, known)
    })
  return placed ? ids : null
}

/**
 * Adds the id of the section the top-level item `from` (alive or deleted) sits in: that of the nearest
 * heading at or before it, unless a block on the way is `known` (its section is already named). The
 * blocks passed on the way are known from then on. Nothing before the first heading is in a section.
 */
function sectionBefore(from: Y.Item, ids: Set<string>, known: WeakSet<Y.XmlElement>): void {
  for (let at: Y.Item | null = from; at; at = at.left) {
    if (at.deleted || !(at.content instanceof Y.ContentType)) continue
    const element = at.content.type
    if (!(element instanceof Y.XmlElement)) continue
    if (element.nodeName === 'heading') {
      const id = element.getAttribute(HEADING_ID_ATTR)
      ids.add(typeof id === 'string' ? id : '')
      return
    }
    if (known.has(element)) return
    known.add(element)
  }
}

/** The adopted rev and size of the section with this id, unless its block count says it is another section. */
export function adoptedRev(
  fragment: Y.XmlFragment,
  sectionId: string,
  blockCount: number,
): StoredSectionRev | undefined {
  const adopted = adoptedRevs.get(fragment)
  if (!adopted || adopted.changed.has(sectionId)) return undefined
  const stored = adopted.revs.get(sectionId)
  return stored && (stored.blocks === undefined || stored.blocks === blockCount) ? stored : undefined
}

/** How many headings and blocks were rendered to measure totals, since the process started (tests, bench). */
export function measuredElements(): number {
  return measured
}
