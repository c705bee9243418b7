import type { Node as PMNode } from '@tiptap/pm/model'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { schema } from '../extensions.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { nodeToY } from '../yjs/build-y.ts'
import { editTarget, sectionsFrom, type WrittenSection } from './edit-target.ts'
import { mediaUnder, patchChildren, restorePlaceholders } from './patch-blocks.ts'

export type EditBlocksInput = {
  /** Block numbers (1-based, as a section read shows them) to remove; with `inBlock`, item numbers. */
  removeBlocks?: number[]
  /** Insert after this block number; 0 = right after the heading. Default: where the first removed block
   * was, or the end of the section. Numbers refer to the section as read, before removal. With
   * `inBlock`, an item number (0 = before the first item). */
  afterBlock?: number
  /** Markdown to insert; its headings must be deeper than the section's heading. With `inBlock`, list
   * items (`- text`, `- [ ] task`, `1. step`) or table rows (`| a | b |`). */
  markdown?: string
  /** Removing an image or embed (which the Markdown view cannot show whole) needs this flag. */
  allowMediaRemoval?: boolean
  /** Edit the items of this block (a list's items, a table's rows) instead of the section's blocks. */
  inBlock?: number
}

export type EditBlocksResult = {
  /** The edited section's new rev. */
  rev: string
  /** Sections the inserted Markdown's headings created, in document order. */
  created: WrittenSection[]
}

/** Where an edit removes and inserts: the section's blocks, or one block's items. */
type Place = {
  parent: Y.XmlFragment | Y.XmlElement
  children: Y.XmlElement[]
  /** Index of each child in `parent`. */
  indexes: number[]
  /** Index in `parent` where "after 0" inserts. */
  first: number
  /** How a refusal names the children and their container: "blocks" of "the section". */
  noun: string
  of: string
  /** The Markdown's blocks as children of this place (checked), or a refusal. */
  parse(markdown: string): Result<DocNode[]>
}

/**
 * Removes and inserts blocks of one section (or, with `inBlock`, items of one list or rows of one table)
 * in one transaction. Untouched blocks are not rewritten, so they keep their Yjs identity and concurrent
 * typing inside them survives. When the new blocks replace removed ones in their place (`afterBlock` left
 * to default), each is written into the removed block of the same kind in place (`patchChildren`): text
 * is diffed character by character, so a person's cursor and typing in that block survive too. A removed
 * image whose `[image: …]` placeholder the Markdown keeps is kept (and needs no `allowMediaRemoval`).
 */
export function editBlocks(
  fragment: Y.XmlFragment,
  sectionId: string,
  rev: string,
  input: EditBlocksInput,
): Result<EditBlocksResult> {
  const target = editTarget(fragment, sectionId, rev)
  if (target.kind === 'error') return target
  const { doc, section } = target.value
  let place: Place
  if (input.inBlock !== undefined) {
    const items = itemsOf(section.blocks, input.inBlock)
    if (items.kind === 'error') return items
    place = items.value
  } else {
    place = {
      parent: fragment,
      children: section.blocks,
      indexes: section.blockIndexes,
      first: section.headingIndex + 1,
      noun: 'blocks',
      of: 'the section',
      parse: (markdown) => parseMarkdown(markdown, { minHeadingLevel: section.level + 1 }),
    }
  }
  const edited = applyEdit(doc, place, input)
  if (edited.kind === 'error') return edited
  const createdIds = new Set(
    edited.value
      .filter((node) => node.type.name === 'heading')
      .map((node) => String(node.attrs[HEADING_ID_ATTR])),
  )
  const [after, ...created] = sectionsFrom(section.heading, createdIds)
  return ok({ rev: after?.rev ?? '', created })
}

/** Checks the numbers, parses the Markdown, keeps media by placeholder, and applies the edit. */
function applyEdit(doc: Y.Doc, place: Place, input: EditBlocksInput): Result<PMNode[]> {
  const count = place.children.length
  const remove = [...new Set(input.removeBlocks ?? [])].sort((a, b) => a - b)
  const outside = remove.filter((n) => !Number.isInteger(n) || n < 1 || n > count)
  if (outside.length > 0) {
    return refuseFor(
      'block_out_of_range',
      `removeBlocks: ${outside.join(', ')} not in 1..${count}; ${place.of} has ${count} ${place.noun}.`,
      'removeBlocks',
    )
  }
  const afterBlock = input.afterBlock ?? (remove.length > 0 ? remove[0]! - 1 : count)
  if (!Number.isInteger(afterBlock) || afterBlock < 0 || afterBlock > count) {
    const zero = place.noun === 'blocks' ? 'after the heading' : 'before the first'
    return refuseFor(
      'block_out_of_range',
      `afterBlock: ${afterBlock} is not in 0..${count}; 0 means ${zero}.`,
      'afterBlock',
    )
  }
  const removed = remove.map((n) => place.children[n - 1]!)

  let blocks: DocNode[] = []
  if (input.markdown !== undefined && input.markdown !== '') {
    const parsed = place.parse(input.markdown)
    if (parsed.kind === 'error') return parsed
    blocks = parsed.value
  }
  const restored = restorePlaceholders(blocks, mediaUnder(removed))
  let nodes = toNodes(restored.blocks)
  let kept = restored.kept
  if (!nodes) {
    // A placeholder where its media cannot stand (the first line of a list item): keep the text.
    nodes = toNodes(blocks) ?? []
    kept = new Set()
  }
  const lost = remove.filter((_n, i) => mediaUnder([removed[i]!]).some((element) => !kept.has(element)))
  if (lost.length > 0 && !input.allowMediaRemoval) {
    return refuseFor(
      'media_removal_needs_flag',
      `removeBlocks: ${place.noun === 'blocks' ? 'block' : 'item'} ${lost.join(', ')} holds an image or embed; ` +
        'keep its [image: …] placeholder line in markdown to keep it, or set allowMediaRemoval to remove it.',
      'removeBlocks',
    )
  }
  if (remove.length === 0 && nodes.length === 0) {
    return refuseFor(
      'nothing_to_change',
      'edit: give removeBlocks or markdown; this edit would change nothing.',
    )
  }
  if (place.noun !== 'blocks' && count - remove.length + nodes.length === 0) {
    return refuseFor(
      'container_emptied',
      `removeBlocks: that removes every one of the ${count} ${place.noun} of ${place.of}; remove the block ` +
        'itself instead (edit_blocks without inBlock).',
      'removeBlocks',
    )
  }

  const inPlace =
    remove.length > 0 &&
    nodes.length > 0 &&
    afterBlock === remove[0]! - 1 &&
    remove.every((n, i) => n === remove[0]! + i)
  const { parent, indexes } = place
  doc.transact(() => {
    if (inPlace) {
      patchChildren(parent, indexes[remove[0]! - 1]!, removed, nodes)
      return
    }
    let insertAt = afterBlock === 0 ? place.first : indexes[afterBlock - 1]! + 1
    // Highest index first, so earlier indexes stay valid while deleting.
    for (const number of [...remove].reverse()) {
      const index = indexes[number - 1]!
      parent.delete(index, 1)
      if (index < insertAt) insertAt--
    }
    if (nodes.length > 0) parent.insert(insertAt, nodes.map(nodeToY))
  })
  return ok(nodes)
}

