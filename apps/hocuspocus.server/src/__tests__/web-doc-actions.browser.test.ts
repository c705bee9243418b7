/**
 * A document's own controls on the web page, in Debian's Chromium (issue 28). Before: no way to rename,
 * delete or duplicate a document from the page, and a search showed no snippet. Now Rename sets the first
 * heading (the title) through a labelled dialog; the owner deletes a document after a dialog that names it
 * (usable from the keyboard, passing axe-core), a member sees no Delete; anyone who may read it gets a
 * copy of their own holding the same text; found documents show the text around the match, as text.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type Browser, CHROMIUM, type Page } from '@collab/test-support/chromium'
import { insertSearchableDocuments } from '@collab/test-support/documents'
import { eventually } from '@collab/test-support/server'
import { MAX_RANKED_DOCUMENTS } from '../limits.ts'
import type { RunningServer } from '../server.ts'
import {
  connected,
  editorText,
  openedBy,
  person,
  seriousViolations,
  signedIn,
  useServerAndBrowser,
} from './web-support.ts'

/** Clicks (with the mouse) the header's button whose text is exactly `text`. */
async function clickHeader(page: Page, text: string): Promise<void> {
  const buttons = await page.$$('.doc-actions button')
  for (const button of buttons)
    if ((await button.evaluate((b) => b.textContent)) === text) return button.click()
  throw new Error(`no header button "${text}"`)
}
const headerButtons = (page: Page) =>
  page.$$eval('.doc-actions button', (buttons) => buttons.map((b) => b.textContent ?? ''))

