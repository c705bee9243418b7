/**
 * `editBlocks` with `inBlock`: items of lists and rows of tables inside one block, named by the line of the
 * block a section read prints them on (`block-lines.ts`). A table's `| - |` line, blank lines and lines
 * inside an item are counted as the read shows them but name nothing, so such a number is refused with
 * the one to use. A replaced item keeps the sub-items it had unless the Markdown gives it sub-items of its
 * own (see `editItems`).
 */
import type { Node as PMNode } from '@tiptap/pm/model'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { MAX_IN_BLOCK_CHARS } from '../limits.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { nodeToY } from '../yjs/build-y.ts'
import {
  type BlockLines,
  blockLines,
  describeLine,
  ITEM_TYPES,
  type ItemLine,
  lineList,
  subItems,
} from './block-lines.ts'
import { dropPrefix, parseItems } from './item-markdown.ts'
import { mergeItem } from './item-merge.ts'
import { mediaUnder, patchChildren, restorePlaceholders, toNodes } from './patch-blocks.ts'

export type ItemEditInput = {
  removeBlocks?: number[]
  afterBlock?: number
  markdown?: string
  allowMediaRemoval?: boolean
}

/**
 * Where new items go: a list or table, before its child `index`; `printed`, a line of an item there as
 * read (the Markdown may come with its indentation); `name`, how a refusal calls the container; `anchor`,
 * the item `afterBlock` named.
 */
type Insertion = {
  container: Y.XmlElement
  index: number
  printed: string
  name: string
  anchor?: ItemLine
}

const elementChildren = (element: Y.XmlElement): Y.XmlElement[] =>
  element.toArray().filter((child): child is Y.XmlElement => child instanceof Y.XmlElement)

/**
 * Removes and inserts items and rows of block `blockNumber` (`block`), numbered by the lines of the block
 * as a section read prints them, in one transaction.
 *
 * - A removed item goes with its sub-items only when their lines are named too; removing an item without
 *   Markdown to replace it while some of its sub-items are not named is refused, naming them.
 * - With Markdown and `afterBlock` left out, the Markdown's items take the place of the removed items that
 *   follow the first one in its list (the k-th item given replaces the k-th removed), written into them in
 *   place. A replaced item keeps the parts of it the Markdown item does not write out (`mergeItem`): given
 *   as one line, it keeps the blocks under its text and its sub-items (less those named); a list written
 *   indented under the new item replaces the sub-items, blocks written under its text replace those.
 * - `afterBlock: n` inserts after the item on line n and its sub-items, in the same list; 0 before the first
 *   item; a table's separator line, after the header (before the first row under it).
 */
