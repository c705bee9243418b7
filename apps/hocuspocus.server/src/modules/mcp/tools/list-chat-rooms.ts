/** list_chat_rooms: the headings of a document that have a chat room, in outline order, bounded by MAX_READ_CHARS. */
import { MAX_READ_CHARS } from '../limits.ts'
import { pageFromStart } from '../paging/start-paging.ts'
import { roomLines } from '../render/chat.ts'
import { renderOutput } from '../render/frame.ts'
import { notes } from '../render/notes.ts'
import { documentShortIds } from '../render/outline.ts'
import { slugField, startField } from './fields.ts'
import { headingsOf, openOutline } from './open-document.ts'
import { defineTool } from './tool.ts'

export const listChatRooms = defineTool({
  name: 'list_chat_rooms',
  kind: 'read',
  title: 'List chat rooms of a document',
  description:
    'The headings of one document that have a chat room, in outline order: one line per room with ' +
    'the heading title, its section_id (the start get_outline prints, which every tool taking a ' +
    'section_id accepts), message count and last activity; rooms whose heading was removed come last, ' +
    'marked "(heading removed)", with the whole id. Text only. ' +
    `At most ${MAX_READ_CHARS} characters per call: a longer list keeps its first rooms and ends with ` +
    'a note naming the `start` that shows the rest. Read a room with read_chat_thread.',
  inputSchema: {
    slug: slugField(),
    start: startField('room', 'list'),
  },
  async handler({ slug, start }, ctx) {
    const opened = await openOutline(ctx, slug)
    if (opened.kind === 'error') return opened
    const { resolved, outline } = opened.value
    const rooms = await ctx.chat.listRooms(resolved.document.id)
    if (rooms.length === 0) {
      return `No chat rooms in "${slug}" yet. Post under a heading with post_chat_message to start one.`
    }
    const lines = roomLines(headingsOf(outline), rooms, documentShortIds(outline))
    const page = pageFromStart(lines, start, { one: 'room', many: 'chat rooms' }, notes.roomsTruncated)
    if (page.kind === 'error') return page
    const source = { kind: 'chat rooms', slug, whose: resolved.access.whose } as const
    return renderOutput({ source, body: page.value.body, notes: page.value.notes })
  },
})
