/** replace_text: replace one exact occurrence of text inside a section, guarded by the section's rev. */
import { replaceText as replaceSectionText } from '@collab/doc-schema'
import { z } from 'zod'
import { MAX_MARKDOWN_CHARS } from '../limits.ts'
import { revField, sectionIdField, slugField } from './fields.ts'
import { defineTool } from './tool.ts'
import { editDocument } from './write-path.ts'

export const replaceText = defineTool({
  name: 'replace_text',
  kind: 'destructive',
  title: 'Replace text in a section',
  description:
    'Replaces old_text, which must occur exactly once in the section (heading included; block narrows ' +
    'the search, block 0 is the heading, so it retitles a section), with new_text. old_text may be copied ' +
    'from read_document as shown: escapes (https\\://) and inline Markdown (`code`, **bold**, [text](url)) ' +
    'are read back; then new_text is read as Markdown too and sets the marks it spells out. Otherwise plain ' +
    'text: only the characters that differ change, each keeping the formatting of the text it replaces. ' +
    'No line breaks outside code blocks. Pass the rev you read: a stale rev is refused and nothing ' +
    `changes. Texts up to ${MAX_MARKDOWN_CHARS} characters. Returns the section's new rev, after the ` +
    'change is stored.',
  inputSchema: {
    slug: slugField('The document slug.'),
    section_id: sectionIdField('The section, from get_outline.'),
    rev: revField(),
    old_text: z
      .string()
      .min(1)
      .max(MAX_MARKDOWN_CHARS)
      .describe(
        'Text that occurs exactly once in the section (or in block), as written or as read_document shows it.',
      ),
    new_text: z.string().max(MAX_MARKDOWN_CHARS).describe('The replacement text.'),
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
    )
  },
})
