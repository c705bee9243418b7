/**
 * `mcp-remote` without a header signs in through OAuth (auth-mcp-remote-flow.ts), the person's browser
 * step done over HTTP through the real sign-in and consent forms (test-support's browser.ts). The same
 * flow typed and clicked in headless Chromium is auth-mcp-remote.browser.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { Browser, signInAndConsent } from '@collab/test-support/browser'
import { DATABASE_KIND } from '@collab/test-support/database'
import { useTestServer } from '@collab/test-support/server'
import type { RunningServer } from '../server.ts'
import { type BrowserStep, mcpRemoteFlow } from './auth-mcp-remote-flow.ts'

/** Over HTTP, form by form, then the callback request the browser would make. */
const formsOverHttp =
  (server: () => RunningServer): BrowserStep =>
  async (url, person) => {
    const back = await signInAndConsent(new Browser(server().url), url, person, { access: 'read' })
    expect((await fetch(back)).status).toBe(200)
    return back
  }

describe(`mcp-remote without a header signs in through OAuth (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('browser step over HTTP: sign-in and a read-only approval, then the read tools and find_documents', async () => {
    await mcpRemoteFlow(
      server,
      'rosa',
      formsOverHttp(() => server),
    )
  })
})
