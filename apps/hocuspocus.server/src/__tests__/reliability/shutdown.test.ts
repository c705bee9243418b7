/**
 * SIGTERM with changes the server has received but not yet stored (a long store debounce): the real
 * server process stores them before it exits, and they are in the database afterwards.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { DATABASE_KIND, useTestDatabase } from '@collab/test-support/database'
import { readMetric } from '@collab/test-support/metrics'
import { spawnServer } from '@collab/test-support/process'
import { connectProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { openDatabase } from '../../db/client.ts'

describe(`shutdown (${DATABASE_KIND})`, () => {
  const database = useTestDatabase()

  test('SIGTERM stores every change an editor had synced, then exits 0', async () => {
    const db = database()
    const server = await spawnServer({
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? '',
      STORE_DEBOUNCE_MS: '60000',
      STORE_MAX_DEBOUNCE_MS: '120000',
    })
    const token = readFileSync(join(db.dataDir, 'first-run-token'), 'utf8').trim()
    const list = (await (
      await fetch(`${server.url}/api/documents`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { documents: Array<{ room: string }> }
    const room = list.documents[0]!.room

    const client = connectProvider(server.url, room, token)
    await client.ready
    const fragment = client.doc.getXmlFragment(FRAGMENT_NAME)
    for (let i = 1; i <= 20; i++) {
      const p = new Y.XmlElement('paragraph')
      p.insert(0, [new Y.XmlText(`unsaved line ${i}`)])
      fragment.push([p])
    }
    await eventually(() => expect(client.provider.unsyncedChanges).toBe(0), 10_000, 'server to acknowledge')
    // Nothing stored yet: the debounce holds it.
    expect(await readMetric(server.url, 'collab_document_stores_total')).toBe(0)
    expect(await readMetric(server.url, 'collab_documents_unstored')).toBe(1)

    server.proc.kill('SIGTERM')
    expect(await server.proc.exited).toBe(0)
    client.destroy()

    const reopened = await openDatabase(
      db.databaseUrl
        ? { kind: 'postgres', url: db.databaseUrl }
        : { kind: 'pglite', dir: join(db.dataDir, 'pglite') },
    )
    try {
      const row = await reopened.prisma.document.findUniqueOrThrow({
        where: { room },
        include: { state: true, updates: { orderBy: { id: 'asc' } } },
      })
      const doc = new Y.Doc()
      // What a load applies: the snapshot, then the update log (shutdown appends; it compacts nothing).
      Y.applyUpdate(doc, new Uint8Array(row.state!.state))
      for (const logged of row.updates) Y.applyUpdate(doc, new Uint8Array(logged.update))
      const text = readPlainText(doc.getXmlFragment(FRAGMENT_NAME))
      for (let i = 1; i <= 20; i++) expect(text).toContain(`unsaved line ${i}`)
    } finally {
      await reopened.close()
    }
  })
})
