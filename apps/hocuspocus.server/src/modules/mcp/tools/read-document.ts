/**
 * read_document: the whole document as Markdown, or one section with numbered blocks. Both bounded by
 * MAX_READ_CHARS (or a smaller max_chars); a cut read ends with notes naming how to read on.
 */
import { renderSection } from '@collab/doc-schema'
import { z } from 'zod'
import { refuse } from '../../../errors.ts'
import { MAX_READ_CHARS } from '../limits.ts'
import { escapeFrameContent, renderOutput } from '../render/frame.ts'
import { notes } from '../render/notes.ts'
import { readWholeDocument } from '../render/whole-read.ts'
import { optionalSectionIdField, slugField } from './fields.ts'
import { openDocument } from './open-document.ts'
import { defineTool, type ToolRefusal } from './tool.ts'

export const readDocument = defineTool({
  name: 'read_document',
  kind: 'read',
  title: 'Read a document or one section',
  description:
    'Without section_id: the whole document as Markdown. With section_id: a `section_id` line and a ' +
    '`rev` line, then the section heading and every block after it numbered [1], [2]… (the numbers ' +
    `edit_blocks uses). At most ${MAX_READ_CHARS} characters per call (max_chars lowers it); a section ` +
    'read stops on a block boundary and a note names the from_block that continues (a block longer ' +
    'than the budget is shown in parts: the note adds the block_offset of the next part). For long ' +
    'documents, call get_outline first and read one section at a time.',
  inputSchema: {
    slug: slugField(),
    section_id: optionalSectionIdField(
      'Read only this section (a heading and its blocks); ids come from get_outline.',
    ),
    max_chars: z
      .number()
      .int()
      .min(1)
      .max(MAX_READ_CHARS)
      .optional()
      .describe(`Character budget of this read, 1 to ${MAX_READ_CHARS} (default ${MAX_READ_CHARS}).`),
    from_block: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('With section_id: the first block to show (a cut read names it).'),
    block_offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'With from_block: characters of that block already read; the read shows the rest of it (a cut read names it).',
      ),
  },
  async handler({ slug, section_id, max_chars, from_block, block_offset }, ctx) {
    if (from_block !== undefined && section_id === undefined) {
      return refuse(
        'invalid_input',
        'from_block: only works with section_id. Call get_outline for section ids, then read_document with section_id and from_block.',
        'from_block',
      )
    }
    if (block_offset !== undefined && from_block === undefined) {
      return refuse(
        'invalid_input',
        'block_offset: only works with from_block. Call again with the from_block and block_offset a note named.',
        'block_offset',
      )
    }
    ctx.report?.stage('opening the document')
    const opened = await openDocument(ctx, slug)
    if (opened.kind === 'error') return opened
    const { resolved, content } = opened.value
    const source = { kind: 'document', slug, whose: resolved.access.whose } as const
    const cap = max_chars ?? MAX_READ_CHARS
    ctx.report?.stage(
      `rendering ${section_id === undefined ? 'the document' : 'the section'} (at most ${cap} characters)`,
    )
    try {
      if (section_id === undefined) {
        const whole = readWholeDocument(content.fragment, cap)
        return renderOutput({
          source,
          body: escapeFrameContent(whole.text),
          notes: whole.cut ? [notes.documentCut(whole.text.length, whole.total)] : [],
        })
      }
      const rendered = renderSection(content.fragment, section_id, {
        fromBlock: from_block,
        blockOffset: block_offset,
        maxChars: cap,
      })
      if (rendered.kind === 'error') return withNextStep(rendered)
      const section = rendered.value
      const noteLines: string[] = []
      const cut = section.nextBlock !== undefined || section.truncatedBlock !== undefined
      if (cut) {
        if (section.nextBlock !== undefined)
          noteLines.push(notes.nextBlock(section.sectionId, section.nextBlock, section.nextOffset))
        const blocks = {
          first: section.firstBlock,
          last: section.lastBlock,
          count: section.blockCount,
          lastCut: section.truncatedBlock !== undefined,
          firstContinued: section.firstOffset !== undefined,
        }
        noteLines.push(
          max_chars !== undefined && max_chars < MAX_READ_CHARS
            ? notes.sectionCutByMaxChars(section.shownChars, blocks)
            : notes.sectionCutAtCeiling(section.shownChars, blocks),
        )
      }
      return renderOutput({
        before: [`section_id: ${section.sectionId}`, `rev: ${section.rev}`],
        source,
        body: escapeFrameContent(section.text),
        notes: noteLines,
      })
    } finally {
      content.release()
    }
  },
})

/** The document model's refusals of a section read, with this tool's next step. */
function withNextStep(refusal: ToolRefusal): ToolRefusal {
  if (refusal.code === 'block_out_of_range') {
    return {
      ...refusal,
      message: `${refusal.message} Call again with from_block in that range, or without it.`,
    }
  }
  if (refusal.code === 'block_offset_out_of_range') {
    return {
      ...refusal,
      message: `${refusal.message} Call again with the block_offset a note named, or without it.`,
    }
  }
  if (refusal.code === 'section_not_found') {
    return { ...refusal, message: `${refusal.message} Call get_outline for the current section ids.` }
  }
  return refusal
}
