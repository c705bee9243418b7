/** read_chat_thread: the newest messages of one heading's chat room, newest last, bounded by MAX_READ_CHARS. */

import { refuse } from '@collab/doc-schema'
import { z } from 'zod'
import { DEFAULT_CHAT_PAGE, MAX_CHAT_PAGE, MAX_CHAT_SEQ, MAX_READ_CHARS } from '../limits.ts'
import { keepNewest, messageEntry } from '../render/chat.ts'
import { renderOutput } from '../render/frame.ts'
import { notes } from '../render/notes.ts'
import { sectionIdField, slugField } from './fields.ts'
import { headingsOf, openOutline } from './open-document.ts'
import { defineTool } from './tool.ts'

export const readChatThread = defineTool({
  name: 'read_chat_thread',
  kind: 'read',
  title: 'Read a chat thread',
  description:
    "The newest messages of one heading's chat room, oldest first and newest last, each with its seq, " +
    "author and time: a person's message by their handle, an agent's as `<handle>'s agent (<app>)`, the " +
    `app it posted through. At most ${MAX_CHAT_PAGE} messages (default ${DEFAULT_CHAT_PAGE}) and ` +
    `${MAX_READ_CHARS} characters per call; when older messages exist a note names the before_seq ` +
    'that reads them. Room ids come from list_chat_rooms.',
  inputSchema: {
    slug: slugField(),
    section_id: sectionIdField(
      'The heading whose chat room to read; ids come from list_chat_rooms or get_outline.',
    ),
    before_seq: z
      .number()
      .int()
      .min(1)
      .max(MAX_CHAT_SEQ) // seq is a PostgreSQL integer
      .optional()
      .describe('Show only messages older than this seq (a page with older messages names it).'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_CHAT_PAGE)
      .optional()
      .describe(`Messages per call, 1 to ${MAX_CHAT_PAGE} (default ${DEFAULT_CHAT_PAGE}).`),
  },
  async handler({ slug, section_id, before_seq, limit }, ctx) {
    const opened = await openOutline(ctx, slug)
    if (opened.kind === 'error') return opened
    const { resolved, outline } = opened.value
    const headingExists = headingsOf(outline).some((h) => h.sectionId === section_id)
    const room = await ctx.chat.findRoom(resolved.document.id, section_id)
    if (!room) {
      if (!headingExists) {
        return refuse(
          'not_found',
          `section_id: no heading and no chat room has id "${section_id}". Call list_chat_rooms for the rooms, or get_outline for the headings.`,
          'section_id',
        )
      }
      return `No messages under section_id ${section_id} yet. Post one with post_chat_message to start the room.`
    }
    const page = await ctx.chat.readThread(
      { roomId: room.id },
      { beforeSeq: before_seq, limit: limit ?? DEFAULT_CHAT_PAGE },
    )
    if (page.messages.length === 0) {
      return before_seq === undefined
        ? `No messages under section_id ${section_id}.`
        : `No messages before seq ${before_seq} under section_id ${section_id}: the previous page reached the first message.`
    }
    const entries = page.messages.map(messageEntry)
    const kept = keepNewest(entries, MAX_READ_CHARS)
    const shown = page.messages.slice(page.messages.length - kept)
    const olderExist = page.hasOlder || kept < page.messages.length
    const source = {
      kind: 'chat thread',
      slug,
      whose: resolved.access.whose,
      sectionId: section_id,
      headingRemoved: !headingExists,
    } as const
    return renderOutput({
      source,
      body: entries.slice(entries.length - kept).join('\n'),
      notes: olderExist ? [notes.olderMessages(shown[0]!.seq)] : [],
    })
  },
})
