/** get_outline: the heading tree with each heading's section_id and rev, bounded by MAX_READ_CHARS. */
import { z } from 'zod'
import { walkLines } from '../domain/budget.ts'
import { renderOutput } from '../domain/frame.ts'
import { notes } from '../domain/notes.ts'
import { outlineLines } from '../domain/outline.ts'
import { MAX_READ_CHARS } from '../limits.ts'
import { refusal, type ToolModule, textResult } from './context.ts'
import { instrument } from './instrument.ts'
import { openDocument } from './open-document.ts'

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
        const opened = await openDocument(ctx, slug)
        if (opened.kind === 'error') return refusal(opened.message)
        const { resolved, content } = opened.value
        let lines: string[]
        try {
          lines = outlineLines(content.outline())
        } finally {
          content.release()
        }
        const total = lines.length
        const first = start ?? 1
        if (total > 0 && first > total) {
          return refusal(
            `start: ${first} is past the last heading; the document has ${total} headings. Call again with start from 1 to ${total}, or without start.`,
          )
        }
        const walk = walkLines(lines.slice(first - 1), MAX_READ_CHARS)
        const shownEnd = first - 1 + walk.kept
        const noteLines: string[] = []
        if (shownEnd < total || first > 1) {
          if (shownEnd < total) noteLines.push(notes.nextStart(shownEnd + 1))
          noteLines.push(notes.outlineTruncated(walk.kept, total))
        }
        const source = { kind: 'outline', slug, whose: resolved.access.whose } as const
        return textResult(renderOutput({ source, body: walk.text, notes: noteLines }))
      }),
    )
  },
}
