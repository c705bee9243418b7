/** replace_text: replace one exact occurrence of text inside a section, guarded by the section's rev. */
import { replaceText as replaceSectionText } from '@collab/doc-schema'
import { z } from 'zod'
import { MAX_MARKDOWN_CHARS } from '../limits.ts'
import { revField, sectionIdField, slugField } from './fields.ts'
import { defineTool } from './tool.ts'
import { editDocument, SUGGEST_MODE_TEXT } from './write-path.ts'

export const replaceText = defineTool({
  name: 'replace_text',
  kind: 'destructive',
  proposes: true,
  title: 'Replace text in a section',
  description:
    'Replaces old_text, which must occur exactly once in the section (heading included; block narrows ' +
    'the search, block 0 is the heading, so it retitles a section), with new_text. Both are Markdown as ' +
    'read_document shows it: copy old_text from a read (a whole line with its [n] label, indentation and ' +
    'list marker, a code line, or a table row | a | b | to change its cells), and write new_text the same ' +
    'way: inline Markdown (*Monday* is italic, `code`, **bold**, [text](url); a literal * is \\*), the code as ' +
    'it is inside a code block. Only the characters that differ change, each keeping the formatting of the ' +
    'text it replaces unless the Markdown says otherwise. Lines that are not text (an [image: …] placeholder, ' +
    "a table's | - | line, a code fence) and list markers or task boxes are changed with edit_blocks; the " +
    'refusal names the call. No new line breaks outside code blocks. Pass the rev you read: a stale rev is ' +
    `refused and nothing changes. Texts up to ${MAX_MARKDOWN_CHARS} characters. Returns the section's new ` +
    'rev, after the change is stored.' +
    SUGGEST_MODE_TEXT,
  inputSchema: {
    slug: slugField('The document slug.'),
    section_id: sectionIdField('The section, from get_outline.'),
    rev: revField(),
    old_text: z
      .string()
      .min(1)
      .max(MAX_MARKDOWN_CHARS)
      .describe(
        'Text that occurs exactly once in the section (or in block), as read_document shows it (or as written).',
      ),
    new_text: z
      .string()
      .max(MAX_MARKDOWN_CHARS)
      .describe('The replacement, as Markdown like old_text (a literal * as \\*; in code, the code as is).'),
    block: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('Only look in this block: 0 = the heading, n = block [n] of read_document.'),
  },
  handler: (args, ctx) => {
    ctx.report?.stage(`replacing ${args.old_text.length} characters of text and storing the change`)
    return editDocument(
      ctx,
      args.slug,
      (fragment) =>
        replaceSectionText(fragment, args.section_id, args.rev, args.old_text, args.new_text, {
          block: args.block,
        }),
      (done) => `section_id: ${args.section_id}\nrev: ${done.rev}`,
      args.section_id,
    )
  },
})
