/**
 * The editor's everyday controls in Debian's Chromium (issue 28). Before: no way to insert a table, a link
 * asked for with the browser's `prompt()`, no list of shortcuts, and an invite's new password led to the
 * sign-in form again. Now the toolbar inserts a table the server's editor boundary accepts (the export
 * then holds it) and edits its rows and columns; a dialog in the page adds, edits and removes a link
 * (http, https and mailto only), also with Ctrl+K; Ctrl+/ lists the shortcuts; and an invite ends signed
 * in, on the document its link names. axe-core finds nothing serious with each dialog open.
 */

import { beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { type Browser, CHROMIUM, type Page } from '@collab/test-support/chromium'
import { editingLog, recordEditing } from '@collab/test-support/editing-log'
import { eventually } from '@collab/test-support/server'
import type { RunningServer } from '../server.ts'
import {
  caretAtEnd as caretAtEndOf,
  caretSettled,
  connected,
  openedBy,
  PASSWORD,
  person,
  seriousViolations,
  useServerAndBrowser,
} from './web-support.ts'

const status = (page: Page) => page.$eval('[data-testid=status]', (e) => e.textContent)

/** Puts the caret at the end of the editor element `selector` whose text starts with `prefix`. */
const caretAtEnd = (page: Page, selector: string, prefix: string) =>
  caretAtEndOf(page, selector, { startsWith: prefix })

/** Puts the caret at the end of the table cell at `row`, `column` (counted from 0; one table, one body). */
function caretInCell(page: Page, row: number, column: number): Promise<void> {
  return caretAtEnd(page, `.ProseMirror tr:nth-of-type(${row + 1}) > :nth-child(${column + 1}) p`, '')
}

/** Presses the toolbar button whose accessible name starts with `name`, as a mouse does. */
async function press(page: Page, name: string): Promise<void> {
  const button = await page.waitForSelector(`.toolbar button[aria-label^="${name}"]:not([disabled])`, {
    visible: true,
  })
  await button!.click()
}

describe.skipIf(!CHROMIUM)('tables, links and shortcuts in the editor; an invite ends signed in', () => {
  let server: RunningServer
  let browser: Browser
  let owner: Awaited<ReturnType<typeof person>>
  useServerAndBrowser((given) => {
    ;({ server, browser } = given)
  })
  beforeAll(async () => {
    owner = await person(server, 'tara')
  }, 60_000)

  async function documentOf(title: string, markdown: string): Promise<string> {
    const made = await server.services.documents.create(owner.user.id, { title, markdown })
    if (made.kind === 'error') throw new Error(made.message)
    return made.value.slug
  }
  /** What the server stored, as its Markdown export (REST, the owner's API token). */
  async function exported(slug: string): Promise<string> {
    const response = await fetch(`${server.url}/api/documents/${slug}/markdown`, {
      headers: { authorization: `Bearer ${owner.token}` },
    })
    expect(response.status).toBe(200)
    return response.text()
  }

  test('the toolbar inserts a table the server accepts; its rows and columns are added and removed', async () => {
    const slug = await documentOf('Budget', '## Costs\n\nThe table below.')
    const page = await openedBy(browser, server, 'tara', slug)
    await connected(page)

    // In the title the button is disabled: a table there would push the title down.
    await caretAtEnd(page, '.ProseMirror h1', 'Budget')
    await page.waitForSelector('.toolbar button[aria-label^="Insert a table"][disabled]')
    expect(await page.$eval('[data-testid=table-tools]', (e) => (e as HTMLElement).hidden)).toBe(true)

    await caretAtEnd(page, '.ProseMirror p', 'The table below.')
    await press(page, 'Insert a table')
    await page.waitForSelector('.ProseMirror table')
    const shape = () =>
      page.$eval('.ProseMirror table', (table) =>
        Array.from(table.querySelectorAll('tr')).map((row) =>
          Array.from(row.children).map((cell) => `${cell.tagName.toLowerCase()}:${cell.textContent}`),
        ),
      )
    expect(await shape()).toEqual([
      ['th:', 'th:', 'th:'],
      ['td:', 'td:', 'td:'],
      ['td:', 'td:', 'td:'],
    ])
    // The caret is in the first cell; the table's own buttons show while it is there.
    await page.waitForSelector('[data-testid=table-tools]:not([hidden])')
    expect(await seriousViolations(page)).toEqual([])
    await page.keyboard.type('Item')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Cost')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Note')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Paper')
    await page.keyboard.press('Tab')
    await page.keyboard.type('12')

    // The caret is in "12" (row 1, column 1): a row below it and a column to its right.
    await press(page, 'Add a row below')
    await press(page, 'Add a column to the right')
    expect((await shape()).map((row) => row.length)).toEqual([4, 4, 4, 4])
    expect((await shape())[0]).toEqual(['th:Item', 'th:Cost', 'th:', 'th:Note'])
    await caretInCell(page, 0, 2) // the new, empty column
    await press(page, 'Delete this column')
    expect(await shape()).toEqual([
      ['th:Item', 'th:Cost', 'th:Note'],
      ['td:Paper', 'td:12', 'td:'],
      ['td:', 'td:', 'td:'],
      ['td:', 'td:', 'td:'],
    ])
    await caretInCell(page, 2, 1) // the new row below "Paper"
    await press(page, 'Delete this row')
    expect(await shape()).toEqual([
      ['th:Item', 'th:Cost', 'th:Note'],
      ['td:Paper', 'td:12', 'td:'],
      ['td:', 'td:', 'td:'],
    ])

    // The boundary took every change (a refused update closes the socket: the status would say so), and
    // the stored document exports the table as Markdown.
    await eventually(
      async () => {
        const markdown = await exported(slug)
        expect(markdown).toMatch(/\| Item +\| Cost +\| Note +\|/)
        expect(markdown).toMatch(/\| Paper +\| 12 +\| +\|/)
      },
      20_000,
      'the table in the export',
    )
    expect(await status(page)).toBe('Connected')

    if (process.env.WEB_SCREENSHOTS)
      await page.screenshot({ path: join(process.env.WEB_SCREENSHOTS, 'web-table.png') })
    // Delete the table: the text around it stays.
    await caretAtEnd(page, '.ProseMirror td', 'Paper')
    await press(page, 'Delete the table')
    await page.waitForSelector('.ProseMirror table', { hidden: true })
    await eventually(
      async () => expect(await exported(slug)).not.toContain('| Item'),
      20_000,
      'the table gone from the export',
    )
    expect(await status(page)).toBe('Connected')
    await page.browserContext().close()
  }, 120_000)

  test('a link is added, refused when unsafe, opened and removed in a dialog in the page (Ctrl+K)', async () => {
    const slug = await documentOf('Links', '## Where\n\nRead the guide')
    const page = await openedBy(browser, server, 'tara', slug)
    await connected(page)
    // Seen once in CI (2026-12-05, PostgreSQL): the export lacked "guide" at the end; the log says why.
    await recordEditing(page)
    expect(
      await page.$eval('.toolbar button[aria-label^="Link"]', (b) => b.getAttribute('aria-label')),
    ).toContain('Ctrl+K')
    // A prompt() would be a browser dialog: the test fails if one opens.
    page.on('dialog', (dialog) => {
      throw new Error(`a browser dialog opened: ${dialog.message()}`)
    })

    await caretAtEnd(page, '.ProseMirror p', 'Read the guide')
    await page.keyboard.down('Shift')
    for (let i = 0; i < 'guide'.length; i++) await page.keyboard.press('ArrowLeft')
    await page.keyboard.up('Shift')
    await page.keyboard.down('Control')
    await page.keyboard.press('k')
    await page.keyboard.up('Control')
    const dialog = await page.waitForSelector('dialog[data-testid=link-popover][open]')
    expect(await dialog!.evaluate((d) => d.querySelector('h2')?.textContent)).toBe('Add a link')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('link-address')

    // A script address is refused with what to do; the dialog stays open.
    await page.keyboard.type('javascript:alert(1)')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#link-problem:not([hidden])')
    expect(await page.$eval('#link-problem', (e) => e.textContent)).toContain('http, https or mailto')
    expect(await page.$eval('#link-address', (e) => e.getAttribute('aria-invalid'))).toBe('true')
    expect(await seriousViolations(page)).toEqual([])
    if (process.env.WEB_SCREENSHOTS)
      await page.screenshot({ path: join(process.env.WEB_SCREENSHOTS, 'web-link.png') })

    // A bare host name becomes an https address.
    await page.$eval('#link-address', (e) => {
      ;(e as HTMLInputElement).value = ''
    })
    await page.keyboard.type('example.com/guide')
    await page.keyboard.press('Enter')
    await page.waitForSelector('dialog[data-testid=link-popover]', { hidden: true })
    expect(await page.$eval('.ProseMirror a', (a) => [a.getAttribute('href'), a.textContent])).toEqual([
      'https://example.com/guide',
      'guide',
    ])
    await eventually(
      async () => expect(await exported(slug)).toContain('Read the [guide](https://example.com/guide)'),
      20_000,
      'the link in the export',
    )

    // The cursor in the link: the same button edits it, offers to open it, and removes it.
    await caretAtEnd(page, '.ProseMirror a', 'guide')
    await page.keyboard.press('ArrowLeft')
    await press(page, 'Link')
    await page.waitForSelector('dialog[data-testid=link-popover][open]')
    expect(await page.$eval('dialog h2', (e) => e.textContent)).toBe('Edit link')
    expect(await page.$eval('#link-address', (e) => (e as HTMLInputElement).value)).toBe(
      'https://example.com/guide',
    )
    expect(
      await page.$eval('dialog a.button', (a) => [a.getAttribute('href'), a.getAttribute('rel')]),
    ).toEqual(['https://example.com/guide', 'noopener noreferrer'])
    expect(await seriousViolations(page)).toEqual([])
    await page.click('dialog button.danger') // Remove link
    await page.waitForSelector('dialog[data-testid=link-popover]', { hidden: true })
    await page.waitForSelector('.ProseMirror a', { hidden: true })
    expect(await page.$eval('.ProseMirror p', (p) => p.textContent)).toBe('Read the guide')
    // The caret is after the word, not the word selected: the next keystroke does not replace it.
    expect(
      await page.$eval('.ProseMirror', (e) => {
        const { selection, doc } = (
          e as unknown as {
            editor: {
              state: {
                selection: { empty: boolean; from: number }
                doc: { textBetween(a: number, b: number): string }
              }
            }
          }
        ).editor.state
        return {
          empty: selection.empty,
          before: doc.textBetween(Math.max(0, selection.from - 5), selection.from),
        }
      }),
    ).toEqual({ empty: true, before: 'guide' })

    // Nothing selected: the dialog asks for the text to show as well.
    await caretAtEnd(page, '.ProseMirror p', 'Read the guide')
    await page.keyboard.type(' or ')
    await press(page, 'Link')
    await page.waitForSelector('dialog[data-testid=link-popover][open] #link-text')
    await page.keyboard.type('tara@example.com')
    await page.keyboard.press('Tab')
    await page.keyboard.type('write to me')
    await page.keyboard.press('Enter')
    await page.waitForSelector('dialog[data-testid=link-popover]', { hidden: true })
    expect(await page.$eval('.ProseMirror a', (a) => [a.getAttribute('href'), a.textContent])).toEqual([
      'mailto:tara@example.com',
      'write to me',
    ])
    // Typing on after the new link is plain text (once the dialog's closing has given the text its focus back).
    await caretSettled(page)
    await page.keyboard.type('.')
    await eventually(
      async () =>
        expect({
          exported: await exported(slug),
          editor: await page.$eval('.ProseMirror p', (p) => p.textContent),
          // A refused update closes the connection with its reason, which the page's status shows.
          status: await status(page),
          log: await editingLog(page),
        }).toEqual({
          exported: expect.stringContaining('Read the guide or [write to me](mailto:tara@example.com).'),
          editor: 'Read the guide or write to me.',
          status: 'Connected',
          log: expect.anything(),
        }),
      20_000,
      'the mailto link in the export',
    )
    expect(await status(page)).toBe('Connected')
    await page.browserContext().close()
  }, 120_000)

  test('Ctrl+/ lists the shortcuts in a dialog that Escape closes; the buttons name their keys', async () => {
    const slug = await documentOf('Keys', '## Start\n\nSome text')
    const page = await openedBy(browser, server, 'tara', slug)
    await connected(page)
    const labels = await page.$$eval('.toolbar button', (buttons) =>
      buttons.map((b) => b.getAttribute('aria-label') ?? ''),
    )
    for (const expected of [
      'Bold (Ctrl+B)',
      'Italic (Ctrl+I)',
      'Heading 2 (Ctrl+Alt+2)',
      'Redo (Ctrl+Shift+Z)',
    ])
      expect(labels).toContain(expected)

    await caretAtEnd(page, '.ProseMirror p', 'Some text')
    await page.keyboard.down('Control')
    await page.keyboard.press('/')
    await page.keyboard.up('Control')
    const dialog = await page.waitForSelector('dialog[data-testid=shortcuts][open]')
    const text = await dialog!.evaluate((d) => d.textContent ?? '')
    for (const expected of [
      'Keyboard shortcuts',
      'Bold',
      'Ctrl+B',
      'Add or edit a link',
      'Ctrl+K',
      'Next cell',
    ])
      expect(text).toContain(expected)
    expect(await seriousViolations(page)).toEqual([])
    if (process.env.WEB_SCREENSHOTS)
      await page.screenshot({ path: join(process.env.WEB_SCREENSHOTS, 'web-shortcuts.png') })
    await page.keyboard.press('Escape')
    await page.waitForSelector('dialog[data-testid=shortcuts]', { hidden: true })
    // Back in the text: typing goes on where it was.
    await caretSettled(page)
    await page.keyboard.type(' more')
    await page.waitForFunction(() =>
      document.querySelector('.ProseMirror p')?.textContent?.includes('Some text more'),
    )
    // `?` typed in the text is a question mark, not the dialog; the toolbar's ? button opens it.
    await page.keyboard.type('?')
    await page.waitForFunction(() => document.querySelector('.ProseMirror p')?.textContent?.endsWith('more?'))
    expect(await page.$('dialog[data-testid=shortcuts]')).toBeNull()
    await press(page, 'Keyboard shortcuts')
    await page.waitForSelector('dialog[data-testid=shortcuts][open]')
    await page.keyboard.press('Escape')
    await page.waitForSelector('dialog[data-testid=shortcuts]', { hidden: true })
    await page.browserContext().close()
  }, 120_000)

  test('an invite link with ?next= ends signed in on that document, not on the sign-in form', async () => {
    const slug = await documentOf('Welcome aboard', '## First steps\n\nHello.')
    const made = await server.services.users.add('ines')
    if (made.kind === 'error') throw new Error(made.message)
    const shared = await server.services.documents.share(slug, made.value.id, 'editor')
    if (shared.kind === 'error') throw new Error(shared.message)
    const invite = await server.auth.accounts.createInvite(made.value.id)

    const context = await browser.createBrowserContext()
    const page = await context.newPage()
    await page.goto(`${server.url}/invite/${invite.token}?next=/d/${slug}`)
    expect(await seriousViolations(page)).toEqual([])
    await page.type('#password', PASSWORD)
    await page.type('#confirm', PASSWORD)
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    expect(new URL(page.url()).pathname).toBe(`/d/${slug}`)
    await page.waitForSelector('.ProseMirror')
    await connected(page)
    expect(await page.$eval('.ProseMirror h1', (e) => e.textContent)).toBe('Welcome aboard')
    await context.close()
  }, 120_000)
})
