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

  test('a change refused while the document unloads keeps it loaded, and is stored once the database takes it', async () => {
    // Hocuspocus asks beforeUnloadDocument, then unloads when no connection and no store is left. The
    // unload compacts the log first; an editor who came meanwhile, typed, failed to store and left was
    // unloaded with the document. The compaction is held here until the editor has gone, so the order
    // is certain.
    const owner = await userWithToken(server, 'rita2')
    const created = await server.services.documents.create(owner.user.id, {
      title: 'Unloading',
      markdown: 'first',
    })
    if (created.kind === 'error') throw new Error(created.message)
    const room = created.value.room
    const { prisma } = server.services.db
    const paragraph = (doc: Y.Doc, text: string) => {
      const p = new Y.XmlElement('paragraph')
      p.insert(0, [new Y.XmlText(text)])
      doc.getXmlFragment(FRAGMENT_NAME).push([p])
    }
    const stored = async () => {
      const loaded = await server.services.documents.loadState(room)
      const doc = new Y.Doc()
      Y.applyUpdate(doc, loaded!.state!)
      return readPlainText(doc.getXmlFragment(FRAGMENT_NAME))
    }
    // A first editor's change is stored as a log row, so its leaving compacts.
    const first = connectProvider(server.url, room, owner.token)
    await first.ready
    paragraph(first.doc, 'stored before')
    await eventually(async () => expect(await stored()).toContain('stored before'), 10_000, 'the first store')
    const compaction = (
      server.collab.persistence as unknown as { compaction: { run: (...a: unknown[]) => Promise<unknown> } }
    ).compaction
    const run = compaction.run.bind(compaction)
    let entered = false
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    compaction.run = async (...args: unknown[]) => {
      entered = true
      await gate
      return run(...args)
    }
    try {
      first.destroy()
      await eventually(() => expect(entered).toBe(true), 10_000, 'the unload compacting')
      await prisma.$executeRawUnsafe(
        'ALTER TABLE document_updates ADD CONSTRAINT refuse_late_stores CHECK (byte_size < 0) NOT VALID',
      )
      const failures = server.metrics.storeFailures.get()
      const late = connectProvider(server.url, room, owner.token)
      await late.ready
      paragraph(late.doc, 'typed while it unloads')
      await eventually(
        () => expect(server.metrics.storeFailures.get()).toBeGreaterThan(failures),
        10_000,
        'refused',
      )
      late.destroy()
      await eventually(
        () => expect(server.collab.hocuspocus.getConnectionsCount()).toBe(0),
        10_000,
        'the leave',
      )
    } finally {
      compaction.run = run
      release()
    }
    await prisma.$executeRawUnsafe('ALTER TABLE document_updates DROP CONSTRAINT refuse_late_stores')
    await eventually(
      async () => expect(await stored()).toContain('typed while it unloads'),
      20_000,
      'the retried store',
    )
  })
})
