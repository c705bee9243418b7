/**
 * `mcp-remote` without a header signs in through OAuth (auth-mcp-remote-flow.ts), the person's browser
 * step typed and clicked in headless Chromium (Debian's `chromium`, driven by puppeteer-core; skipped
 * when it is not installed). The same flow over HTTP is auth-mcp-remote.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { CHROMIUM, launchChromium } from '@collab/test-support/chromium'
import { DATABASE_KIND } from '@collab/test-support/database'
import { useTestServer } from '@collab/test-support/server'
import type { RunningServer } from '../server.ts'
import { type BrowserStep, mcpRemoteFlow } from './auth-mcp-remote-flow.ts'

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

describe.skipIf(!CHROMIUM)(
  `mcp-remote without a header signs in through OAuth, in Chromium (${DATABASE_KIND})`,
  () => {
    let server: RunningServer
    useTestServer((s) => {
      server = s
    })

    test('browser step in headless Chromium: the same flow, typed and clicked in a real browser', async () => {
      await mcpRemoteFlow(server, 'tomas', chromium)
    })
  },
)
