/**
 * A store the database refuses is counted, the document stays in memory (nothing lost, even after its
 * last editor leaves), and the store is retried until the database takes it.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import type { RunningServer } from '../server.ts'

describe(`a failing store (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('is counted, keeps the document in memory, and is retried until it succeeds', async () => {
    const owner = await userWithToken(server, 'rita')
    const created = await server.services.documents.create(owner.user.id, { title: 'Flaky database' })
    if (created.kind === 'error') throw new Error(created.message)
    const room = created.value.room
    const { prisma } = server.services.db
    // A real refusal from the real database: every new update-log row (what a store writes) violates it.
    await prisma.$executeRawUnsafe(
      'ALTER TABLE document_updates ADD CONSTRAINT refuse_stores CHECK (byte_size < 0) NOT VALID',
    )

    const client = connectProvider(server.url, room, owner.token)
    await client.ready
    const p = new Y.XmlElement('paragraph')
    p.insert(0, [new Y.XmlText('written while the database refuses')])
    client.doc.getXmlFragment(FRAGMENT_NAME).push([p])
    await eventually(
      () => expect(server.metrics.storeFailures.get()).toBeGreaterThanOrEqual(1),
      10_000,
      'a failure',
    )
    const failures = server.metrics.storeFailures.get()
    client.destroy()
    // Kept after its last editor left, once the server has seen the editor go and a store since has
    // failed: a document unloads only when its changes are stored.
    await eventually(
      () => expect(server.collab.hocuspocus.getConnectionsCount()).toBe(0),
      10_000,
      'the leave',
    )
    await eventually(
      () => expect(server.metrics.storeFailures.get()).toBeGreaterThan(failures),
      10_000,
      'a store after the leave',
    )
    expect(server.collab.hocuspocus.documents.has(room)).toBe(true) // kept: its changes are not stored

    await prisma.$executeRawUnsafe('ALTER TABLE document_updates DROP CONSTRAINT refuse_stores')
    await eventually(
      async () => {
        const loaded = await server.services.documents.loadState(room)
        const doc = new Y.Doc()
        Y.applyUpdate(doc, loaded!.state!)
        expect(readPlainText(doc.getXmlFragment(FRAGMENT_NAME))).toContain(
          'written while the database refuses',
        )
      },
      20_000,
      'the retried store',
    )
    await eventually(() => expect(server.collab.hocuspocus.documents.has(room)).toBe(false), 5_000, 'unload')
    expect(server.collab.persistence.pendingCount()).toBe(0)
  })
})
