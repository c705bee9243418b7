/**
 * Opening a document progressively (issue 28): `/d/<slug>` is served with the document's first screen
 * (http/first-screen.ts), readable before the page's script has even run, read-only, then replaced by the
 * live editor once it holds the synced document. Before, the page said "Loading…" until the editor was
 * built: 5-7 s for a 1 MiB document on a loaded machine (the bench's "first screen readable" row).
 *
 * The page's script is held back (request interception) while the served screen is read, so "before the
 * editor" is a state the test makes, not a race it hopes to win: meanwhile the text changes through another
 * editor, and what the person types on the stale screen must go nowhere.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { type Browser, CHROMIUM, type Page } from '@collab/test-support/chromium'
import { createLargeDocument } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import type * as Y from 'yjs'
import { MAX_DOCUMENT_CONNECTIONS_PER_USER } from '../collab/limits.ts'
import { EXPORT_INLINE_BYTES } from '../documents/export-markdown.ts'
import { FIRST_SCREEN_BLOCKS } from '../limits.ts'
import type { RunningServer } from '../server.ts'
import { person, seriousViolations, signedIn, useServerAndBrowser } from './web-support.ts'

const FIRST = 'The first paragraph, readable at once.'
/** Enough paragraphs that the first screen leaves some out. */
const MARKDOWN = `## Day one\n\n${FIRST}\n\n${Array.from(
  { length: FIRST_SCREEN_BLOCKS + 20 },
  (_, i) => `Paragraph ${i + 1} of the field notes.`,
).join('\n\n')}\n`

/**
 * Opens `url` with the page's script held back: resolves once the HTML is in the page; `release()` lets
 * the script load (and the page go on as usual).
 */
async function openHoldingScript(page: Page, url: string) {
  // Without the cache: the script the list page loaded at sign-in would run from it, never asked for.
  await page.setCacheEnabled(false)
  await page.setRequestInterception(true)
  const held: Array<{ continue(): Promise<void> }> = []
  let scriptAsked!: () => void
  const asked = new Promise<void>((resolve) => {
    scriptAsked = resolve
  })
  page.on('request', (request) => {
    if (request.isInterceptResolutionHandled()) return
    if (/\/assets\/[^/]+\.js$/.test(request.url())) {
      held.push(request)
      scriptAsked()
    } else void request.continue()
  })
  const navigated = page.goto(url, { waitUntil: 'load' })
  await asked
  return {
    async release() {
      for (const request of held.splice(0)) await request.continue()
      await navigated
    },
  }
}

