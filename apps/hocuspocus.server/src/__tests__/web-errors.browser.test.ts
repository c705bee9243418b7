/**
 * What a person meets in the browser when something goes wrong, in Debian's Chromium (issue 28). Before:
 * an OAuth request refused at /auth/oauth2/authorize (an app id whose metadata document cannot be
 * fetched; `localhost` where the server is `127.0.0.1`, invalid_target) showed raw JSON, and
 * /favicon.ico was a 404 on every page, and an import that adapted Markdown said "see the import notes in
 * the docs". Now each is a page saying what happened and what to do, the import lists what it adapted,
 * and the pages pass axe-core without serious or critical violations.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, CHROMIUM, type Page } from '@collab/test-support/chromium'
import { fillToItemLimit } from '@collab/test-support/documents'
import { eventually } from '@collab/test-support/server'
import type { RunningServer } from '../server.ts'
import {
  connected,
  openedBy,
  person,
  seriousViolations,
  signedIn,
  useServerAndBrowser,
} from './web-support.ts'

const CALLBACK = 'http://127.0.0.1:33418/callback'

describe.skipIf(!CHROMIUM)('error pages and the icon', () => {
  let server: RunningServer
  let browser: Browser
  let clientId: string
  let tess: { user: { id: string } }
  useServerAndBrowser((given) => {
    ;({ server, browser } = given)
  })
  beforeAll(async () => {
    tess = await person(server, 'tess')
    // An app registered as MCP apps do (dynamic registration).
    const registered = await fetch(`${server.url}/auth/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Docs App',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    })
    expect(registered.status).toBe(201)
    clientId = ((await registered.json()) as { client_id: string }).client_id
  }, 60_000)

  const authorizeUrl = (client: string, resource: string) =>
    `${server.url}/auth/oauth2/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client,
      redirect_uri: CALLBACK,
      scope: 'read',
      state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      resource,
    })}`

  /** The page a browser shows for `url`: its heading, its text, and whether the text is raw JSON. */
  async function shown(page: Page, url: string) {
    const response = await page.goto(url)
    const text = await page.evaluate(() => document.body.textContent ?? '')
    return {
      status: response?.status(),
      type: response?.headers()['content-type'] ?? '',
      heading: await page.$eval('h1', (h) => h.textContent).catch(() => null),
      text,
      json: /^\s*[{[]/.test(text),
    }
  }

  test('an app asking for localhost where the server is 127.0.0.1: a page naming the address to use', async () => {
    const page = await (await browser.createBrowserContext()).newPage()
    const wrongResource = `${server.url.replace('127.0.0.1', 'localhost')}/mcp`
    const result = await shown(page, authorizeUrl(clientId, wrongResource))
    expect(result.json).toBe(false)
    expect(result.type).toStartWith('text/html')
    expect(result.heading).toBe('The app asked for another address')
    expect(result.text).toContain(`Set the server address in the app to exactly ${server.url}/mcp`)
    expect(result.text).toContain('invalid_target')
    expect(await seriousViolations(page)).toEqual([])
  })

  test('an app id whose metadata document cannot be fetched: a page, not JSON', async () => {
    const page = await (await browser.createBrowserContext()).newPage()
    const result = await shown(
      page,
      authorizeUrl('https://docs-app.invalid/client.json', `${server.url}/mcp`),
    )
    expect(result.json).toBe(false)
    expect(result.heading).toBe('The app is not known here')
    expect(result.text).toContain('What to do:')
    // A program (no text/html) still gets the JSON answer.
    const api = await fetch(authorizeUrl('https://docs-app.invalid/client.json', `${server.url}/mcp`), {
      redirect: 'manual',
    })
    expect(api.headers.get('content-type')).toContain('json')
    await api.body?.cancel()
  })

  test("the library's error page explains the code it is given", async () => {
    const page = await (await browser.createBrowserContext()).newPage()
    const result = await shown(
      page,
      `${server.url}/auth/error?error=invalid_client&error_description=client_id+is+required`,
    )
    expect(result.status).toBe(400)
    expect(result.heading).toBe('The app is not known here')
    expect(result.text).toContain('client_id is required')
  })

  test('/favicon.ico is an icon, and opening the documents page requests nothing that is missing', async () => {
    const icon = await fetch(`${server.url}/favicon.ico`)
    expect(icon.status).toBe(200)
    expect(icon.headers.get('content-type')).toBe('image/svg+xml')
    expect(await icon.text()).toStartWith('<svg')
    const page = await signedIn(browser, server, 'tess')
    const missing: string[] = []
    page.on('response', (response) => {
      if (response.status() === 404) missing.push(response.url())
    })
    await page.reload()
    await page.waitForSelector('.docs-table')
    await Bun.sleep(300)
    expect(missing).toEqual([])
    expect(await seriousViolations(page)).toEqual([])
  })

  test('an import that adapted some Markdown lists what it adapted, not "see the docs"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'web-import-'))
    const file = join(dir, 'notes.md')
    writeFileSync(file, '# Imported notes\n\n<div>raw html</div>\n\nText.\n')
    try {
      const page = await signedIn(browser, server, 'tess')
      await page.waitForSelector('input[type=file]')
      const input = await page.$('input[type=file]')
      await input!.uploadFile(file)
      await Promise.all([
        page.waitForNavigation(),
        page.$$eval('.actions button', (buttons) =>
          buttons.find((b) => b.textContent === 'Import Markdown')!.click(),
        ),
      ])
      await page.waitForSelector('.banner.info li')
      const banner = await page.$eval('.banner', (b) => ({
        text: b.textContent ?? '',
        notes: Array.from(b.querySelectorAll('li')).map((li) => li.textContent),
      }))
      expect(banner.text).not.toContain('see the import notes in the docs')
      expect(banner.notes.join('\n')).toContain('HTML')
      expect(await seriousViolations(page)).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a document at its item limit: typing says the document is full and to duplicate it', async () => {
    const created = await server.services.documents.create(tess.user.id, {
      title: 'Full',
      markdown: 'last words',
    })
    if (created.kind === 'error') throw new Error(created.message)
    const page = await openedBy(browser, server, 'tess', created.value.slug)
    await connected(page)
    const live = server.collab.hocuspocus.documents.get(created.value.room)
    if (!live) throw new Error('not live')
    fillToItemLimit(live)
    await page.waitForFunction(
      () => (document.querySelector('.ProseMirror p')?.textContent?.length ?? 0) > 1_000,
    )
    await page.click('.ProseMirror p')
    await page.keyboard.press('End')
    await page.keyboard.type('!')
    await eventually(
      async () => expect(await page.$eval('.banner', (b) => b.textContent)).toContain('Use Duplicate'),
      30_000,
      'the document-full banner',
    )
    expect(await page.$eval('.ProseMirror', (e) => e.getAttribute('contenteditable'))).toBe('false')
    expect(live.getXmlFragment('default').toString()).not.toContain('!')
    await page.browserContext().close()
  }, 90_000)

  test('the sign-in page has no serious accessibility violation', async () => {
    const page = await (await browser.createBrowserContext()).newPage()
    await page.goto(`${server.url}/sign-in`)
    expect(await seriousViolations(page)).toEqual([])
  })
})
