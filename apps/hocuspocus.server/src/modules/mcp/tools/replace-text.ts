/** replace_text: replace one exact occurrence of text inside a section, guarded by the section's rev. */
import { replaceText as replaceSectionText } from '@collab/doc-schema'
import { z } from 'zod'
import { MAX_MARKDOWN_CHARS } from '../limits.ts'
import type { ToolModule } from './context.ts'
import { instrument } from './instrument.ts'
import { resolveForWrite, writeAndAnswer } from './write-access.ts'

export const inputSchema = {
  slug: z.string().min(1).max(200).describe('The document slug.'),
  section_id: z.string().min(1).max(100).describe('The section, from get_outline.'),
  rev: z.string().min(1).max(100).describe('The section rev you read; a stale rev is refused.'),
  old_text: z
    .string()
    .min(1)
    .max(MAX_MARKDOWN_CHARS)
    .describe('Plain text that occurs exactly once in the section (not Markdown syntax).'),
  new_text: z.string().max(MAX_MARKDOWN_CHARS).describe('The replacement plain text.'),
}

export const replaceText: ToolModule = {
  name: 'replace_text',
  needs: 'write',
  register(server, ctx) {
    server.registerTool(
      'replace_text',
      {
        title: 'Replace text in a section',
        description:
          'Replaces old_text, which must occur exactly once in the section (heading included), with new_text; ' +
          'formatting around it is kept. Plain text, not Markdown; no line breaks outside code blocks. Pass ' +
          'the rev you read: a stale rev is refused and nothing changes. Texts up to ' +
          `${MAX_MARKDOWN_CHARS} characters. Returns the section's new rev, after the change is stored.`,
        inputSchema,
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
      instrument(ctx, 'replace_text', async (args) => {
        const resolved = await resolveForWrite(ctx, args.slug)
        if (resolved.kind === 'error') return resolved.result
        return writeAndAnswer(
          ctx,
          resolved.value,
          'replace_text',
          (fragment) => replaceSectionText(fragment, args.section_id, args.rev, args.old_text, args.new_text),
          (done) => `section_id: ${args.section_id}\nrev: ${done.rev}`,
        )
      }),
    )
  },
}