export function editItems(
  doc: Y.Doc,
  block: Y.XmlElement,
  blockNumber: number,
  input: ItemEditInput,
): Result<PMNode[]> {
  const numbers = [...new Set(input.removeBlocks ?? [])].sort((a, b) => a - b)
  const named = [...numbers, ...(input.afterBlock === undefined ? [] : [input.afterBlock])]
  const lines = blockLines(
    block,
    blockNumber,
    named.filter((n) => Number.isSafeInteger(n) && n >= 0),
  )
  if (lines.kind === 'error') return lines
  const read = lines.value
  if (read.elements.length === 0) {
    return refuseFor(
      'not_a_container',
      `inBlock: block ${blockNumber} is a ${block.nodeName}; inBlock edits the items of a list or the rows of a table. ` +
        'Edit this block with removeBlocks and markdown without inBlock, or its text with replace_text.',
      'inBlock',
    )
  }
  const lineCount = read.lines.length
  // A long paragraph before the block's first item can keep every item past what an edit renders.
  if (read.items.length === 0)
    return tooFar(blockNumber, Math.max(1, ...named.filter(Number.isSafeInteger)), lineCount)
  const outside = numbers.filter((n) => !Number.isInteger(n) || n < 1 || n > lineCount)
  const beyond = named.find((n) => Number.isInteger(n) && n > lineCount)
  if (!read.complete && beyond !== undefined) return tooFar(blockNumber, beyond, lineCount)
  if (outside.length > 0) {
    return refuseFor(
      'block_out_of_range',
      `removeBlocks: ${outside.join(', ')} not in 1..${lineCount}; block ${blockNumber} shows ${lineCount} lines ` +
        `(items and rows start on lines ${lineList(read.items.map((item) => item.line))}).`,
      'removeBlocks',
    )
  }
  const notItem = numbers.find((n) => !read.byLine.has(n))
  if (notItem !== undefined) {
    const reason = read.separators.has(notItem) ? 'separator_line' : 'not_an_item_line'
    return refuseFor(reason, describeLine(read, blockNumber, notItem, 'removeBlocks'), 'removeBlocks')
  }
  const removed = numbers.map((n) => read.byLine.get(n)!)
  const removedSet = new Set(removed.map((item) => item.element))

  const markdown = input.markdown ?? ''
  let insertion: Insertion | undefined
  let run: ItemLine[] = []
  if (input.afterBlock !== undefined) {
    const at = insertionAfter(read, block, blockNumber, input.afterBlock)
    if (at.kind === 'error') return at
    insertion = at.value
  } else if (removed.length > 0) {
    const first = removed[0]!
    const container = first.element.parent as Y.XmlElement
    const siblings = elementChildren(container)
    const start = siblings.indexOf(first.element)
    for (let i = start; i < siblings.length && removedSet.has(siblings[i]!); i++)
      run.push(read.byElement.get(siblings[i]!)!)
    const name = container === block ? `block ${blockNumber}` : `the list holding line ${first.line}`
    insertion = { container, index: start, printed: read.lines[first.line - 1]!, name }
  } else {
    // The end of the block's last list or table that is not inside an item.
    const top = read.elements.filter((element) => !hasItemAncestor(element, block))
    const container = top.at(-1)!.parent as Y.XmlElement
    const printed = read.items.find((item) => item.element === top[0])
    insertion = {
      container,
      index: elementChildren(container).length,
      printed: printed ? read.lines[printed.line - 1]! : '',
      name: container === block ? `block ${blockNumber}` : `the last list of block ${blockNumber}`,
    }
  }
  if (markdown === '') run = []

  // Every removed item not replaced by a Markdown item goes whole: its sub-items must be named too.
  const runSet = new Set(run.map((item) => item.element))
  for (const item of removed) {
    if (runSet.has(item.element)) continue
    const missing = subItems(read, item).filter((sub) => !removedSet.has(sub.element))
    if (missing.length > 0) return subItemsRefusal(item, missing, markdown !== '')
  }

  let blocks: DocNode[] = []
  if (markdown !== '') {
    const parsed = parseItems(insertion.container, insertion.name, dropPrefix(markdown, insertion.printed))
    if (parsed.kind === 'error') return parsed
    blocks = parsed.value
  }

  // A replaced item keeps the parts of it the Markdown item does not write out (see mergeItem).
  const gone: Y.XmlElement[] = []
  for (const [k, item] of run.entries()) {
    const given = blocks[k]
    if (!given) {
      // More items removed than given: this one goes whole, so its sub-items must be named too.
      const missing = subItems(read, item).filter((sub) => !removedSet.has(sub.element))
      if (missing.length > 0) return subItemsRefusal(item, missing, true)
      gone.push(item.element)
    } else if (item.element.nodeName === 'tableRow') {
      gone.push(item.element)
    } else {
      const merged = mergeItem(item.element, given, removedSet)
      blocks[k] = merged.json
      gone.push(...merged.gone)
    }
  }
  const whole = removed.filter((item) => !runSet.has(item.element) && !insideRemoved(item, removedSet, block))
  gone.push(...whole.map((item) => item.element))

  const media = mediaUnder(gone)
  const restored = restorePlaceholders(blocks, media)
  let nodes = toNodes(restored.blocks)
  let kept = restored.kept
  if (!nodes) {
    // A placeholder where its media cannot stand (the first line of an item): keep the text.
    nodes = toNodes(blocks)
    kept = new Set()
  }
  if (!nodes) {
    return refuseFor(
      'invalid_content',
      'markdown: its items do not fit this list with the sub-items they keep; write the sub-items out.',
      'markdown',
    )
  }
  const lost = media.filter((element) => !kept.has(element))
  if (lost.length > 0 && !input.allowMediaRemoval) {
    const at = removed.filter((item) => mediaUnder([item.element]).some((m) => lost.includes(m)))
    return refuseFor(
      'media_removal_needs_flag',
      `removeBlocks: the item on line ${at.map((item) => item.line).join(', ')} holds an image or embed; ` +
        'keep its [image: …] placeholder line in markdown to keep it, or set allowMediaRemoval to remove it.',
      'removeBlocks',
    )
  }
  if (removed.length === 0 && nodes.length === 0) {
    return refuseFor(
      'nothing_to_change',
      'edit: give removeBlocks or markdown; this edit would change nothing.',
    )
  }

  const { anchor } = insertion
  if (run.length === 0 && nodes.length > 0 && anchor && insideRemoved(anchor, removedSet, block)) {
    return refuseFor(
      'block_out_of_range',
      `afterBlock: ${input.afterBlock} is inside an item this edit removes; insert after a line that stays.`,
      'afterBlock',
    )
  }
  const emptied = emptiedContainers(block, blockNumber, whole, run, insertion, nodes.length)
  if (emptied.kind === 'error') return emptied

  const insertAt = insertion.index
  const container = insertion.container
  const before = whole.filter(
    (item) =>
      item.element.parent === container && elementChildren(container).indexOf(item.element) < insertAt,
  ).length
  const finalNodes = nodes
  doc.transact(() => {
    // Last first, so the positions of the ones before stay valid.
    for (const item of [...whole].reverse()) {
      const parent = item.element.parent as Y.XmlElement
      parent.delete(parent.toArray().indexOf(item.element), 1)
    }
    for (const list of emptied.value) {
      const parent = list.parent as Y.XmlElement
      parent.delete(parent.toArray().indexOf(list), 1)
    }
    if (run.length > 0) {
      const start = container.toArray().indexOf(run[0]!.element)
      patchChildren(
        container,
        start,
        run.map((item) => item.element),
        finalNodes,
      )
    } else if (finalNodes.length > 0) {
      container.insert(insertAt - before, finalNodes.map(nodeToY))
    }
  })
  return ok(nodes)
}

