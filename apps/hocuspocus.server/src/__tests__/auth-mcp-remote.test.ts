/**
 * `mcp-remote` (0.15.1) with no `--header`, as a person starts it from a desktop app: it gets the 401,
 * discovers this server's authorization server, registers, prints the authorization URL, and waits on
 * its loopback callback. The person's browser step is done twice: over HTTP through the real sign-in and
 * consent forms (helpers/browser.ts), and in headless Chromium (Debian's `chromium`, driven by
 * puppeteer-core; skipped when it is not installed). Then mcp-remote bridges stdio to /mcp with the token
 * it got: tools/list shows the read tools only and find_documents answers.
 */
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Browser, freePort, signInAndConsent } from '@collab/test-support/browser'
import { CHROMIUM, launchChromium } from '@collab/test-support/chromium'
import { DATABASE_KIND } from '@collab/test-support/database'
import { mcpUrlOf } from '@collab/test-support/mcp'
import { eventually, useTestServer } from '@collab/test-support/server'
import { TOOLS } from '../modules/mcp/tools/index.ts'
import type { RunningServer } from '../server.ts'

const PASSWORD = 'correct horse battery staple'
const MCP_REMOTE = join(import.meta.dir, '../../node_modules/mcp-remote/dist/proxy.js')

/** The person's part: open the authorization URL, sign in, approve read only, land on the callback. */
type BrowserStep = (authorizationUrl: string, person: { handle: string; password: string }) => Promise<URL>

/** Over HTTP, form by form, then the callback request the browser would make. */
const formsOverHttp =
  (server: () => RunningServer): BrowserStep =>
  async (url, person) => {
    const back = await signInAndConsent(new Browser(server().url), url, person, { access: 'read' })
    expect((await fetch(back)).status).toBe(200)
    return back
  }

/** In headless Chromium: typing into the fields and pressing the buttons. */
const chromium: BrowserStep = async (url, person) => {
  const browser = await launchChromium()
  try {
    const page = await browser.newPage()
    await page.goto(url)
    expect(new URL(page.url()).pathname).toBe('/sign-in')
    await page.type('#handle', person.handle)
    await page.type('#password', person.password)
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    expect(new URL(page.url()).pathname).toBe('/consent')
    expect(await page.content()).toContain('wants to use your documents')
    await page.click('input[name=access][value=read]')
    await Promise.all([page.waitForNavigation(), page.click('button[value=allow]')])
    return new URL(page.url())
  } finally {
    await browser.close()
  }
}

describe(`mcp-remote without a header signs in through OAuth (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  async function mcpRemoteFlow(handle: string, step: BrowserStep) {
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

  test('browser step over HTTP: sign-in and a read-only approval, then the read tools and find_documents', async () => {
    await mcpRemoteFlow(
      'rosa',
      formsOverHttp(() => server),
    )
  })

  test.skipIf(!CHROMIUM)(
    'browser step in headless Chromium: the same flow, typed and clicked in a real browser',
    async () => {
      await mcpRemoteFlow('tomas', chromium)
    },
  )
})
