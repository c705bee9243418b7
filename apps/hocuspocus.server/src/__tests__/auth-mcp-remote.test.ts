/**
 * `mcp-remote` (0.15.1) with no `--header`, as a person starts it from a desktop app: it gets the 401,
 * discovers this server's authorization server, registers, prints the authorization URL (no browser
 * here), and waits on its loopback callback. The person's browser step is driven over HTTP through the
 * real sign-in and consent forms (helpers/browser.ts), the browser then lands on mcp-remote's callback,
 * and mcp-remote bridges stdio to /mcp with the token it got: tools/list and find_documents answer.
 */
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TOOLS } from '../modules/mcp/tools/index.ts'
import type { RunningServer } from '../server.ts'
import { Browser, freePort, signInAndConsent } from './helpers/browser.ts'
import { DATABASE_KIND } from './helpers/database.ts'
import { mcpUrlOf } from './helpers/mcp.ts'
import { eventually, useTestServer } from './helpers/server.ts'

const PASSWORD = 'correct horse battery staple'
const MCP_REMOTE = join(import.meta.dir, '../../node_modules/mcp-remote/dist/proxy.js')

describe(`mcp-remote without a header signs in through OAuth (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('mcp-remote completes sign-in and a read-only approval, then lists the read tools and calls find_documents', async () => {
    const user = await server.services.users.add('rosa')
    if (user.kind === 'error') throw new Error(user.message)
    expect((await server.auth.accounts.setPassword(user.value.id, PASSWORD)).kind).toBe('ok')
    const created = await server.services.documents.create(user.value.id, { title: 'Remote plan' })
    if (created.kind === 'error') throw new Error(created.message)

    const configDir = mkdtempSync(join(tmpdir(), 'mcp-remote-'))
    const remote = Bun.spawn([process.execPath, MCP_REMOTE, mcpUrlOf(server), String(freePort())], {
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir },
    })
    let stderr = ''
    let stdout = ''
    const drain = async (stream: ReadableStream<Uint8Array>, onText: (t: string) => void) => {
      const reader = stream.getReader()
      const decoder = new TextDecoder()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        onText(decoder.decode(value, { stream: true }))
      }
    }
    void drain(remote.stderr, (t) => {
      stderr += t
    })
    void drain(remote.stdout, (t) => {
      stdout += t
    })
    try {
      const url = await eventually(
        () => {
          const match = /Please authorize this client by visiting:\s*(\S+)/.exec(stderr)
          if (!match) throw new Error('no authorization URL yet')
          return match[1]!
        },
        30_000,
        'mcp-remote to print its authorization URL',
      )
      expect(url.startsWith(`${server.url}/auth/oauth2/authorize?`)).toBe(true)
      const back = await signInAndConsent(
        new Browser(server.url),
        url,
        { handle: 'rosa', password: PASSWORD },
        { access: 'read' },
      )
      // The browser arrives at mcp-remote's own loopback callback with the code.
      expect(back.hostname).toBe('localhost')
      expect(back.searchParams.get('code')).toBeString()
      expect((await fetch(back)).status).toBe(200)

      const send = (message: unknown) => {
        remote.stdin.write(`${JSON.stringify(message)}\n`)
        remote.stdin.flush()
      }
      const answer = (id: number) =>
        eventually(
          () => {
            for (const line of stdout.split('\n')) {
              if (!line.trim()) continue
              const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown }
              if (message.id === id) return message
            }
            throw new Error(`no answer ${id} yet`)
          },
          30_000,
          `mcp-remote's answer ${id}`,
        )
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'desktop-app', version: '1.0.0' },
        },
      })
      expect((await answer(1)).result).toBeDefined()
      send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
      const listed = (await answer(2)).result as { tools: Array<{ name: string }> }
      expect(listed.tools.map((t) => t.name).sort()).toEqual(
        TOOLS.filter((t) => t.kind === 'read')
          .map((t) => t.name)
          .sort(),
      )
      send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'find_documents', arguments: {} } })
      const found = (await answer(3)).result as { content: Array<{ text: string }>; isError?: boolean }
      expect(found.isError).toBeFalsy()
      expect(found.content.map((c) => c.text).join('\n')).toContain('Remote plan')
    } finally {
      remote.kill()
      await remote.exited
      rmSync(configDir, { recursive: true, force: true })
    }
  })
})