describe.skipIf(!CHROMIUM)('delete and duplicate a document', () => {
  let server: RunningServer
  let browser: Browser
  let owner: Awaited<ReturnType<typeof person>>
  let member: Awaited<ReturnType<typeof person>>
  useServerAndBrowser((given) => {
    ;({ server, browser } = given)
  })
  beforeAll(async () => {
    owner = await person(server, 'olga')
    member = await person(server, 'mika')
  }, 60_000)

  async function documentOf(title: string, markdown: string): Promise<string> {
    const made = await server.services.documents.create(owner.user.id, { title, markdown })
    if (made.kind === 'error') throw new Error(made.message)
    const shared = await server.services.documents.share(made.value.slug, member.user.id, 'editor')
    if (shared.kind === 'error') throw new Error(shared.message)
    return made.value.slug
  }

  test('the owner deletes after a dialog naming the document; its URL then says it is gone', async () => {
    const slug = await documentOf('Quarterly plan', '## Goals\n\nShip the thing.')
    const other = await openedBy(browser, server, 'mika', slug)
    expect(await headerButtons(other)).not.toContain('Delete') // an editor, not the owner
    const refused = await fetch(`${server.url}/api/documents/${slug}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${member.token}` },
    })
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { message: string }).message).toContain('only its owner may delete it')

    const page = await openedBy(browser, server, 'olga', slug)
    await connected(page) // the header settles (it reflows while connecting)
    expect(await headerButtons(page)).toContain('Delete')
    await clickHeader(page, 'Delete')
    const dialog = await page.waitForSelector('dialog[open]')
    expect(await dialog!.evaluate((d) => d.querySelector('h2')?.textContent)).toBe('Delete "Quarterly plan"?')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel')
    expect(await seriousViolations(page)).toEqual([])

    // Escape leaves it: the dialog closes and the document is still there.
    await page.keyboard.press('Escape')
    await page.waitForSelector('dialog', { hidden: true })
    expect((await server.services.documents.bySlugForAdmin(slug)).kind).toBe('ok')

    // From the keyboard: open again, Tab from Cancel to Delete, Enter.
    await clickHeader(page, 'Delete')
    await page.waitForSelector('dialog[open]')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Delete')
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')])
    expect(new URL(page.url()).pathname).toBe('/')
    await page.waitForFunction(() => {
      const status = document.querySelector('main > .status')?.textContent ?? ''
      return status !== '' && status !== 'Loading…'
    })
    const listed = await page.$eval('main', (m) => m.textContent ?? '')
    expect(listed).toContain('Deleted "Quarterly plan".')
    expect(
      await page.$$eval('.docs-table tbody a', (links) => links.map((a) => a.textContent)),
    ).not.toContain('Quarterly plan')

    await page.goto(`${server.url}/d/${slug}`)
    const gone = await page.waitForSelector('[role=alert]')
    expect(await gone!.evaluate((e) => e.textContent)).toContain(`No document "${slug}"`)
    await page.browserContext().close()
    await other.browserContext().close()
  }, 60_000)

  test('duplicate opens a copy of the same text, owned by the person, its title marked as a copy', async () => {
    const slug = await documentOf('Field notes', '## Monday\n\nRain all day.\n\n- boots\n- coffee')
    const page = await openedBy(browser, server, 'mika', slug) // a member: the copy is theirs
    const original = await editorText(page)
    await Promise.all([page.waitForNavigation(), clickHeader(page, 'Duplicate')])
    const copySlug = decodeURIComponent(new URL(page.url()).pathname.replace(/^\/d\//, ''))
    expect(copySlug).not.toBe(slug)
    await page.waitForSelector('.ProseMirror')
    expect(await page.$eval('.doc-title', (e) => e.textContent)).toBe('Field notes (copy)')
    expect((await editorText(page)).replace('Field notes (copy)', '')).toBe(
      original.replace('Field notes', ''),
    )
    const copy = await server.services.documents.bySlugForAdmin(copySlug)
    if (copy.kind === 'error') throw new Error(copy.message)
    expect(copy.value.ownerId).toBe(member.user.id)
    expect(await headerButtons(page)).toContain('Delete') // theirs now
    await page.browserContext().close()
  }, 60_000)
  test('a search shows under each found document the text around the match, as text', async () => {
    await documentOf('Recipes', '## Bread\n\nKnead the <b>sourdough</b> gently for ten minutes.')
    const page = await signedIn(browser, server, 'olga')
    await page.goto(`${server.url}/?q=sourdough`)
    const snippet = await page.waitForSelector('.docs-table .snippet')
    expect(await snippet!.evaluate((e) => e.textContent)).toContain('Knead the <b>sourdough</b> gently')
    expect(await page.$$('.docs-table .snippet b')).toHaveLength(0) // never HTML
    expect(await seriousViolations(page)).toEqual([])
    await page.browserContext().close()
  }, 60_000)
  test('a search whose words are in more documents than one search ranks says which it searched', async () => {
    const count = MAX_RANKED_DOCUMENTS + 50
    await insertSearchableDocuments(server, {
      ownerId: member.user.id,
      prefix: 'heap',
      count,
      title: `'Heap note ' || g`,
      text: `'the everywhereword ' || md5(g::text)`,
    })
    const page = await signedIn(browser, server, 'mika')
    await page.goto(`${server.url}/?q=everywhereword`)
    const note = await page.waitForSelector('.narrow-note:not([hidden])')
    expect(await note!.evaluate((e) => e.textContent)).toContain(
      `only the ${MAX_RANKED_DOCUMENTS.toLocaleString('en-US')} most recently changed were searched`,
    )
    // Above the list, where the first rows are read: in view without scrolling.
    const box = await note!.boundingBox()
    expect(box!.y + box!.height).toBeLessThan(page.viewport()!.height)
    // The newest document is among those shown; the oldest is not (it was not searched).
    const slugs = await page.$$eval('.docs-table tbody a', (links) =>
      links.map((a) => a.getAttribute('href')),
    )
    expect(slugs).toContain(`/d/heap-${count}`)
    expect(slugs).not.toContain('/d/heap-1')
    if (process.env.WEB_SCREENSHOTS) {
      await page.screenshot({ path: join(process.env.WEB_SCREENSHOTS, 'web-broad-search.png') })
    }
    expect(await seriousViolations(page)).toEqual([])
    await page.browserContext().close()
  }, 60_000)
  test('Rename sets the first heading; the list then shows the new name', async () => {
    const slug = await documentOf('Draft name', '## Body\n\nText.')
    const page = await openedBy(browser, server, 'olga', slug)
    await connected(page)
    await clickHeader(page, 'Rename')
    await page.waitForSelector('dialog[open]')
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).value)).toBe('Draft name')
    expect(await seriousViolations(page)).toEqual([])
    await page.keyboard.type('Final name') // the field starts selected: typing replaces the title
    await page.keyboard.press('Enter')
    await page.waitForSelector('dialog', { hidden: true })
    expect(await page.$eval('.ProseMirror h1', (e) => e.textContent)).toBe('Final name')
    expect(await page.$eval('.doc-title', (e) => e.textContent)).toBe('Final name')
    await eventually(async () => {
      const row = await server.services.documents.bySlugForAdmin(slug)
      expect(row.kind === 'ok' && row.value.title).toBe('Final name')
    })
    await page.goto(server.url)
    await page.waitForSelector('.docs-table tbody a')
    const titles = await page.$$eval('.docs-table tbody a', (links) => links.map((a) => a.textContent))
    expect(titles).toContain('Final name')
    expect(titles).not.toContain('Draft name')
    await page.browserContext().close()
  }, 60_000)
})
