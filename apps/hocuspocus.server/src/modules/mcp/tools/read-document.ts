/**
 * read_document: the whole document as Markdown, or one section with numbered blocks. Both bounded by
 * MAX_READ_CHARS (or a smaller max_chars); a cut read ends with notes naming how to read on.
 */
import { renderSection } from '@collab/doc-schema'
import { z } from 'zod'
import { escapeFrameContent, renderOutput } from '../domain/frame.ts'
import { notes } from '../domain/notes.ts'
import { readWholeDocument } from '../domain/whole-read.ts'
import { MAX_READ_CHARS } from '../limits.ts'
import { refusal, type ToolModule, textResult } from './context.ts'
import { instrument } from './instrument.ts'
import { openDocument } from './open-document.ts'

export const inputSchema = {
  slug: z.string().min(1).max(200).describe('The document slug, as find_documents lists it.'),
  section_id: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('Read only this section (a heading and its blocks); ids come from get_outline.'),
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
}

export const readDocument: ToolModule = {
  name: 'read_document',
  needs: 'read',
  register(server, ctx) {
    server.registerTool(
      'read_document',
      {
        title: 'Read a document or one section',
        description:
          'Without section_id: the whole document as Markdown. With section_id: a `section_id` line and a ' +
          '`rev` line, then the section heading and every block after it numbered [1], [2]… (the numbers ' +
          `edit_blocks uses). At most ${MAX_READ_CHARS} characters per call (max_chars lowers it); a section ` +
          'read stops on a block boundary and a note names the from_block that continues. For long ' +
          'documents, call get_outline first and read one section at a time.',
        inputSchema,
        annotations: {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      instrument(ctx, 'read_document', async ({ slug, section_id, max_chars, from_block }) => {
        if (from_block !== undefined && section_id === undefined) {
          return refusal(
            'from_block: only works with section_id. Call get_outline for section ids, then read_document with section_id and from_block.',
          )
        }
        const opened = await openDocument(ctx, slug)
        if (opened.kind === 'error') return refusal(opened.message)
        const { resolved, content } = opened.value
        const source = { kind: 'document', slug, whose: resolved.access.whose } as const
        const cap = max_chars ?? MAX_READ_CHARS
        try {
          if (section_id === undefined) {
            const whole = readWholeDocument(content.fragment, cap)
            return textResult(
              renderOutput({
                source,
                body: escapeFrameContent(whole.text),
                notes: whole.cut ? [notes.documentCut(whole.text.length)] : [],
              }),
            )
          }
          const rendered = renderSection(content.fragment, section_id, {
            fromBlock: from_block,
            maxChars: cap,
          })
          if (rendered.kind === 'error') return refusal(sectionRefusal(rendered.code, rendered.message))
          const section = rendered.value
          const noteLines: string[] = []
          const cut = section.nextBlock !== undefined || section.truncatedBlock !== undefined
          if (cut) {
            if (section.nextBlock !== undefined)
              noteLines.push(notes.nextBlock(section.sectionId, section.nextBlock))
            const blocks = {
              first: section.firstBlock,
              last: section.lastBlock,
              count: section.blockCount,
              lastCut: section.truncatedBlock !== undefined,
            }
            noteLines.push(
              max_chars !== undefined && max_chars < MAX_READ_CHARS
                ? notes.sectionCutByMaxChars(section.shownChars, blocks)
                : notes.sectionCutAtCeiling(section.shownChars, blocks),
            )
          }
          return textResult(
            renderOutput({
              before: [`section_id: ${section.sectionId}`, `rev: ${section.rev}`],
              source,
              body: escapeFrameContent(section.text),
              notes: noteLines,
            }),
          )
        } finally {
          content.release()
        }
      }),
    )
  },
}

/** The document model's refusals, worded with this tool's field names and the next step. */
function sectionRefusal(code: string, message: string): string {
  if (code === 'block_out_of_range') {
    return `${message.replace(/^fromBlock:/, 'from_block:')} Call again with from_block in that range, or without it.`
  }
  if (code === 'section_not_found') return `${message} Call get_outline for the current section ids.`
  return message
}
