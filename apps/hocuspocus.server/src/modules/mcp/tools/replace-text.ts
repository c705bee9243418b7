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
    'Replaces old_text, which must occur exactly once in the section (heading included), with new_text; ' +
    'formatting around it is kept. Plain text, not Markdown; no line breaks outside code blocks. Pass ' +
    'the rev you read: a stale rev is refused and nothing changes. Texts up to ' +
    `${MAX_MARKDOWN_CHARS} characters. Returns the section's new rev, after the change is stored.`,
  inputSchema: {
    slug: slugField('The document slug.'),
    section_id: sectionIdField('The section, from get_outline.'),
    rev: revField(),
    old_text: z
      .string()
      .min(1)
      .max(MAX_MARKDOWN_CHARS)
      .describe('Plain text that occurs exactly once in the section (not Markdown syntax).'),
    new_text: z.string().max(MAX_MARKDOWN_CHARS).describe('The replacement plain text.'),
  },
  handler: (args, ctx) =>
    editDocument(
      ctx,
      args.slug,
      (fragment) => replaceSectionText(fragment, args.section_id, args.rev, args.old_text, args.new_text),
      (done) => `section_id: ${args.section_id}\nrev: ${done.rev}`,
    ),
})
