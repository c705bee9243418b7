/** create_document: a new private document owned by the caller, from a title and optional Markdown. */
import { z } from 'zod'
import { MAX_MARKDOWN_CHARS, MAX_TITLE_CHARS } from '../limits.ts'
import { documentLink } from '../resources/uris.ts'
import { defineTool } from './tool.ts'

export const createDocument = defineTool({
  name: 'create_document',
  kind: 'write',
  title: 'Create a document',
  description:
    'Creates a new private document owned by you and returns its slug. ' +
    `Title up to ${MAX_TITLE_CHARS} characters; Markdown up to ${MAX_MARKDOWN_CHARS} characters ` +
    '(use ## and deeper headings; the title is the only level-1 heading). Markdown that is refused ' +
    'leaves no document. Add more afterwards with append_to_document.',
  inputSchema: {
    title: z.string().min(1).max(MAX_TITLE_CHARS).describe(`The title, up to ${MAX_TITLE_CHARS} characters.`),
    markdown: z
      .string()
      .max(MAX_MARKDOWN_CHARS, {
        error: `markdown: over ${MAX_MARKDOWN_CHARS} characters. Create the document with the first part, then add the rest with append_to_document in parts of up to ${MAX_MARKDOWN_CHARS}.`,
      })
      .optional()
      .describe(`Body as Markdown, up to ${MAX_MARKDOWN_CHARS} characters; headings ## and deeper.`),
  },
  async handler({ title, markdown }, ctx) {
    ctx.report?.stage(`checking and storing ${markdown?.length ?? 0} characters of Markdown`)
    const created = await ctx.documents.create(ctx.principal.user.id, { title, markdown })
    if (created.kind === 'error') return created
    const { slug } = created.value
    return {
      kind: 'linked',
      text: `slug: ${slug}\nCreated a private document. Call get_outline to see its sections.`,
      links: [documentLink(slug)],
    }
  },
})
