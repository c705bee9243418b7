/** list_chat_rooms: the headings of a document that have a chat room, in outline order, bounded by MAX_READ_CHARS. */
import { z } from 'zod'
import type { ChatRoomSummary } from '../../../chat/service.ts'
import { escapeFrameContent, renderOutput } from '../domain/frame.ts'
import { notes } from '../domain/notes.ts'
import { pageFromStart } from '../domain/start-paging.ts'
import { MAX_READ_CHARS } from '../limits.ts'
import { refusal, type ToolModule, textResult } from './context.ts'
import { instrument } from './instrument.ts'
import { headingsOf, openOutline } from './open-document.ts'

/** Rooms whose heading exists, in outline order; then rooms whose heading is gone, by section id. */
export function roomLines(
  sections: ReadonlyArray<{ sectionId: string; title: string }>,
  rooms: readonly ChatRoomSummary[],
): string[] {
  const bySection = new Map(rooms.map((room) => [room.sectionId, room]))
  const lines: string[] = []
  const seen = new Set<string>()
  for (const section of sections) {
    const room = bySection.get(section.sectionId)
    if (!room || seen.has(room.sectionId)) continue
    seen.add(room.sectionId)
    lines.push(`${escapeFrameContent(section.title)} ${roomFacts(room)}`)
  }
  for (const room of rooms) if (!seen.has(room.sectionId)) lines.push(`(heading removed) ${roomFacts(room)}`)
  return lines
}

function roomFacts(room: ChatRoomSummary): string {
  const last = room.lastMessageAt ? room.lastMessageAt.toISOString() : 'never'
  return `[section_id: ${escapeFrameContent(room.sectionId)}, messages: ${room.messageCount}, last activity: ${last}]`
}

export const inputSchema = {
  slug: z.string().min(1).max(200).describe('The document slug, as find_documents lists it.'),
  start: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based index of the first room to show (default 1); a cut list names the next one.'),
}

export const listChatRooms: ToolModule = {
  name: 'list_chat_rooms',
  needs: 'read',
  register(server, ctx) {
    server.registerTool(
      'list_chat_rooms',
      {
        title: 'List chat rooms of a document',
        description:
          'The headings of one document that have a chat room, in outline order: one line per room with ' +
          'the heading title, its section_id, message count and last activity; rooms whose heading was ' +
          'removed come last, marked "(heading removed)". Text only. ' +
          `At most ${MAX_READ_CHARS} characters per call: a longer list keeps its first rooms and ends with ` +
          'a note naming the `start` that shows the rest. Read a room with read_chat_thread.',
        inputSchema,
        annotations: {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      instrument(ctx, 'list_chat_rooms', async ({ slug, start }) => {
        const opened = await openOutline(ctx, slug)
        if (opened.kind === 'error') return refusal(opened.message)
        const { resolved, outline } = opened.value
        const rooms = await ctx.services.chat.listRooms(resolved.document.id)
        if (rooms.length === 0) {
          return textResult(
            `No chat rooms in "${slug}" yet. Post under a heading with post_chat_message to start one.`,
          )
        }
        const lines = roomLines(headingsOf(outline), rooms)
        const page = pageFromStart(lines, start, notes.roomsTruncated)
        if (page.kind === 'past_end') {
          return refusal(
            `start: ${start} is past the last room; the document has ${page.total} chat rooms. Call again with start from 1 to ${page.total}, or without start.`,
          )
        }
        const source = { kind: 'chat rooms', slug, whose: resolved.access.whose } as const
        return textResult(renderOutput({ source, body: page.body, notes: page.notes }))
      }),
    )
  },
}
