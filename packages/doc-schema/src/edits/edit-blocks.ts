import type { Node as PMNode } from '@tiptap/pm/model'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { schema } from '../extensions.ts'
import { isHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuse } from '../result.ts'
import { sectionRev } from '../sections/section-rev.ts'
import { nodeToY } from '../yjs/build-y.ts'
import { editTarget } from './edit-target.ts'
import { mediaUnder, patchBlocks, restorePlaceholders } from './patch-blocks.ts'

export type EditBlocksInput = {
  /** Block numbers (1-based, as a section read shows them) to remove. */
  removeBlocks?: number[]
  /** Insert after this block number; 0 = right after the heading. Default: where the first removed block
   * was, or the end of the section. Numbers refer to the section as read, before removal. */
  afterBlock?: number
  /** Markdown to insert; its headings must be deeper than the section's heading. */
  markdown?: string
  /** Removing an image or embed (which the Markdown view cannot show whole) needs this flag. */
  allowMediaRemoval?: boolean
}

/** A section a write changed or created, as its answer names it. */
export type WrittenSection = { sectionId: string; rev: string }

export type EditBlocksResult = {
  /** The edited section's new rev. */
  rev: string
  /** Sections the inserted Markdown's headings created, in document order. */
  created: WrittenSection[]
}

/**
 * Removes and inserts blocks of one section in one transaction. Untouched blocks are not rewritten, so
 * they keep their Yjs identity and concurrent typing inside them survives. When the new blocks replace
 * removed ones in their place (`afterBlock` left to default), each is written into the removed block of
 * the same kind in place (`patchBlocks`): text is diffed character by character, so a person's cursor
 * and typing in that block survive too. A removed image whose `[image: …]` placeholder the Markdown keeps
 * is kept (and needs no `allowMediaRemoval`).
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
  const count = section.blocks.length

  const remove = [...new Set(input.removeBlocks ?? [])].sort((a, b) => a - b)
  const outside = remove.filter((n) => !Number.isInteger(n) || n < 1 || n > count)
  if (outside.length > 0) {
    return refuse(
      'block_out_of_range',
      `removeBlocks: ${outside.join(', ')} not in 1..${count}; the section has ${count} blocks.`,
      'removeBlocks',
    )
  }
  const afterBlock = input.afterBlock ?? (remove.length > 0 ? remove[0]! - 1 : count)
  if (!Number.isInteger(afterBlock) || afterBlock < 0 || afterBlock > count) {
    return refuse(
      'block_out_of_range',
      `afterBlock: ${afterBlock} is not in 0..${count}; 0 means after the heading.`,
      'afterBlock',
    )
  }
  const removed = remove.map((n) => section.blocks[n - 1]!)

  let blocks: DocNode[] = []
  if (input.markdown !== undefined && input.markdown !== '') {
    const parsed = parseMarkdown(input.markdown, { minHeadingLevel: section.level + 1 })
    if (parsed.kind === 'error') return parsed
    blocks = parsed.value
  }
  const media = mediaUnder(removed)
  const restored = restorePlaceholders(blocks, media)
  let nodes = toNodes(restored.blocks)
  let kept = restored.kept
  if (!nodes) {
    // A placeholder where its media cannot stand (the first line of a list item): keep the text.
    nodes = toNodes(blocks) ?? []
    kept = new Set()
  }
  const lost = remove.filter((_n, i) => mediaUnder([removed[i]!]).some((element) => !kept.has(element)))
  if (lost.length > 0 && !input.allowMediaRemoval) {
    return refuse(
      'media_removal_needs_flag',
      `removeBlocks: block ${lost.join(', ')} holds an image or embed; keep its [image: …] placeholder line ` +
        'in markdown to keep it, or set allowMediaRemoval to remove it.',
      'removeBlocks',
    )
  }
  if (remove.length === 0 && nodes.length === 0) {
    return refuse('nothing_to_change', 'edit: give removeBlocks or markdown; this edit would change nothing.')
  }

  const inPlace =
    remove.length > 0 &&
    nodes.length > 0 &&
    afterBlock === remove[0]! - 1 &&
    remove.every((n, i) => n === remove[0]! + i)
  doc.transact(() => {
    if (inPlace) {
      patchBlocks(fragment, section.blockIndexes[remove[0]! - 1]!, removed, nodes)
      return
    }
    let insertAt = afterBlock === 0 ? section.headingIndex + 1 : section.blockIndexes[afterBlock - 1]! + 1
    // Highest index first, so earlier indexes stay valid while deleting.
    for (const number of [...remove].reverse()) {
      const index = section.blockIndexes[number - 1]!
      fragment.delete(index, 1)
      if (index < insertAt) insertAt--
    }
    if (nodes.length > 0) fragment.insert(insertAt, nodes.map(nodeToY))
  })
  const createdIds = new Set(
    nodes.filter((node) => node.type.name === 'heading').map((node) => String(node.attrs[HEADING_ID_ATTR])),
  )
  const [edited, ...created] = sectionsFrom(section.heading, createdIds)
  return ok({ rev: edited?.rev ?? '', created })
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

/**
 * The section of `heading` and the sections after it whose heading ids are in `created`, with revs:
 * walked from the heading through Yjs's item list, so the cost follows those sections, not the document.
 */
export function sectionsFrom(heading: Y.XmlElement, created: ReadonlySet<string>): WrittenSection[] {
  const out: WrittenSection[] = []
  let current: { heading: Y.XmlElement; blocks: Y.XmlElement[] } | undefined = { heading, blocks: [] }
  const close = (section: { heading: Y.XmlElement; blocks: Y.XmlElement[] }) => {
    const id = section.heading.getAttribute(HEADING_ID_ATTR)
    out.push({ sectionId: isHeadingId(id) ? id : '', rev: sectionRev(section.heading, section.blocks) })
  }
  for (let item = heading._item?.right ?? null; item && current; item = item.right) {
    if (item.deleted || !item.countable) continue
    for (const child of item.content.getContent()) {
      if (!(child instanceof Y.XmlElement)) continue
      if (child.nodeName !== 'heading') {
        current.blocks.push(child)
        continue
      }
      close(current)
      const id = child.getAttribute(HEADING_ID_ATTR)
      current = typeof id === 'string' && created.has(id) ? { heading: child, blocks: [] } : undefined
      if (!current) break
    }
  }
  if (current) close(current)
  return out
}
