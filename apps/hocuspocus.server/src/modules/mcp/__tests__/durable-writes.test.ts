/**
 * A write is answered as done only once a store covers it (acknowledged => stored). Through the whole
 * server, where the persistence extension confirms stores to the writer; and when the database refuses
 * stores, the tool says the change is not confirmed instead of claiming success.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import type { RunningServer } from '../../../server.ts'

describe(`durable writes through the server (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  async function storedText(room: string): Promise<string> {
    const loaded = await server.services.documents.loadState(room)
    const doc = new Y.Doc()
    if (loaded?.state) Y.applyUpdate(doc, loaded.state)
    return readPlainText(doc.getXmlFragment(FRAGMENT_NAME))
  }

  test('a successful write is in the database when the tool answers', async () => {
    const { user, token } = await userWithToken(server, 'dana')
    const created = await server.services.documents.create(user.id, { title: 'Durable' })
    if (created.kind === 'error') throw new Error(created.message)
    const client = await connectClient(mcpUrlOf(server), token)
    const answer = await call(client, 'append_to_document', {
      slug: created.value.slug,
      markdown: 'kept for sure',
    })
    expect(answer.isError).toBe(false)
    expect(await storedText(created.value.room)).toContain('kept for sure') // no waiting: already stored
  })

  test('when the database refuses the store, the tool does not claim success; the retry stores it later', async () => {
    const { user, token } = await userWithToken(server, 'omar')
    const created = await server.services.documents.create(user.id, { title: 'Refused store' })
    if (created.kind === 'error') throw new Error(created.message)
    const { prisma } = server.services.db
    await prisma.$executeRawUnsafe(
      'ALTER TABLE document_updates ADD CONSTRAINT refuse_agent_stores CHECK (byte_size < 0) NOT VALID',
    )
    try {
      const client = await connectClient(mcpUrlOf(server), token)
      const answer = await call(client, 'append_to_document', {
        slug: created.value.slug,
        markdown: 'not yet durable',
      })
      expect(answer.isError).toBe(true)
      expect(answer.text).toContain('storing it was not confirmed')
      expect(await storedText(created.value.room)).not.toContain('not yet durable')
    } finally {
      await prisma.$executeRawUnsafe('ALTER TABLE document_updates DROP CONSTRAINT refuse_agent_stores')
    }
    await eventually(
      async () => expect(await storedText(created.value.room)).toContain('not yet durable'),
      20_000,
    )
  })
})
