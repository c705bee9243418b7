/**
 * The flow of `mcp-remote` (0.15.1) started with no `--header`, as a person starts it from a desktop app:
 * it gets the 401, discovers this server's authorization server, registers, prints the authorization URL,
 * and waits on its loopback callback; the person's browser step (given) signs in and approves read only;
 * then mcp-remote bridges stdio to /mcp with the token it got: tools/list shows the read tools only and
 * find_documents answers. Run with the step over HTTP (auth-mcp-remote.test.ts) and in headless Chromium
 * (auth-mcp-remote.browser.test.ts).
 */
import { expect } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@collab/test-support/browser'
import { mcpUrlOf } from '@collab/test-support/mcp'
import { eventually } from '@collab/test-support/server'
import { TOOLS } from '../modules/mcp/tools/index.ts'
import type { RunningServer } from '../server.ts'

const PASSWORD = 'correct horse battery staple'
const MCP_REMOTE = join(import.meta.dir, '../../node_modules/mcp-remote/dist/proxy.js')

/** The person's part: open the authorization URL, sign in, approve read only, land on the callback. */
export type BrowserStep = (
  authorizationUrl: string,
  person: { handle: string; password: string },
) => Promise<URL>

export async function mcpRemoteFlow(server: RunningServer, handle: string, step: BrowserStep) {
  const user = await server.services.users.add(handle)
  if (user.kind === 'error') throw new Error(user.message)
  expect((await server.auth.accounts.setPassword(user.value.id, PASSWORD)).kind).toBe('ok')
  const created = await server.services.documents.create(user.value.id, {
    title: `Remote plan of ${handle}`,
  })
  if (created.kind === 'error') throw new Error(created.message)

  const configDir = mkdtempSync(join(tmpdir(), 'mcp-remote-'))
  const remote = Bun.spawn([process.execPath, MCP_REMOTE, mcpUrlOf(server), String(freePort())], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    // BROWSER=true: its opener "opens" the URL with `true`, so no stray browser starts; the URL is
    // printed either way, and the test's browser step opens it.
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'true' },
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
    const back = await step(url, { handle, password: PASSWORD })
    // The browser arrived at mcp-remote's own loopback callback with the code.
    expect(back.hostname).toBe('localhost')
    expect(back.searchParams.get('code')).toBeString()

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
    expect(found.content.map((c) => c.text).join('\n')).toContain(`Remote plan of ${handle}`)
  } finally {
    remote.kill()
    await remote.exited
    rmSync(configDir, { recursive: true, force: true })
  }
}