/** Where `afterBlock: n` inserts, or why it cannot. */
function insertionAfter(
  read: BlockLines,
  block: Y.XmlElement,
  blockNumber: number,
  n: number,
): Result<Insertion> {
  const lineCount = read.lines.length
  if (!Number.isInteger(n) || n < 0 || n > lineCount) {
    return refuseFor(
      'block_out_of_range',
      `afterBlock: ${n} is not in 0..${lineCount}; 0 means before the first item or row, n after the one on line n.`,
      'afterBlock',
    )
  }
  const named = (item: ItemLine, index: number): Insertion => {
    const container = item.element.parent as Y.XmlElement
    const name = container === block ? `block ${blockNumber}` : `the list holding line ${item.line}`
    return { container, index, printed: read.lines[item.line - 1]!, name, anchor: item }
  }
  if (n === 0) return ok(named(read.items[0]!, 0))
  const header = read.separators.get(n)
  const item = header ?? read.byLine.get(n)
  if (!item) {
    return refuseFor('not_an_item_line', describeLine(read, blockNumber, n, 'afterBlock'), 'afterBlock')
  }
  if (!header && read.separators.has(n + 1)) {
    return refuseFor(
      'separator_line',
      `afterBlock: line ${n} of block ${blockNumber} is the table's header row; the line after it is the table's ` +
        `"| - |" separator line, so no row can go there. Give afterBlock: ${n + 1} for a row right under the header.`,
      'afterBlock',
    )
  }
  return ok(named(item, elementChildren(item.element.parent as Y.XmlElement).indexOf(item.element) + 1))
}

