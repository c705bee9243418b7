/**
 * Posting in a heading's chat room: the one rule for every transport (the MCP tool post_chat_message and
 * POST /api/documents/:slug/chat/:sectionId). The text is cleaned, the heading must exist now, the
 * message is stored, then the people with the document open are told. Who may post (write access) is
 * decided before, where the transport resolves the document. Who the author is comes from the poster's
 * principal: the person (a browser session) or an agent of theirs, stored with the app it posted
 * through (chat service appOf), so a page shows "alice's agent · Claude", never a second "alice".
 */
import { ok, type Result, refuse } from '@collab/doc-schema'
import type { Principal } from '../auth/tokens.ts'
import { MAX_CHAT_MESSAGE_CHARS } from '../limits.ts'

/** What connected editors receive (JSON, a Hocuspocus stateless message) when a message is posted. */
export type ChatNotice = {
  type: 'chat'
  sectionId: string
  seq: number
  author: string
  /** The app an agent posted through; null for the person. */
  app: string | null
}

/** No one can mention (and so notify) people from a post: every `@` goes, NULs too, and the ends are trimmed. */
export function cleanChatText(text: string): string {
  return text.replaceAll('@', '').replaceAll('\u0000', '').trim()
}

export type ChatPostingDeps = {
  chat: {
    post(
      documentId: string,
      sectionId: string,
      authorId: string,
      text: string,
      authorApp: string | null,
    ): Promise<{ seq: number; createdAt: Date }>
    /** The app a principal posts through (null: the person, from the page). */
    appOf(tokenId: string): Promise<string | null>
  }
  /** Whether the document (its live copy if open, else the stored one) has a heading with this id. */
  headingExists(room: string, sectionId: string): Promise<boolean>
  /** Sends a stateless message to the editors that have `room` open on this instance. */
  notify(room: string, payload: string): void
}

export type ChatPost = {
  document: { id: string; room: string }
  sectionId: string
  /** Who posts: the person, or an agent of theirs and its app, as their credential says. */
  author: Principal
  /** As the caller sent it; cleaned here. */
  text: string
}

export type PostedChatMessage = {
  seq: number
  author: string
  /** The app an agent posted through; null when the person posted from the page. */
  app: string | null
  text: string
  createdAt: Date
}

/** How the caller's transport names the inputs, so a refusal names the field the caller sent. */
export type ChatFieldNames = { text: string; sectionId: string }

export type ChatPosting = {
  post(input: ChatPost, fields: ChatFieldNames): Promise<Result<PostedChatMessage>>
}

export function createChatPosting(deps: ChatPostingDeps): ChatPosting {
  return {
    async post({ document, sectionId, author, text }, fields) {
      const cleaned = cleanChatText(text)
      if (cleaned === '') {
        return refuse(
          'invalid_input',
          `${fields.text}: nothing is left once every @ is removed; write the message in words.`,
          fields.text,
        )
      }
      if (cleaned.length > MAX_CHAT_MESSAGE_CHARS) {
        return refuse(
          'invalid_input',
          `${fields.text}: ${cleaned.length} characters; at most ${MAX_CHAT_MESSAGE_CHARS}. Split the message.`,
          fields.text,
        )
      }
      if (!(await deps.headingExists(document.room, sectionId))) {
        return refuse(
          'not_found',
          `${fields.sectionId}: no heading has id "${sectionId}"; chat rooms belong to existing headings. ` +
            'Read the outline for the current section ids.',
          fields.sectionId,
        )
      }
      const app = await deps.chat.appOf(author.tokenId)
      const posted = await deps.chat.post(document.id, sectionId, author.user.id, cleaned, app)
      const handle = author.user.handle
      const notice: ChatNotice = { type: 'chat', sectionId, seq: posted.seq, author: handle, app }
      deps.notify(document.room, JSON.stringify(notice))
      return ok({ seq: posted.seq, author: handle, app, text: cleaned, createdAt: posted.createdAt })
    },
  }
}
