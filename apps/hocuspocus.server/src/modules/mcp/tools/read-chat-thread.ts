/** read_chat_thread: the newest messages of one heading's chat room, newest last, bounded by MAX_READ_CHARS. */
import { z } from 'zod'
import type { ChatMessageView } from '../../../chat/service.ts'
import { escapeFrameContent, renderOutput } from '../domain/frame.ts'
import { notes } from '../domain/notes.ts'
import { DEFAULT_CHAT_PAGE, MAX_CHAT_PAGE, MAX_CHAT_SEQ, MAX_READ_CHARS } from '../limits.ts'
import { refusal, type ToolModule, textResult } from './context.ts'
import { instrument } from './instrument.ts'
import { headingsOf, openOutline } from './open-document.ts'

/**
 * One message: a header line, then its text; lines after the first are indented two spaces, so every
 * line that starts a message is the server's header and a message cannot pass for another one.
 */
export function messageEntry(message: ChatMessageView): string {
  const text = escapeFrameContent(message.text).replace(/\r\n?|\n/g, '\n  ')
  return `[seq ${message.seq}] ${escapeFrameContent(message.authorHandle)} at ${message.createdAt.toISOString()}: ${text}`
}

/**
 * Keeps the newest entries (the last ones) while `size + entry.length + 1 <= max`. Returns how many of
 * the newest were kept (at least one, since a message is far below the budget).
 */
export function keepNewest(entries: readonly string[], max: number): number {
  let size = 0
  let kept = 0
  for (let i = entries.length - 1; i >= 0; i--) {
    const length = entries[i]!.length
    if (kept > 0 && size + length + 1 > max) break
    size += length + 1
    kept++
  }
  return kept
}

export const inputSchema = {
  slug: z.string().min(1).max(200).describe('The document slug, as find_documents lists it.'),
  section_id: z
    .string()
    .min(1)
    .max(100)
    .describe('The heading whose chat room to read; ids come from list_chat_rooms or get_outline.'),
  before_seq: z
    .number()
    .int()
    .min(1)
    // seq is a PostgreSQL integer: a larger before_seq failed the query (found by the input fuzzing suite).
    .max(MAX_CHAT_SEQ)
    .optional()
    .describe('Show only messages older than this seq (a page with older messages names it).'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_CHAT_PAGE)
    .optional()
    .describe(`Messages per call, 1 to ${MAX_CHAT_PAGE} (default ${DEFAULT_CHAT_PAGE}).`),
}

export const readChatThread: ToolModule = {
  name: 'read_chat_thread',
  needs: 'read',
  register(server, ctx) {
    server.registerTool(
      'read_chat_thread',
      {
        title: 'Read a chat thread',
        description:
          "The newest messages of one heading's chat room, oldest first and newest last, each with its seq, " +
          `author handle and time. At most ${MAX_CHAT_PAGE} messages (default ${DEFAULT_CHAT_PAGE}) and ` +
          `${MAX_READ_CHARS} characters per call; when older messages exist a note names the before_seq ` +
          'that reads them. Room ids come from list_chat_rooms.',
        inputSchema,
        annotations: {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      instrument(ctx, 'read_chat_thread', async ({ slug, section_id, before_seq, limit }) => {
        const opened = await openOutline(ctx, slug)
        if (opened.kind === 'error') return refusal(opened.message)
        const { resolved, outline } = opened.value
        const headingExists = headingsOf(outline).some((h) => h.sectionId === section_id)
        const documentId = resolved.document.id
        const room = await ctx.services.chat.findRoom(documentId, section_id)
        if (!room) {
          if (!headingExists) {
            return refusal(
              `section_id: no heading and no chat room has id "${section_id}". Call list_chat_rooms for the rooms, or get_outline for the headings.`,
            )
          }
          return textResult(
            `No messages under section_id ${section_id} yet. Post one with post_chat_message to start the room.`,
          )
        }
        const page = await ctx.services.chat.readThread(
          { roomId: room.id },
          { beforeSeq: before_seq, limit: limit ?? DEFAULT_CHAT_PAGE },
        )
        if (page.messages.length === 0) {
          return textResult(
            before_seq === undefined
              ? `No messages under section_id ${section_id}.`
              : `No messages before seq ${before_seq} under section_id ${section_id}: the previous page reached the first message.`,
          )
        }
        const entries = page.messages.map(messageEntry)
        const kept = keepNewest(entries, MAX_READ_CHARS)
        const shown = page.messages.slice(page.messages.length - kept)
        const olderExist = page.hasOlder || kept < page.messages.length
        const noteLines = olderExist ? [notes.olderMessages(shown[0]!.seq)] : []
        const source = {
          kind: 'chat thread',
          slug,
          whose: resolved.access.whose,
          sectionId: section_id,
          headingRemoved: !headingExists,
        } as const
        const body = entries.slice(entries.length - kept).join('\n')
        return textResult(renderOutput({ source, body, notes: noteLines }))
      }),
    )
  },
}
