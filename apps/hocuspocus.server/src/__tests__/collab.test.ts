/**
 * The collaboration server end to end: a real server on a real port, real providers over WebSocket,
 * a real database (PGlite, or PostgreSQL with TEST_DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { appendParagraph, createDocument, storedText } from '@collab/test-support/documents'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, startTestServer, userWithToken } from '@collab/test-support/server'
import type * as Y from 'yjs'
import type { RunningServer } from '../server.ts'

describe(`collaboration over WebSocket (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: RunningServer

  beforeAll(async () => {
    db = await createTestDatabase()
    server = await startTestServer(db)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await db?.cleanup()
  }, 60_000)

  test('an edit from a provider is stored and is there after a server restart', async () => {
    const alice = await userWithToken(server, 'alice')
    const created = await createDocument(server, alice.user.id, { title: 'Restart me' })
    const room = created.room

    const client = connectProvider(server.url, room, alice.token)
    await client.ready
    expect(readPlainText(client.doc.getXmlFragment(FRAGMENT_NAME))).toContain('Restart me')
    appendParagraph(client.doc, 'typed before the restart')
    await eventually(() => expect(client.provider.unsyncedChanges).toBe(0), 5000, 'server ack')
    await eventually(async () => expect(await storedText(server, room)).toContain('typed before the restart'))
    client.destroy()
    await server.stop()
    server = await startTestServer(db)
    const again = connectProvider(server.url, room, alice.token)
    await again.ready
    expect(readPlainText(again.doc.getXmlFragment(FRAGMENT_NAME))).toContain('typed before the restart')
    again.destroy()
  })

  test('the stored title and content time follow the document', async () => {
    const owner = await userWithToken(server, 'tina')
    const created = await createDocument(server, owner.user.id, { title: 'Old title' })
    const client = connectProvider(server.url, created.room, owner.token)
    await client.ready
    const heading = client.doc.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement
    const text = heading.get(0) as Y.XmlText
    text.delete(0, text.length)
    text.insert(0, 'New title')
    await eventually(async () => {
      const row = await server.services.db.prisma.document.findUniqueOrThrow({
        where: { id: created.id },
      })
      expect(row.title).toBe('New title')
      expect(row.contentUpdatedAt.getTime()).toBeGreaterThanOrEqual(created.contentUpdatedAt.getTime())
    })
    client.destroy()
  })

  test('a bad token is refused', async () => {
    const owner = await userWithToken(server, 'carol')
    const created = await createDocument(server, owner.user.id, { title: 'Guarded' })
    const client = connectProvider(
      server.url,
      created.room,
      'ctk_notarealtoken_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
    )
    await expect(client.ready).rejects.toThrow('authentication failed')
    client.destroy()
  })

  test('a revoked token and a stranger on a private document are refused', async () => {
    const owner = await userWithToken(server, 'dave')
    const stranger = await userWithToken(server, 'eve')
    const created = await createDocument(server, owner.user.id, { title: 'Private' })
    const strangerClient = connectProvider(server.url, created.room, stranger.token)
    await expect(strangerClient.ready).rejects.toThrow('authentication failed')
    strangerClient.destroy()

    await server.services.tokens.revoke(owner.tokenId)
    const revoked = connectProvider(server.url, created.room, owner.token)
    await expect(revoked.ready).rejects.toThrow('authentication failed')
    revoked.destroy()
  })

  test('a viewer gets a read-only connection: their edits never reach the document', async () => {
    const owner = await userWithToken(server, 'frank')
    const viewer = await userWithToken(server, 'grace')
    const created = await createDocument(server, owner.user.id, { title: 'Look, do not touch' })
    await server.services.documents.share(created.slug, viewer.user.id, 'viewer')

    const viewerClient = connectProvider(server.url, created.room, viewer.token)
    const ownerClient = connectProvider(server.url, created.room, owner.token)
    await Promise.all([viewerClient.ready, ownerClient.ready])
    appendParagraph(viewerClient.doc, 'viewer scribble')
    appendParagraph(ownerClient.doc, 'owner line')
    // The owner's later edit arriving at the viewer proves the server processed traffic after the scribble.
    await eventually(() =>
      expect(readPlainText(viewerClient.doc.getXmlFragment(FRAGMENT_NAME))).toContain('owner line'),
    )
    await eventually(async () => expect(await storedText(server, created.room)).toContain('owner line'))
    expect(readPlainText(ownerClient.doc.getXmlFragment(FRAGMENT_NAME))).not.toContain('viewer scribble')
    expect(await storedText(server, created.room)).not.toContain('viewer scribble')
    viewerClient.destroy()
    ownerClient.destroy()
  })

  test('a read-only token gets a read-only connection even for the owner', async () => {
    const owner = await userWithToken(server, 'heidi', ['read'])
    const created = await createDocument(server, owner.user.id, { title: 'Owner, read token' })
    const writer = await server.services.tokens.issue(owner.user.id, { scopes: ['read', 'write'] })
    if (writer.kind === 'error') throw new Error(writer.message)

    const readClient = connectProvider(server.url, created.room, owner.token)
    const writeClient = connectProvider(server.url, created.room, writer.value.token)
    await Promise.all([readClient.ready, writeClient.ready])
    appendParagraph(readClient.doc, 'from the read token')
    appendParagraph(writeClient.doc, 'from the write token')
    await eventually(async () =>
      expect(await storedText(server, created.room)).toContain('from the write token'),
    )
    await eventually(() =>
      expect(readPlainText(readClient.doc.getXmlFragment(FRAGMENT_NAME))).toContain('from the write token'),
    )
    expect(await storedText(server, created.room)).not.toContain('from the read token')
    readClient.destroy()
    writeClient.destroy()
  })
})
