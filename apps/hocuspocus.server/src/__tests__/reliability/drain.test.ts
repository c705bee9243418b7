/**
 * SIGTERM drains before it stops (issue 29): the real server process, started with a long DRAIN_GRACE_MS,
 * is signalled while an editor is connected. While it drains it is live but not ready, refuses new editor
 * sockets with 503 (what a balancer passes to another instance), and still serves the open editor and MCP;
 * a second SIGTERM ends the drain, and the stop stores what the editor typed and exits 0.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND, useTestDatabase } from '@collab/test-support/database'
import { appendParagraph } from '@collab/test-support/documents'
import { callText, connectClient } from '@collab/test-support/mcp'
import { spawnServer } from '@collab/test-support/process'
import { connectProvider, editorSocketUrl } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import { firstRunToken, plainText, readStored } from './faults-support.ts'

describe(`drain on SIGTERM (${DATABASE_KIND})`, () => {
  const database = useTestDatabase()

  test('draining: live, not ready, new sockets refused 503, open ones served; then everything stored', async () => {
    const db = database()
    const server = await spawnServer({
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? '',
      LOG_LEVEL: 'warn',
      // Longer than the test: only the second signal ends the drain.
      DRAIN_GRACE_MS: '600000',
    })
    try {
      const token = firstRunToken(db.dataDir)
      const mcp = await connectClient(`${server.url}/mcp`, token)
      const created = await callText(mcp, 'create_document', { title: 'Drained' })
      const slug = /slug: (\S+)/.exec(created.text)?.[1]
      const { room } = (await (
        await fetch(`${server.url}/api/documents/${slug}`, { headers: { Authorization: `Bearer ${token}` } })
      ).json()) as { room: string }
      expect((await fetch(`${server.url}/health/ready`)).status).toBe(200)
      expect((await fetch(`${server.url}/health/live`)).status).toBe(200)

      const editor = connectProvider(server.url, room, token)
      await editor.ready
      server.proc.kill('SIGTERM')
      await eventually(async () => {
        const ready = await fetch(`${server.url}/health/ready`)
        expect(ready.status).toBe(503)
        expect(await ready.json()).toEqual({ status: 'draining' })
      })
      expect((await fetch(`${server.url}/health`)).status).toBe(503)
      expect(await (await fetch(`${server.url}/health/live`)).json()).toEqual({ status: 'ok' })

      // A new editor socket is refused before the upgrade, with a status a balancer retries elsewhere.
      const refused = await fetch(editorSocketUrl(server.url).replace(/^ws/, 'http'), {
        headers: {
          Upgrade: 'websocket',
          Connection: 'Upgrade',
          'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'Sec-WebSocket-Version': '13',
        },
      })
      expect(refused.status).toBe(503)
      expect(await refused.text()).toContain('shutting down')

      // What is open is still served: the editor's typing is acknowledged, an agent's write answered.
      appendParagraph(editor.doc, 'typed while draining')
      await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0))
      const wrote = await callText(mcp, 'append_to_document', { slug, markdown: 'written while draining' })
      expect(wrote.isError).toBe(false)
      await mcp.close()

      server.proc.kill('SIGTERM') // the second signal: stop now
      expect(await server.proc.exited).toBe(0)
      editor.destroy()
      const stored = (await readStored(db, [room])).get(room)!
      expect(plainText(stored.doc)).toContain('typed while draining')
      expect(plainText(stored.doc)).toContain('written while draining')
    } finally {
      if (server.proc.exitCode === null) server.proc.kill('SIGKILL')
    }
  }, 90_000)
})
