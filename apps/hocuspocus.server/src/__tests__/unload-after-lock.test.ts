/**
 * A document whose last editor leaves while its save lock is held (by a title and search refresh, a
 * compaction, a version: work this server does under the lock) unloads once the lock is released.
 * Hocuspocus tries the unload when the last connection closes and after its own store, and gives up for
 * good if the lock is held at that moment: a capacity run (800 editors on 400 documents, PGlite) left
 * 100 documents in memory with no connection, for as long as it watched.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import type { RunningServer } from '../server.ts'

describe(`a document left while its save lock is held (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('unloads once the lock is released, with what was typed stored', async () => {
    const owner = await userWithToken(server, 'lena')
    const created = await server.services.documents.create(owner.user.id, { title: 'Left while locked' })
    if (created.kind === 'error') throw new Error(created.message)
    const room = created.value.room
    const hocuspocus = server.collab.hocuspocus
    const client = connectProvider(server.url, room, owner.token)
    await client.ready
    const p = new Y.XmlElement('paragraph')
    p.insert(0, [new Y.XmlText('typed before leaving')])
    client.doc.getXmlFragment(FRAGMENT_NAME).push([p])
    const storedText = async () => {
      const loaded = await server.services.documents.loadState(room)
      const doc = new Y.Doc()
      if (loaded?.state) Y.applyUpdate(doc, loaded.state)
      return readPlainText(doc.getXmlFragment(FRAGMENT_NAME))
    }
    // Stored, and no store pending: nothing of Hocuspocus's own will try the unload again.
    await eventually(
      async () => expect(await storedText()).toContain('typed before leaving'),
      10_000,
      'the store',
    )
    const debouncer = (hocuspocus as unknown as { debouncer: { isDebounced(id: string): boolean } }).debouncer
    await eventually(
      () => expect(debouncer.isDebounced(`onStoreDocument-${room}`)).toBe(false),
      10_000,
      'no store pending',
    )

    const document = hocuspocus.documents.get(room)
    if (!document) throw new Error('not loaded')
    const release = await document.saveMutex.acquire()
    client.destroy()
    await eventually(() => expect(hocuspocus.getConnectionsCount()).toBe(0), 10_000, 'the leave')
    // Hocuspocus's own attempt came and found the lock held.
    await Bun.sleep(300)
    expect(hocuspocus.documents.has(room)).toBe(true)

    release()
    await eventually(() => expect(hocuspocus.documents.has(room)).toBe(false), 10_000, 'the unload')
    expect(await storedText()).toContain('typed before leaving')
  })
})
