/**
 * post_chat_message: a message in one heading's chat room. Stored before the answer; people with the
 * document open are told at once (ctx.notify).
 */
import { z } from 'zod'
import { refuse } from '../../../errors.ts'
import { MAX_CHAT_MESSAGE_CHARS } from '../limits.ts'
import { sectionIdField, slugField } from './fields.ts'
import { goneRefusal, headingsOf } from './open-document.ts'
import { defineTool } from './tool.ts'
import { resolveForWrite } from './write-path.ts'

/** What connected editors receive (JSON) when a message is posted. */
export type ChatStatelessPayload = { type: 'chat'; sectionId: string; seq: number; author: string }

/** Agents cannot mention (and so notify) people: every `@` goes, and the ends are trimmed. */
export function cleanChatText(text: string): string {
  return text.replaceAll('@', '').replaceAll('\u0000', '').trim()
}

export const postChatMessage = defineTool({
  name: 'post_chat_message',
  kind: 'write',
  title: 'Post a chat message',
  description:
    `Posts a message (1 to ${MAX_CHAT_MESSAGE_CHARS} characters; every @ is removed, so no one is ` +
    'mentioned) in the chat room of one heading of a document; the room starts with its first message. ' +
    'People with the document open are told at once. Returns the message seq. Needs write access and ' +
    'a token with scope write.',
  inputSchema: {
    slug: slugField('The document slug.'),
    section_id: sectionIdField(
      'The heading whose chat room to post in; ids come from get_outline or list_chat_rooms.',
    ),
    text: z
      .string()
      .min(1)
      .max(MAX_CHAT_MESSAGE_CHARS)
      .describe(`The message, 1 to ${MAX_CHAT_MESSAGE_CHARS} characters; every @ is removed (no mentions).`),
  },
  async handler({ slug, section_id, text }, ctx) {
    const cleaned = cleanChatText(text)
    if (cleaned === '') {
      return refuse(
        'invalid_input',
        'text: nothing is left once every @ is removed; write the message in words.',
        'text',
      )
    }
    const resolved = await resolveForWrite(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const { document } = resolved.value
    const outline = await ctx.reader.openOutline(document.room)
    if (!outline) return goneRefusal(slug)
    if (!headingsOf(outline).some((h) => h.sectionId === section_id)) {
      return refuse(
        'not_found',
        `section_id: no heading has id "${section_id}"; chat rooms belong to existing headings. Call get_outline for the current section ids.`,
        'section_id',
      )
    }
    const posted = await ctx.chat.post(document.id, section_id, ctx.principal.user.id, cleaned)
    const author = ctx.principal.user.handle
    const payload: ChatStatelessPayload = { type: 'chat', sectionId: section_id, seq: posted.seq, author }
    ctx.notify(document.room, JSON.stringify(payload))
    return `seq: ${posted.seq}\nsection_id: ${section_id}`
  },
})