const LIST_ITEMS: Record<string, string> = {
  bulletList: 'listItem',
  orderedList: 'listItem',
  taskList: 'taskItem',
}

/** How one item of each list kind is written, for refusals. */
const ITEM_SYNTAX: Record<string, string> = {
  bulletList: '"- text"',
  orderedList: '"1. text"',
  taskList: '"- [ ] text"',
}

/** The items of block `inBlock` as a place to edit: a list's items or a table's rows. */
function itemsOf(blocks: readonly Y.XmlElement[], inBlock: number): Result<Place> {
  const count = blocks.length
  if (!Number.isInteger(inBlock) || inBlock < 1 || inBlock > count) {
    return refuseFor('block_out_of_range', `inBlock: ${inBlock} is not in 1..${count}.`, 'inBlock')
  }
  const block = blocks[inBlock - 1]!
  const kind = block.nodeName
  const children = block.toArray().filter((child): child is Y.XmlElement => child instanceof Y.XmlElement)
  const indexes = block.toArray().flatMap((child, index) => (child instanceof Y.XmlElement ? [index] : []))
  const itemType = LIST_ITEMS[kind]
  if (itemType) {
    return ok({
      parent: block,
      children,
      indexes,
      first: 0,
      noun: 'items',
      of: `block ${inBlock}`,
      parse: (markdown) => {
        const parsed = parseMarkdown(markdown)
        if (parsed.kind === 'error') return parsed
        const items: DocNode[] = []
        for (const list of parsed.value) {
          if (!LIST_ITEMS[list.type] || LIST_ITEMS[list.type] !== itemType) {
            return refuseFor(
              'not_items',
              `markdown: block ${inBlock} is a ${kind}, so give only its items, each written ${ITEM_SYNTAX[kind]}.`,
              'markdown',
            )
          }
          items.push(...(list.content ?? []))
        }
        return ok(items)
      },
    })
  }
  if (kind === 'table') {
    const columns = Math.max(1, children[0]?.length ?? 1)
    return ok({
      parent: block,
      children,
      indexes,
      first: 0,
      noun: 'rows',
      of: `block ${inBlock}`,
      parse: (markdown) => {
        // Rows alone are not a GFM table: read them under a header one column wider than the table (GFM
        // drops cells past the header's width without a word, so a cell there means the row is too wide),
        // then drop that header and the extra column.
        const header = `|${' h |'.repeat(columns + 1)}\n|${' - |'.repeat(columns + 1)}\n`
        const parsed = parseMarkdown(header + markdown.replace(/^\n+/, ''))
        const table = parsed.kind === 'ok' && parsed.value.length === 1 ? parsed.value[0] : undefined
        if (table?.type !== 'table') {
          return refuseFor(
            'not_rows',
            `markdown: block ${inBlock} is a table, so give only rows, one per line, written "| a | b |".`,
            'markdown',
          )
        }
        const rows = (table.content ?? []).slice(1)
        const wide = rows.findIndex((row) =>
          (row.content?.[columns]?.content ?? []).some((p) => p.content?.length),
        )
        if (wide >= 0) {
          return refuseFor(
            'row_too_wide',
            `markdown: row ${wide + 1} has more cells than the table's ${columns} columns; give ${columns} cells per row.`,
            'markdown',
          )
        }
        return ok(rows.map((row) => ({ ...row, content: (row.content ?? []).slice(0, columns) })))
      },
    })
  }
  return refuseFor(
    'not_a_container',
    `inBlock: block ${inBlock} is a ${kind}; inBlock edits the items of a list or the rows of a table. ` +
      'Edit this block with removeBlocks and markdown without inBlock, or its text with replace_text.',
    'inBlock',
  )
}

/** The nodes of checked blocks, or undefined when one does not fit the schema. */
function toNodes(blocks: readonly DocNode[]): PMNode[] | undefined {
  try {
    return blocks.map((block) => {
      const node = schema.nodeFromJSON(block)
      node.check()
      return node
    })
  } catch {
    return undefined
  }
}
