/**
 * Two server instances share live documents through Redis: an edit made through instance A reaches a
 * provider connected to instance B. Needs TEST_REDIS_URL and a shared PostgreSQL (TEST_DATABASE_URL);
 * .ci/run provides both.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import * as Y from 'yjs'
import type { RunningServer } from '../server.ts'
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from './helpers/database.ts'
import { connectProvider } from './helpers/provider.ts'
import { eventually, startTestServer, userWithToken } from './helpers/server.ts'

const REDIS_URL = process.env.TEST_REDIS_URL || undefined

describe.skipIf(!REDIS_URL || !TEST_DATABASE_URL)('two instances through Redis (postgres)', () => {
  let db: TestDatabase
  let a: RunningServer
  let b: RunningServer

  beforeAll(async () => {
    db = await createTestDatabase()
    a = await startTestServer(db, { redisUrl: REDIS_URL })
    b = await startTestServer(db, { redisUrl: REDIS_URL, migrateOnStart: false })
  }, 60_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await db?.cleanup()
  }, 60_000)

  test('an edit through instance A reaches a provider on instance B, and back', async () => {
    const alice = await userWithToken(a, 'alice')
    const created = await a.services.documents.create(alice.user.id, { title: 'Shared across instances' })
    if (created.kind === 'error') throw new Error(created.message)
    const room = created.value.room

    const onA = connectProvider(a.url, room, alice.token)
    const onB = connectProvider(b.url, room, alice.token)
    await Promise.all([onA.ready, onB.ready])

    const add = (doc: Y.Doc, text: string) => {
      const p = new Y.XmlElement('paragraph')
      p.insert(0, [new Y.XmlText(text)])
      doc.getXmlFragment(FRAGMENT_NAME).push([p])
    }
    add(onA.doc, 'written on A')
    await eventually(() =>
      expect(readPlainText(onB.doc.getXmlFragment(FRAGMENT_NAME))).toContain('written on A'),
    )
    add(onB.doc, 'written on B')
    await eventually(() =>
      expect(readPlainText(onA.doc.getXmlFragment(FRAGMENT_NAME))).toContain('written on B'),
    )
    expect(Y.encodeStateVector(onA.doc)).toEqual(Y.encodeStateVector(onB.doc))
    onA.destroy()
    onB.destroy()
  })
})