describe.skipIf(!CHROMIUM)('opening a document', () => {
  let server: RunningServer
  let browser: Browser
  let slug: string
  let room: string
  let owner: Awaited<ReturnType<typeof person>>
  const providers: TestProvider[] = []
  useServerAndBrowser((given) => {
    ;({ server, browser } = given)
  })
  beforeAll(async () => {
    owner = await person(server, 'flora')
    const viv = await person(server, 'viv')
    await person(server, 'otto')
    const created = await server.services.documents.create(owner.user.id, {
      title: 'Field notes',
      markdown: MARKDOWN,
    })
    if (created.kind === 'error') throw new Error(created.message)
    slug = created.value.slug
    room = created.value.room
    expect((await server.services.documents.share(slug, viv.user.id, 'viewer')).kind).toBe('ok')
  }, 60_000)
  afterAll(() => {
    for (const p of providers) p.destroy()
  })

  test('the first screen is readable before the script runs, takes no typing, and the live editor replaces it', async () => {
    const page = await signedIn(browser, server, 'flora')
    const opening = await openHoldingScript(page, `${server.url}/d/${slug}`)
    // Before: "Loading…" and nothing of the document until the editor was built.
    const heading = await page.waitForSelector('#first-screen h2', { visible: true })
    expect(await heading?.evaluate((h) => h.textContent)).toBe('Day one')
    const screen = await page.$eval('#first-screen', (e) => ({
      text: e.textContent ?? '',
      paragraphs: e.querySelectorAll('.prose > p').length,
      editable: document.querySelectorAll('[contenteditable]').length,
      title: document.title,
    }))
    expect(screen.text).toContain(FIRST)
    // Bounded, and it says the rest is coming: the title, the heading and the paragraphs up to the limit.
    expect(screen.paragraphs).toBe(FIRST_SCREEN_BLOCKS - 2)
    expect(screen.text).toContain('Opening the rest of the document')
    expect(screen.text).not.toContain(`Paragraph ${FIRST_SCREEN_BLOCKS + 20} `)
    expect(screen.editable).toBe(0)
    expect(screen.title).toBe('Field notes')
    expect(await seriousViolations(page)).toEqual([])

    // Someone else changes the first paragraph while this page opens: the screen is now stale.
    const other = connectProvider(server.url, room, owner.token)
    providers.push(other)
    await other.ready
    const first = (other.doc.getXmlFragment(FRAGMENT_NAME).get(2) as Y.XmlElement).get(0) as Y.XmlText
    first.insert(0, 'Changed meanwhile. ')
    // Typing on the stale screen goes nowhere: there is nothing to type into.
    await page.click('#first-screen .prose > p')
    await page.keyboard.type('stale typing')

    await opening.release()
    const editor = await page.waitForSelector('.ProseMirror[contenteditable="true"]', { visible: true })
    expect(await page.$('#first-screen')).toBeNull()
    expect(await editor?.evaluate((e) => e.textContent)).toContain(`Changed meanwhile. ${FIRST}`)
    const text = () => readPlainText(other.doc.getXmlFragment(FRAGMENT_NAME))
    expect(text()).not.toContain('stale typing')
    expect(await page.evaluate(() => document.body.textContent)).not.toContain('stale typing')

    // The editor that replaced it is live: what the person types reaches the other editor.
    await page.click('.ProseMirror > p')
    await page.keyboard.press('End')
    await page.keyboard.type(' Typed live.')
    await eventually(() => expect(text()).toContain(' Typed live.'))
    await page.browserContext().close()
  })

  test('a reader gets the first screen and then a read-only editor; anyone else gets none of the text', async () => {
    const viewer = await signedIn(browser, server, 'viv')
    const opening = await openHoldingScript(viewer, `${server.url}/d/${slug}`)
    await viewer.waitForSelector('#first-screen h2', { visible: true })
    await opening.release()
    await viewer.waitForSelector('.ProseMirror[contenteditable="false"]', { visible: true })
    expect(await viewer.$('#first-screen')).toBeNull()
    await viewer.browserContext().close()

    // Not shared with otto: the page he is served holds nothing of the document.
    const stranger = await signedIn(browser, server, 'otto')
    const refused = await openHoldingScript(stranger, `${server.url}/d/${slug}`)
    const html = await stranger.content()
    expect(html).not.toContain('Day one')
    expect(html).not.toContain(FIRST)
    expect(await stranger.$('#first-screen')).toBeNull()
    await refused.release()
    await stranger.waitForSelector('.error')
    expect(await stranger.$eval('.error', (e) => e.textContent)).toContain('No document')
    await stranger.browserContext().close()
  })
  test(`a person with the document open ${MAX_DOCUMENT_CONNECTIONS_PER_USER} times already is told to close some tabs, not that it is gone`, async () => {
    // The cap is per user, whatever signs the connection in: her other tabs here are her token's editors.
    const tabs = Array.from({ length: MAX_DOCUMENT_CONNECTIONS_PER_USER }, () =>
      connectProvider(server.url, room, owner.token),
    )
    await Promise.all(tabs.map((t) => t.ready))
    const page = await signedIn(browser, server, 'flora')
    await page.goto(`${server.url}/d/${slug}`)
    // The banner may be in the page before the socket's answer fills it.
    await eventually(
      async () =>
        expect(await page.$eval('.banner', (b) => b.textContent)).toContain('open in too many of your tabs'),
      10_000,
      'the too-many-tabs banner',
    )
    expect(await page.$eval('.status', (s) => s.textContent)).toBe('Too many tabs')
    await page.browserContext().close()
    for (const tab of tabs) tab.destroy()
  })

  test("a document stored larger than EXPORT_INLINE_BYTES that no one has open gets its first screen, made on the documents' worker", async () => {
    // Before: no first screen for it at all (decoding it on the event loop would hold every editor).
    const big = await createLargeDocument(server, owner.user.id, 'Big notes', [
      `## Big day\n\n${FIRST}\n\n`,
      ...Array.from({ length: 8 }, (_, chunk) =>
        Array.from(
          { length: 500 },
          (_, i) =>
            `Paragraph ${chunk * 500 + i + 1} of the long field notes, long enough to fill the document.`,
        ).join('\n\n'),
      ),
    ])
    const stored = await server.services.documents.loadStored(big.room)
    expect((stored?.snapshot?.byteLength ?? 0) + (stored?.updateBytes ?? 0)).toBeGreaterThan(
      EXPORT_INLINE_BYTES,
    )
    expect(server.collab.hocuspocus.documents.get(big.room)).toBeUndefined()

    const page = await signedIn(browser, server, 'flora')
    const opening = await openHoldingScript(page, `${server.url}/d/${big.slug}`)
    const heading = await page.waitForSelector('#first-screen h2', { visible: true })
    expect(await heading?.evaluate((h) => h.textContent)).toBe('Big day')
    const screen = await page.$eval('#first-screen', (e) => ({
      text: e.textContent ?? '',
      paragraphs: e.querySelectorAll('.prose > p').length,
    }))
    expect(screen.text).toContain(FIRST)
    expect(screen.paragraphs).toBe(FIRST_SCREEN_BLOCKS - 2)
    expect(screen.text).toContain('Opening the rest of the document')
    await opening.release()
    const editor = await page.waitForSelector('.ProseMirror[contenteditable="true"]', { visible: true })
    expect(await page.$('#first-screen')).toBeNull()
    expect(await editor?.evaluate((e) => e.textContent)).toContain('Paragraph 4000 of the long field notes')
    await page.browserContext().close()
  })
})
