import type { Node as PMNode } from '@tiptap/pm/model'
import type * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { nodeToY } from '../yjs/build-y.ts'
import { editItems } from './edit-items.ts'
import { editTarget, sectionsFrom, type WrittenSection } from './edit-target.ts'
import { mediaUnder, patchChildren, restorePlaceholders, toNodes } from './patch-blocks.ts'

export type EditBlocksInput = {
  /** Block numbers (1-based, as a section read shows them) to remove; with `inBlock`, the lines of that
   * block as read (1 = the line after `[n] `) on which the items or rows to remove start. */
  removeBlocks?: number[]
  /** Insert after this block number; 0 = right after the heading. Default: where the first removed block
   * was, or the end of the section. Numbers refer to the section as read, before removal. With
   * `inBlock`, a line of that block (0 = before the first item; see `editItems`). */
  afterBlock?: number
  /** Markdown to insert; its headings must be deeper than the section's heading. With `inBlock`, list
   * items (`- text`, `- [ ] task`, `1. step`) or table rows (`| a | b |`). */
  markdown?: string
  /** Removing an image or embed (which the Markdown view cannot show whole) needs this flag. */
  allowMediaRemoval?: boolean
  /** Edit the items of the lists or the rows of the tables in this block instead of the section's blocks. */
  inBlock?: number
}

export type EditBlocksResult = {
  /** The edited section's new rev. */
  rev: string
  /** Sections the inserted Markdown's headings created, in document order. */
  created: WrittenSection[]
}

/** Where an edit removes and inserts: the section's blocks. */
type Place = {
  parent: Y.XmlFragment
  children: Y.XmlElement[]
  /** Index of each child in `parent`. */
  indexes: number[]
  /** Index in `parent` where "after 0" inserts. */
  first: number
  /** The Markdown's blocks as children of this place (checked), or a refusal. */
  parse(markdown: string): Result<DocNode[]>
}

/**
 * Removes and inserts blocks of one section (or, with `inBlock`, items and rows inside one block, by the
 * lines a read prints them on: `editItems`) in one transaction. Untouched blocks are not rewritten, so they keep their Yjs identity and concurrent
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
  let edited: Result<PMNode[]>
  if (input.inBlock !== undefined) {
    const { inBlock } = input
    const count = section.blocks.length
    if (!Number.isInteger(inBlock) || inBlock < 1 || inBlock > count)
      return refuseFor('block_out_of_range', `inBlock: ${inBlock} is not in 1..${count}.`, 'inBlock')
    edited = editItems(doc, section.blocks[inBlock - 1]!, inBlock, input)
  } else {
    const place: Place = {
      parent: fragment,
      children: section.blocks,
      indexes: section.blockIndexes,
      first: section.headingIndex + 1,
      parse: (markdown) => parseMarkdown(markdown, { minHeadingLevel: section.level + 1 }),
    }
    edited = applyEdit(doc, place, input)
  }
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
      `removeBlocks: ${outside.join(', ')} not in 1..${count}; the section has ${count} blocks.`,
      'removeBlocks',
    )
  }
  const afterBlock = input.afterBlock ?? (remove.length > 0 ? remove[0]! - 1 : count)
  if (!Number.isInteger(afterBlock) || afterBlock < 0 || afterBlock > count) {
    return refuseFor(
      'block_out_of_range',
      `afterBlock: ${afterBlock} is not in 0..${count}; 0 means after the heading.`,
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
      `removeBlocks: block ${lost.join(', ')} holds an image or embed; ` +
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