function tooFar(blockNumber: number, n: number, read: number) {
  return refuseFor(
    'too_complex',
    `inBlock: line ${n} of block ${blockNumber} lies past its first ${read} lines (${MAX_IN_BLOCK_CHARS} ` +
      `characters of its Markdown, MAX_IN_BLOCK_CHARS, or what a read may render), as far as edit_blocks numbers a block's lines; change the text there ` +
      'with replace_text, or replace the whole block.',
    'inBlock',
  )
}

function subItemsRefusal(item: ItemLine, missing: readonly ItemLine[], withMarkdown: boolean) {
  const one = missing.length === 1
  const lines = lineList(missing.map((sub) => sub.line))
  const instead = withMarkdown
    ? 'or give one Markdown item per removed item, so each replaced item keeps the sub-items not named'
    : `or give markdown to replace line ${item.line} alone (its sub-items stay)`
  return refuseFor(
    'sub_items_not_listed',
    `removeBlocks: the item on line ${item.line} has ${one ? 'a sub-item on line' : 'sub-items on lines'} ` +
      `${lines} that removeBlocks does not name; add ${one ? 'it' : 'them'} to remove ${one ? 'it' : 'them'} ` +
      `with the item, ${instead}.`,
    'removeBlocks',
  )
}

/** True when `element` sits inside an item (it is a sub-item, or a row of a table inside an item). */
function hasItemAncestor(element: Y.XmlElement, block: Y.XmlElement): boolean {
  for (let parent = element.parent; parent && parent !== block; parent = parent.parent)
    if (parent instanceof Y.XmlElement && ITEM_TYPES.has(parent.nodeName)) return true
  return false
}

/** True when an item holding `item` is removed too (it goes with that one). */
function insideRemoved(item: ItemLine, removed: ReadonlySet<Y.XmlElement>, block: Y.XmlElement): boolean {
  for (let parent = item.element.parent; parent && parent !== block; parent = parent.parent)
    if (removed.has(parent as Y.XmlElement)) return true
  return false
}

/**
 * The nested lists and tables this edit leaves without items, to delete with them; refused when one is
 * the block itself, or the only content of what holds it (remove the block instead).
 */
function emptiedContainers(
  block: Y.XmlElement,
  blockNumber: number,
  whole: readonly ItemLine[],
  run: readonly ItemLine[],
  insertion: Insertion,
  inserted: number,
): Result<Y.XmlElement[]> {
  const removedBy = new Map<Y.XmlElement, number>()
  for (const item of [...whole, ...run]) {
    const parent = item.element.parent as Y.XmlElement
    removedBy.set(parent, (removedBy.get(parent) ?? 0) + 1)
  }
  const out: Y.XmlElement[] = []
  for (const [container, count] of removedBy) {
    const added = container === insertion.container ? inserted : 0
    const total = elementChildren(container).length
    if (total - count + added > 0) continue
    const parent = container.parent as Y.XmlElement
    const holder = parent.nodeName === 'listItem' || parent.nodeName === 'taskItem'
    if (container === block || (!holder && elementChildren(parent).length <= 1)) {
      return refuseFor(
        'container_emptied',
        `removeBlocks: that removes every one of the ${total} items of ${container === block ? `block ${blockNumber}` : 'a list in it'}; remove the block ` +
          'itself instead (edit_blocks without inBlock).',
        'removeBlocks',
      )
    }
    out.push(container)
  }
  return ok(out)
}
