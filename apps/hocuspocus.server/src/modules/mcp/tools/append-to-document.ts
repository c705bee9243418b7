/** append_to_document: Markdown added at the end of a document, through the live document. */
import { appendMarkdown } from '@collab/doc-schema'
import { z } from 'zod'
import { MAX_MARKDOWN_CHARS } from '../limits.ts'
import { slugField } from './fields.ts'
import { defineTool } from './tool.ts'
import { editDocument, SUGGEST_MODE_TEXT } from './write-path.ts'

export const appendToDocument = defineTool({
  name: 'append_to_document',
  kind: 'write',
  proposes: true,
  title: 'Append to a document',
  description:
    `Adds Markdown (up to ${MAX_MARKDOWN_CHARS} characters) at the end of a document; people editing it ` +
    'see it at once. Returns the section_id and rev of the section the new end belongs to, of every ' +
    'section its headings created, and of the last section when blocks before the first heading joined it. Answers ' +
    'only after the change is stored. Needs write access and a token with scope write (or suggest).' +
    SUGGEST_MODE_TEXT,
  inputSchema: {
    slug: slugField('The document slug.'),
    markdown: z
      .string()
      .min(1)
      .max(MAX_MARKDOWN_CHARS, {
        error: `markdown: over ${MAX_MARKDOWN_CHARS} characters. Send it in several append_to_document calls of up to ${MAX_MARKDOWN_CHARS} each, in order.`,
      })
      .describe(
        `Markdown to add at the end, up to ${MAX_MARKDOWN_CHARS} characters; headings ## and deeper.`,
      ),
  },
  handler: ({ slug, markdown }, ctx) => {
    ctx.report?.stage(`adding and storing ${markdown.length} characters of Markdown`)
    return editDocument(
      ctx,
      slug,
      (fragment) => appendMarkdown(fragment, markdown),
      (end) =>
        [
          `section_id: ${end.sectionId}`,
          `rev: ${end.rev}`,
          ...end.created.map((made) => `created: section_id: ${made.sectionId}, rev: ${made.rev}`),
          ...(end.changed ? [`changed: section_id: ${end.changed.sectionId}, rev: ${end.changed.rev}`] : []),
        ].join('\n'),
    )
  },
})
