import * as Y from 'yjs'
import { MEDIA_TYPES } from '../doc-json.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuse } from '../result.ts'
import { blocksToY } from '../yjs/build-y.ts'
import { editTarget, revAfterEdit } from './edit-target.ts'

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

/**
 * Removes and inserts whole blocks of one section in one transaction. Untouched blocks are not rewritten,
 * so they keep their Yjs identity and concurrent typing inside them survives.
 */
export function editBlocks(
  fragment: Y.XmlFragment,
  sectionId: string,
  rev: string,
  input: EditBlocksInput,
): Result<{ rev: string }> {
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
  const withMedia = remove.filter((n) => containsMedia(section.blocks[n - 1]!))
  if (withMedia.length > 0 && !input.allowMediaRemoval) {
    return refuse(
      'media_removal_needs_flag',
      `removeBlocks: block ${withMedia.join(', ')} holds an image or embed; set allowMediaRemoval to remove it.`,
      'removeBlocks',
    )
  }

  let inserted: Y.XmlElement[] = []
  if (input.markdown !== undefined && input.markdown !== '') {
    const parsed = parseMarkdown(input.markdown, { minHeadingLevel: section.level + 1 })
    if (parsed.kind === 'error') return parsed
    inserted = blocksToY(parsed.value)
  }
  if (remove.length === 0 && inserted.length === 0) {
    return refuse('nothing_to_change', 'edit: give removeBlocks or markdown; this edit would change nothing.')
  }

  doc.transact(() => {
    let insertAt = afterBlock === 0 ? section.headingIndex + 1 : section.blockIndexes[afterBlock - 1]! + 1
    // Highest index first, so earlier indexes stay valid while deleting.
    for (const number of [...remove].reverse()) {
      const index = section.blockIndexes[number - 1]!
      fragment.delete(index, 1)
      if (index < insertAt) insertAt--
    }
    if (inserted.length > 0) fragment.insert(insertAt, inserted)
  })
  return ok({ rev: revAfterEdit(fragment, sectionId) })
}

/** Whether the block is or holds media. Iterative: the nesting depth is the document's choice. */
function containsMedia(block: Y.XmlElement): boolean {
  const stack: Y.XmlElement[] = [block]
  for (let element = stack.pop(); element !== undefined; element = stack.pop()) {
    if (MEDIA_TYPES.has(element.nodeName)) return true
    for (const child of element.toArray()) if (child instanceof Y.XmlElement) stack.push(child)
  }
  return false
}
