/**
 * Chat: one room per heading of a document (keyed by the heading's section id), messages numbered 1, 2, 3…
 * per room. Access is not decided here: callers resolve the document through the documents service first.
 * A room's name (the heading's section id, which editors can set) and every message go through
 * `storableText`, in writes and lookups alike, so they always name the same room.
 */
import { SESSION_PRINCIPAL_PREFIX } from '../auth/tokens.ts'
import type { PrismaClient } from '../db/generated/client.ts'
import { storableText } from '../db/storable-text.ts'
import { MAX_CHAT_APP_NAME_CHARS } from '../limits.ts'

export type ChatRoomSummary = {
  id: string
  sectionId: string
  messageCount: number
  lastSeq: number
  lastMessageAt: Date | null
}

export type ChatMessageView = {
  seq: number
  authorHandle: string
  /** The app an agent posted through; null when the person posted from the page. */
  authorApp: string | null
  text: string
  createdAt: Date
}

/** What an API token without a label is called as a chat author's app. */
export const UNNAMED_TOKEN_APP = 'API token'

export type PostedMessage = { roomId: string; seq: number; createdAt: Date }

export type ThreadPage = {
  /** Oldest first, newest last. */
  messages: ChatMessageView[]
  /** True when a message older than the first one returned exists (and is not deleted). */
  hasOlder: boolean
}

/** The tokenId prefix of an OAuth principal (auth/oauth-access.ts), then the access token's row id. */
const OAUTH_PRINCIPAL_PREFIX = 'oauth:'

export type RoomRef = { roomId: string } | { documentId: string; sectionId: string }

export function createChatService(prisma: PrismaClient) {
  async function roomIdOf(ref: RoomRef): Promise<string | null> {
    if ('roomId' in ref) return ref.roomId
    const room = await prisma.chatRoom.findUnique({
      where: {
        documentId_sectionId: { documentId: ref.documentId, sectionId: storableText(ref.sectionId) },
      },
      select: { id: true },
    })
    return room?.id ?? null
  }

  return {
    /**
     * Stores a message with the room's next seq. One statement: the upsert takes the room's row lock, so
     * concurrent posts (also the first ones, which race to create the room) get distinct, increasing seqs
     * on PostgreSQL, and PGlite runs statements one at a time anyway.
     */
    async post(
      documentId: string,
      sectionId: string,
      authorId: string,
      text: string,
      /** The app an agent posts through (appOf); null for the person from the page. */
      authorApp: string | null = null,
    ): Promise<PostedMessage> {
      const rows = await prisma.$queryRaw<Array<{ room_id: string; seq: number; created_at: Date }>>`
        WITH room AS (
          INSERT INTO chat_rooms (id, document_id, section_id, last_seq, message_count, last_message_at)
          VALUES (${crypto.randomUUID()}::uuid, ${documentId}::uuid, ${storableText(sectionId)}, 1, 1, now())
          ON CONFLICT (document_id, section_id) DO UPDATE SET
            last_seq = chat_rooms.last_seq + 1,
            message_count = chat_rooms.message_count + 1,
            last_message_at = now()
          RETURNING id, last_seq, last_message_at
        )
        INSERT INTO chat_messages (room_id, seq, author_id, author_app, text, created_at)
        SELECT id, last_seq, ${authorId}::uuid, ${authorApp === null ? null : storableText(authorApp)},
               ${storableText(text)}, last_message_at FROM room
        RETURNING room_id::text AS room_id, seq, created_at`
      const row = rows[0]
      if (!row) throw new Error('chat post returned no row')
      return { roomId: row.room_id, seq: Number(row.seq), createdAt: new Date(row.created_at) }
    },

    /**
     * The app a principal posts through, from its credential (never from what the caller says): null for a
     * person signed in by the browser; an OAuth grant's app name; else the API token's label, or
     * UNNAMED_TOKEN_APP. Cut to MAX_CHAT_APP_NAME_CHARS.
     */
    async appOf(tokenId: string): Promise<string | null> {
      if (tokenId.startsWith(SESSION_PRINCIPAL_PREFIX)) return null
      let name: string | null | undefined
      if (tokenId.startsWith(OAUTH_PRINCIPAL_PREFIX)) {
        const rows = await prisma.$queryRaw<Array<{ name: string | null }>>`
          SELECT c.name FROM oauth_access_tokens t JOIN oauth_clients c ON c.client_id = t.client_id
           WHERE t.id = ${tokenId.slice(OAUTH_PRINCIPAL_PREFIX.length)}`
        name = rows[0]?.name
      } else {
        name = (await prisma.apiToken.findUnique({ where: { id: tokenId }, select: { label: true } }))?.label
      }
      const shown = (name ?? '').replace(/\s+/g, ' ').trim()
      return Array.from(shown || UNNAMED_TOKEN_APP)
        .slice(0, MAX_CHAT_APP_NAME_CHARS)
        .join('')
    },

    /** Every room of a document, ordered by section id (callers order by outline). */
    async listRooms(documentId: string): Promise<ChatRoomSummary[]> {
      return prisma.chatRoom.findMany({
        where: { documentId },
        select: { id: true, sectionId: true, messageCount: true, lastSeq: true, lastMessageAt: true },
        orderBy: [{ sectionId: 'asc' }, { id: 'asc' }],
      })
    },

    async findRoom(documentId: string, sectionId: string): Promise<ChatRoomSummary | null> {
      return prisma.chatRoom.findUnique({
        where: { documentId_sectionId: { documentId, sectionId: storableText(sectionId) } },
        select: { id: true, sectionId: true, messageCount: true, lastSeq: true, lastMessageAt: true },
      })
    },

    /**
     * Up to `limit` messages before `beforeSeq` (all when omitted), newest last, soft-deleted ones left
     * out. A room that does not exist reads as empty.
     */
    async readThread(ref: RoomRef, page: { beforeSeq?: number; limit: number }): Promise<ThreadPage> {
      const roomId = await roomIdOf(ref)
      if (!roomId) return { messages: [], hasOlder: false }
      const rows = await prisma.chatMessage.findMany({
        where: {
          roomId,
          deletedAt: null,
          ...(page.beforeSeq !== undefined ? { seq: { lt: page.beforeSeq } } : {}),
        },
        select: {
          seq: true,
          text: true,
          createdAt: true,
          authorApp: true,
          author: { select: { handle: true } },
        },
        orderBy: { seq: 'desc' },
        take: page.limit + 1,
      })
      const hasOlder = rows.length > page.limit
      const messages = rows
        .slice(0, page.limit)
        .reverse()
        .map((row) => ({
          seq: row.seq,
          authorHandle: row.author.handle,
          authorApp: row.authorApp,
          text: row.text,
          createdAt: row.createdAt,
        }))
      return { messages, hasOlder }
    },
  }
}

export type ChatService = ReturnType<typeof createChatService>
