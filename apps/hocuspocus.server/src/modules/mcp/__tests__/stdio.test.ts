/**
 * The stdio entry as a host runs it: a real SDK Client spawns `src/mcp-stdio.ts` over stdin/stdout
 * (StdioClientTransport), with a temporary database and PORT=0. stdout must carry only MCP messages; the
 * session's resource subscriptions hear of changes stored through the same process's HTTP port.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createTestDatabase, type TestDatabase, withServices } from '@collab/test-support/database'
import { call, connectClient } from '@collab/test-support/mcp'
import { APP_DIR, REPO_DIR } from '@collab/test-support/process'
import { eventually } from '@collab/test-support/server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { documentUri } from '../resources/uris.ts'

const ENTRY = join(APP_DIR, 'src/mcp-stdio.ts')

describe('MCP over stdio (bun run mcp:stdio)', () => {
  let db: TestDatabase
  let env: Record<string, string>
  let token: string

  beforeAll(async () => {
    db = await createTestDatabase()
    env = {
      ...(process.env as Record<string, string>),
      DATA_DIR: db.dataDir,
      ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {}),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
    }
    // Alice and her token, as `user add` and `token issue` make them, in one opening of the database
    // (two CLI processes opened it anew each).
    token = await withServices(db, async (services) => {
      const alice = await services.users.add('alice')
      if (alice.kind === 'error') throw new Error(alice.message)
      const issued = await services.tokens.issue(alice.value.id, { scopes: ['read', 'write'] })
      if (issued.kind === 'error') throw new Error(issued.message)
      return issued.value.token
    })
  }, 60_000)
  afterAll(() => db?.cleanup())

  async function runEntry(extra: Record<string, string>) {
    const proc = Bun.spawn(['bun', ENTRY], {
      cwd: REPO_DIR,
      env: { ...env, ...extra },
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    proc.stdin.end()
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    return { stdout, stderr, exitCode }
  }

  test('without MCP_TOKEN, or with a bad one, it stops with a message naming MCP_TOKEN', async () => {
    const missing = await runEntry({ MCP_TOKEN: '' })
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toStartWith('MCP_TOKEN: required')
    expect(missing.stdout).toBe('')
    const bad = await runEntry({ MCP_TOKEN: 'ctk_not_a_token' })
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('MCP_TOKEN: not a valid API token')
    expect(bad.stdout).toBe('')
  }, 60_000)

  test('a Client lists and calls tools as the token user; the port still serves; stdout is only MCP', async () => {
    const transport = new StdioClientTransport({
      command: 'bun',
      args: [ENTRY],
      cwd: REPO_DIR,
      env: { ...env, MCP_TOKEN: token },
      stderr: 'pipe',
    })
    let stderr = ''
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const errors: Error[] = []
    const client = new Client({ name: 'stdio-test', version: '1.0.0' })
    client.onerror = (error) => errors.push(error)
    await client.connect(transport)
    try {
      const { tools } = await client.listTools()
      expect(tools.map((t) => t.name)).toContain('find_documents')
      expect(tools.map((t) => t.name)).toContain('edit_blocks')

      const created = await call(client, 'create_document', { title: 'Über stdio' })
      expect(created.isError).toBe(false)
      const found = await call(client, 'find_documents', {})
      expect(found.isError).toBe(false)
      expect(found.text).toContain('Über stdio')
      expect(found.text).toContain('yours')

      // The whole server runs in-process: its port answers (editors and HTTP MCP still work).
      const url = /"url":"(http:\/\/[^"]+)"/.exec(stderr)?.[1]
      expect(url).toBeDefined()
      const health = await fetch(`${url}/health`)
      expect(health.status).toBe(200)

      // The session subscribes to its document; a change stored through the port's HTTP MCP is told.
      expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true)
      // A session's tools and prompts never change, and no list_changed notice is sent: none is promised.
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false })
      expect(client.getServerCapabilities()?.prompts).toEqual({ listChanged: false })
      const slug = /slug: (\S+)/.exec(created.text)![1]!
      const updates: string[] = []
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updates.push(n.params.uri)
      })
      await client.subscribeResource({ uri: documentUri(slug) })
      const http = await connectClient(`${url}/mcp`, token)
      try {
        expect((await call(http, 'append_to_document', { slug, markdown: 'from HTTP' })).isError).toBe(false)
      } finally {
        await http.close()
      }
      await eventually(() => expect(updates).toContain(documentUri(slug)))
      expect(errors).toEqual([]) // no non-JSON line ever reached stdout
    } finally {
      await client.close()
    }
    // Closing stdin ends the session: the process stores what is pending and exits.
    const pid = transport.pid ?? 0
    let alive = pid > 0
    for (let i = 0; alive && i < 200; i++) {
      try {
        process.kill(pid, 0)
        await Bun.sleep(50)
      } catch {
        alive = false
      }
    }
    expect(alive).toBe(false)
    expect(stderr).toContain('MCP over stdio ready')
  }, 60_000)
})
