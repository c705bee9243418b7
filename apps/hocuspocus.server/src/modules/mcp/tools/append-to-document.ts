/** append_to_document: Markdown added at the end of a document, through the live document. */
import { appendMarkdown } from '@collab/doc-schema'
import { z } from 'zod'
import { MAX_MARKDOWN_CHARS } from '../limits.ts'
import type { ToolModule } from './context.ts'
import { instrument } from './instrument.ts'
import { resolveForWrite, writeAndAnswer } from './write-access.ts'

export const inputSchema = {
  slug: z.string().min(1).max(200).describe('The document slug.'),
  markdown: z
    .string()
    .min(1)
    .max(MAX_MARKDOWN_CHARS)
    .describe(`Markdown to add at the end, up to ${MAX_MARKDOWN_CHARS} characters; headings ## and deeper.`),
}

export const appendToDocument: ToolModule = {
  name: 'append_to_document',
  needs: 'write',
  register(server, ctx) {
    server.registerTool(
      'append_to_document',
      {
        title: 'Append to a document',
        description:
          `Adds Markdown (up to ${MAX_MARKDOWN_CHARS} characters) at the end of a document; people editing it ` +
          'see it at once. Returns the section_id and rev of the section the new end belongs to. Answers ' +
          'only after the change is stored. Needs write access and a token with scope write.',
        inputSchema,
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
      instrument(ctx, 'append_to_document', async ({ slug, markdown }) => {
        const resolved = await resolveForWrite(ctx, slug)
        if (resolved.kind === 'error') return resolved.result
        return writeAndAnswer(
          ctx,
          resolved.value,
          'append_to_document',
          (fragment) => appendMarkdown(fragment, markdown),
          (end) => `section_id: ${end.sectionId}\nrev: ${end.rev}`,
        )
      }),
    )
  },
}
