/**
 * No token and no document or chat text in a log line: a real server process at LOG_LEVEL=debug serves
 * writes, reads, searches, chat and refused tokens, and everything it printed on stderr is checked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { call, connectClient } from '@collab/test-support/mcp'
import { outlineId } from '@collab/test-support/outline'
import { type ServerProcess, spawnServer } from '@collab/test-support/process'
import { findLogLeaks } from './log-check.ts'

describe(`log hygiene (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: ServerProcess
  beforeAll(async () => {
    db = await createTestDatabase()
    server = await spawnServer({
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? '',
      LOG_LEVEL: 'debug',
    })
  }, 60_000)
  afterAll(async () => {
    if (server && server.proc.exitCode === null) {
      server.proc.kill('SIGTERM')
      await server.proc.exited
    }
    await db?.cleanup()
  }, 60_000)

  test('stderr at debug level holds no token, no document text and no chat text', async () => {
    const token = readFileSync(join(db.dataDir, 'first-run-token'), 'utf8').trim()
    const secret = `zebra${Date.now().toString(36)}quartz`
    const forged = `ctk_${'0'.repeat(12)}_${'Q'.repeat(43)}`
    const client = await connectClient(`${server.url}/mcp`, token)

    const created = await call(client, 'create_document', {
      title: 'Quarterly plan', // not the secret: a slug (which logs may name) is made from the title
      markdown: `## Budget\n\nThe ${secret} figure.`,
    })
    expect(created.isError).toBe(false)
    const slug = /slug: (\S+)/.exec(created.text)?.[1] ?? ''
    expect(slug).not.toBe('')
    const outline = await call(client, 'get_outline', { slug })
    const sectionId = outlineId(outline.text, 'Budget')
    expect((await call(client, 'read_document', { slug })).text).toContain(secret)
    expect((await call(client, 'find_documents', { query: secret })).text).toContain(slug)
    expect(
      (await call(client, 'post_chat_message', { slug, section_id: sectionId, text: `ask ${secret}` }))
        .isError,
    ).toBe(false)
    expect((await call(client, 'read_chat_thread', { slug, section_id: sectionId })).text).toContain(secret)
    const refused = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${forged}`, 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(refused.status).toBe(401)
    await client.close()

    server.proc.kill('SIGTERM')
    expect(await server.proc.exited).toBe(0)
    const logs = server.stderr()
    expect(logs).toContain('"tool":"create_document"') // the calls were logged, at debug level
    // Each token is also looked for by its secret part alone.
    expect(
      findLogLeaks(logs, [
        { kind: 'text', label: 'document and chat phrase', value: secret },
        { kind: 'token', label: 'first-run token', value: token },
        { kind: 'token', label: 'forged token', value: forged },
      ]),
    ).toEqual([])
  })
})
