/**
 * post_chat_message: a message in one heading's chat room. Stored before the answer; people with the
 * document open are told at once through a Hocuspocus stateless message.
 */
import { z } from 'zod'
import { MAX_CHAT_MESSAGE_CHARS } from '../limits.ts'
import { refusal, type ToolModule, textResult } from './context.ts'
import { instrument } from './instrument.ts'
import { headingsOf, notFoundMessage } from './open-document.ts'
import { resolveForWrite } from './write-access.ts'

/** What connected editors receive (JSON) when a message is posted. */
export type ChatStatelessPayload = { type: 'chat'; sectionId: string; seq: number; author: string }

/**
 * Agents cannot mention (and so notify) people: every `@` goes, and the ends are trimmed. NUL is dropped
 * too: PostgreSQL cannot store it in text, and it carries nothing a reader could see.
 */
export function cleanChatText(text: string): string {
  return text.replaceAll('@', '').replaceAll('\u0000', '').trim()
}

export const inputSchema = {
  slug: z.string().min(1).max(200).describe('The document slug.'),
  section_id: z
    .string()
    .min(1)
    .max(100)
    .describe('The heading whose chat room to post in; ids come from get_outline or list_chat_rooms.'),
  text: z
    .string()
    .min(1)
    .max(MAX_CHAT_MESSAGE_CHARS)
    .describe(`The message, 1 to ${MAX_CHAT_MESSAGE_CHARS} characters; every @ is removed (no mentions).`),
}

export const postChatMessage: ToolModule = {
  name: 'post_chat_message',
  needs: 'write',
  register(server, ctx) {
    server.registerTool(
      'post_chat_message',
      {
        title: 'Post a chat message',
        description:
          `Posts a message (1 to ${MAX_CHAT_MESSAGE_CHARS} characters; every @ is removed, so no one is ` +
          'mentioned) in the chat room of one heading of a document; the room starts with its first message. ' +
          'People with the document open are told at once. Returns the message seq. Needs write access and ' +
          'a token with scope write.',
        inputSchema,
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
      instrument(ctx, 'post_chat_message', async ({ slug, section_id, text }) => {
        const cleaned = cleanChatText(text)
        if (cleaned === '') {
          return refusal('text: nothing is left once every @ is removed; write the message in words.')
        }
        const resolved = await resolveForWrite(ctx, slug)
        if (resolved.kind === 'error') return resolved.result
        const { document } = resolved.value
        const outline = await ctx.reader.openOutline(document.room)
        if (!outline) return refusal(notFoundMessage(slug))
        const headingExists = headingsOf(outline).some((h) => h.sectionId === section_id)
        if (!headingExists) {
          return refusal(
            `section_id: no heading has id "${section_id}"; chat rooms belong to existing headings. Call get_outline for the current section ids.`,
          )
        }
        const author = ctx.principal.user.handle
        const posted = await ctx.services.chat.post(document.id, section_id, ctx.principal.user.id, cleaned)
        const payload: ChatStatelessPayload = { type: 'chat', sectionId: section_id, seq: posted.seq, author }
        ctx.hocuspocus.documents.get(document.room)?.broadcastStateless(JSON.stringify(payload))
        return textResult(`seq: ${posted.seq}\nsection_id: ${section_id}`)
      }),
    )
  },
}
