/**
 * The services take strings as transports received them: NUL and lone surrogates (which PostgreSQL's text
 * columns and parameters refuse) never reach SQL as they are, so no caller has to clean its input first.
 * Each call below threw (a database error, "invalid byte sequence" or 22P05) when a service passed such a
 * string straight to a query.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { RunningServer } from '../server.ts'

const BAD = 'a\u0000b\ud800c'

let server: RunningServer
let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
let userId: string
let documentId: string

beforeAll(async () => {
  const added = await server.services.users.add(handle('storable'), `name ${BAD}`)
  if (added.kind === 'error') throw new Error(added.message)
  userId = added.value.id
  const created = await server.services.documents.create(userId, { title: 'Target' })
  if (created.kind === 'error') throw new Error(created.message)
  documentId = created.value.id
}, 60_000)

describe(`services clean what they receive before SQL (${DATABASE_KIND})`, () => {
  test('documents: create with such a title and Markdown stores clean text; admin and room lookups find nothing', async () => {
    const { documents } = server.services
    const created = await documents.create(userId, { title: `Title ${BAD}`, markdown: `## S\n\ntext ${BAD}` })
    if (created.kind === 'error') throw new Error(created.message)
    expect(created.value.title).toBe('Title ab\ufffdc')
    expect((await documents.bySlugForAdmin(`x${BAD}`)).kind).toBe('error')
    expect((await documents.share(`x${BAD}`, userId, 'viewer')).kind).toBe('error')
    expect(await documents.loadState(`room${BAD}`)).toBeNull()
    expect(await documents.loadOutline(`room${BAD}`)).toBeNull()
  })

  test('chat: a message and a room name holding them are stored and read back clean', async () => {
    const { chat } = server.services
    await chat.post(documentId, `sec${BAD}`, userId, `hello ${BAD}`)
    const room = await chat.findRoom(documentId, `sec${BAD}`)
    expect(room?.sectionId).toBe('secab\ufffdc')
    const thread = await chat.readThread({ documentId, sectionId: `sec${BAD}` }, { limit: 5 })
    expect(thread.messages.map((m) => m.text)).toEqual(['hello ab\ufffdc'])
  })

  test('users and tokens: a name and a label are stored clean; revoking such an id is "not found"', async () => {
    const { users, tokens } = server.services
    expect((await users.byHandle(`x${BAD}`)).kind).toBe('error')
    const issued = await tokens.issue(userId, { scopes: ['read'], label: `label ${BAD}` })
    if (issued.kind === 'error') throw new Error(issued.message)
    expect(issued.value.record.label).toBe('label ab\ufffdc')
    const revoked = await tokens.revoke(`ctk${BAD}`)
    expect(revoked.kind === 'error' && revoked.code).toBe('not_found')
  })

  test('search: a query, ids and a snapshot id holding them find nothing instead of failing', async () => {
    const { search } = server.services
    const asOf = new Date()
    const found = await search.search({ userId, scope: 'mine', terms: [`${BAD}`], asOf, take: 5 })
    expect(Array.isArray(found.rows)).toBe(true)
    expect(await search.byIds({ userId, scope: 'mine', ids: [`id${BAD}`] })).toEqual([])
    const slice = { snapshotId: `snap${BAD}`, userId, offset: 0, count: 5 }
    expect(await search.readSnapshotSlice(slice)).toBeNull()
  })
})
