/**
 * The chat service on the real database (PGlite, or PostgreSQL with TEST_DATABASE_URL): seqs are handed
 * out atomically (concurrent posts never share or skip one), threads page newest last, deleted messages
 * stay hidden.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createTestDatabase, type TestDatabase } from '@collab/test-support/database'
import { startTestServer, userWithToken } from '@collab/test-support/server'
import type { RunningServer } from '../server.ts'

let db: TestDatabase
let server: RunningServer
let userId: string

beforeAll(async () => {
  db = await createTestDatabase()
  server = await startTestServer(db)
  userId = (await userWithToken(server, 'carol')).user.id
})
afterAll(async () => {
  await server.stop()
  await db.cleanup()
})

async function newDocument(title: string) {
  const created = await server.services.documents.create(userId, { title })
  if (created.kind === 'error') throw new Error(created.message)
  return created.value
}

test('20 concurrent posts to a new room get seqs 1..20, each once, and the room counts them', async () => {
  const doc = await newDocument('Concurrent')
  const posted = await Promise.all(
    Array.from({ length: 20 }, (_, i) => server.services.chat.post(doc.id, 'sec-a', userId, `m${i}`)),
  )
  expect(posted.map((p) => p.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
  expect(new Set(posted.map((p) => p.roomId)).size).toBe(1)
  const rooms = await server.services.chat.listRooms(doc.id)
  expect(rooms).toHaveLength(1)
  expect(rooms[0]).toMatchObject({ sectionId: 'sec-a', messageCount: 20, lastSeq: 20 })
  expect(rooms[0]!.lastMessageAt).toBeInstanceOf(Date)
})

test('rooms are per heading: another section starts again at seq 1', async () => {
  const doc = await newDocument('Two rooms')
  expect((await server.services.chat.post(doc.id, 'one', userId, 'a')).seq).toBe(1)
  expect((await server.services.chat.post(doc.id, 'one', userId, 'b')).seq).toBe(2)
  expect((await server.services.chat.post(doc.id, 'two', userId, 'c')).seq).toBe(1)
  expect((await server.services.chat.listRooms(doc.id)).map((r) => r.sectionId)).toEqual(['one', 'two'])
})

test('readThread pages newest last with beforeSeq, hides deleted messages, names authors', async () => {
  const doc = await newDocument('Thread')
  for (let i = 1; i <= 7; i++) await server.services.chat.post(doc.id, 's', userId, `text ${i}`)
  const room = await server.services.chat.findRoom(doc.id, 's')
  await server.services.db.prisma.chatMessage.updateMany({
    where: { roomId: room!.id, seq: 4 },
    data: { deletedAt: new Date() },
  })
  const first = await server.services.chat.readThread({ documentId: doc.id, sectionId: 's' }, { limit: 3 })
  expect(first.messages.map((m) => m.seq)).toEqual([5, 6, 7])
  expect(first.hasOlder).toBe(true)
  expect(first.messages[0]).toMatchObject({ authorHandle: 'carol', text: 'text 5' })
  const second = await server.services.chat.readThread({ roomId: room!.id }, { beforeSeq: 5, limit: 3 })
  expect(second.messages.map((m) => m.seq)).toEqual([1, 2, 3])
  expect(second.hasOlder).toBe(false)
  const none = await server.services.chat.readThread({ documentId: doc.id, sectionId: 'nope' }, { limit: 3 })
  expect(none).toEqual({ messages: [], hasOlder: false })
})
