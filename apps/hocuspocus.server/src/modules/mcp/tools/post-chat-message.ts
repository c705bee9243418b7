/**
 * post_chat_message: a message in one heading's chat room, by the one rule of chat/posting.ts (stored
 * before the answer; people with the document open are told at once).
 */
import { z } from 'zod'
import { MAX_CHAT_MESSAGE_CHARS } from '../../../limits.ts'
import { sectionIdField, slugField } from './fields.ts'
import { defineTool } from './tool.ts'
import { resolveForWrite } from './write-path.ts'

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
    const resolved = await resolveForWrite(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const posted = await ctx.chatPosting.post(
      { document: resolved.value.document, sectionId: section_id, author: ctx.principal, text },
      { text: 'text', sectionId: 'section_id' },
    )
    if (posted.kind === 'error') return posted
    return `seq: ${posted.value.seq}\nsection_id: ${section_id}`
  },
})
