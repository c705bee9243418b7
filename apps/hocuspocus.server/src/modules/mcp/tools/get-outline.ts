/** get_outline: the heading tree with each heading's section_id and rev, bounded by MAX_READ_CHARS. */
import { z } from 'zod'
import { renderOutput } from '../domain/frame.ts'
import { notes } from '../domain/notes.ts'
import { outlineLines } from '../domain/outline.ts'
import { pageFromStart } from '../domain/start-paging.ts'
import { MAX_READ_CHARS } from '../limits.ts'
import { refusal, type ToolModule, textResult } from './context.ts'
import { instrument } from './instrument.ts'
import { openOutline } from './open-document.ts'

export const inputSchema = {
  slug: z.string().min(1).max(200).describe('The document slug, as find_documents lists it.'),
  start: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based index of the first heading to show (default 1); a cut outline names the next one.'),
}

export const getOutline: ToolModule = {
  name: 'get_outline',
  needs: 'read',
  register(server, ctx) {
    server.registerTool(
      'get_outline',
      {
        title: 'Get a document outline',
        description:
          'The heading tree of one document, in document order: one line per heading, indented by depth, ' +
          'with its section_id and rev (use them with read_document and the edit tools). Text only. ' +
          `At most ${MAX_READ_CHARS} characters of headings per call: a longer outline keeps its first ` +
          'headings and ends with a note naming the `start` that shows the rest. Call this first, then read ' +
          'one section at a time.',
        inputSchema,
        annotations: {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      instrument(ctx, 'get_outline', async ({ slug, start }) => {
        const opened = await openOutline(ctx, slug)
        if (opened.kind === 'error') return refusal(opened.message)
        const { resolved, outline } = opened.value
        const lines = outlineLines(outline)
        const page = pageFromStart(lines, start, notes.outlineTruncated)
        if (page.kind === 'past_end') {
          return refusal(
            `start: ${start} is past the last heading; the document has ${page.total} headings. Call again with start from 1 to ${page.total}, or without start.`,
          )
        }
        const source = { kind: 'outline', slug, whose: resolved.access.whose } as const
        return textResult(renderOutput({ source, body: page.body, notes: page.notes }))
      }),
    )
  },
}
