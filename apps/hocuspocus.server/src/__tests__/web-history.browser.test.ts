/**
 * The document page's history panel in Debian's Chromium (issue 27), on a real server: an agent writes
 * through MCP with an API token named for its app; the owner opens History and sees the agent's version,
 * marked as an agent with the app's name; choosing the version before it shows what changed since
 * (removed and added text marked by sign and line style, in words for screen readers, as text, never
 * HTML), and its Markdown; undoing the agent's newest version takes back only what it changed, and
 * restoring the first version from the keyboard, after a confirming dialog, brings back its whole text in
 * the editor. On a 360 px phone the panel takes the screen's width and nothing overflows.
 * axe-core finds no serious or critical violation with the panel and its dialog open.
 *
 * `WEB_SCREENSHOTS=docs bun test web-history` saves the panel as docs/history.md's picture.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { CHROMIUM, type Page } from '@collab/test-support/chromium'
import { DATABASE_KIND } from '@collab/test-support/database'
import { callText } from '@collab/test-support/mcp'
import { outlineId } from '@collab/test-support/outline'
import { eventually } from '@collab/test-support/server'
import {
  connected,
  editorText,
  horizontalOverflow,
  openedBy,
  PHONE_WIDTH,
  person,
  seriousViolations,
  useOwnerWithAgent,
} from './web-support.ts'

/** Opens the panel with the header's History button and waits for its list. */
async function openHistory(page: Page): Promise<void> {
  await page.click('button[aria-controls=history-panel]')
  await page.waitForSelector('#history-panel button.version')
}

/** Each listed version's text (when, why, who, what), newest first. */
const versionTexts = (page: Page) =>
  page.$$eval('#history-panel button.version', (buttons) => buttons.map((b) => b.textContent ?? ''))

describe.skipIf(!CHROMIUM)(`the history panel in Chromium (${DATABASE_KIND})`, () => {
  // Versions as soon as asked: no interval between automatic ones.
  const world = useOwnerWithAgent(
    'hana',
    { scopes: ['read', 'write'], label: 'Trip Planner' },
    { title: 'Trip', markdown: '## Days\n\nMonday: the museum.\n\nTuesday: a long hike.' },
    { versionMinIntervalMs: 0, versionPauseMs: 150, versionAgentPauseMs: 150 },
  )

  /** Waits until the newest version is an agent's whose summary names exactly `section`. */
  async function versionNaming(section: string): Promise<void> {
    await eventually(async () => {
      const found = await world.server.services.documents.bySlugForAdmin(world.slug)
      if (found.kind === 'error') throw new Error(found.message)
      const [newest] = await world.server.services.documents.listVersions(found.value.id, { limit: 1 })
      expect(newest?.reason).toBe('agent')
      expect(newest?.summary?.sections.map((s) => s.t)).toEqual([section])
    })
  }

  test("the owner sees the agent's versions and app and what changed since, undoes one, restores another", async () => {
    // The agent rewrites a line and adds a section whose text looks like markup.
    const { text: outline } = await callText(world.agent, 'get_outline', { slug: world.slug })
    const { text: read } = await callText(world.agent, 'read_document', {
      slug: world.slug,
      section_id: outlineId(outline, 'Days'),
    })
    const sectionId = /^section_id: ([\w-]+)$/m.exec(read)![1]!
    const rev = /^rev: ([0-9a-f]+)$/m.exec(read)![1]!
    const replaced = await callText(world.agent, 'replace_text', {
      slug: world.slug,
      section_id: sectionId,
      rev,
      old_text: 'Tuesday: a long hike.',
      new_text: 'Tuesday: the lake by train.',
    })
    expect(replaced.isError).toBeFalsy()
    // Each write its own version (no interval between automatic ones): wait for the first before the next.
    await versionNaming('Days')
    const appended = await callText(world.agent, 'append_to_document', {
      slug: world.slug,
      markdown: '## Packing\n\nBring <b>boots</b> and a map.',
    })
    expect(appended.isError).toBeFalsy()
    await versionNaming('Packing')

    const page = await openedBy(world.browser, world.server, 'hana', world.slug)
    await connected(page)
    expect(await editorText(page)).toContain('Tuesday: the lake by train.')
    await openHistory(page)
    expect(await page.$eval('#history-panel', (e) => e.getAttribute('aria-labelledby'))).toBe(
      'history-heading',
    )
    expect(
      await page.$eval('button[aria-controls=history-panel]', (b) => b.getAttribute('aria-expanded')),
    ).toBe('true')
    const listed = await versionTexts(page)
    // Newest first: the agent's write(s) on top, the document's creation last.
    expect(listed[0]).toContain("After an agent's write")
    expect(listed[0]).toContain("✦ hana's agent")
    expect(listed[0]).toContain('Trip Planner')
    expect(listed.at(-1)).toContain('Created')
    expect(listed.some((text) => /Packing \(added\)/.test(text))).toBe(true)
    // The app's name is its own element (a badge), beside the agent's name.
    expect(await page.$eval('#history-panel button.version .author.agent .badge', (b) => b.textContent)).toBe(
      'Trip Planner',
    )

    // From the keyboard: the first version is focused by Tab, the arrows walk to the oldest, Enter opens it.
    await page.focus('#history-panel button.version')
    for (let i = 1; i < listed.length; i++) await page.keyboard.press('ArrowDown')
    expect(await page.evaluate(() => document.activeElement?.textContent ?? '')).toContain('Created')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#history-panel .diff:not([aria-busy]) .diff-section')
    const removed = await page.$$eval('#history-panel .diff-lines li.del', (items) =>
      items.map((li) => ({ text: li.textContent ?? '', struck: li.querySelector('del') !== null })),
    )
    const added = await page.$$eval('#history-panel .diff-lines li.ins', (items) =>
      items.map((li) => ({ text: li.textContent ?? '', underlined: li.querySelector('ins') !== null })),
    )
    // Marked three ways: the sign, the element (struck through / underlined) and words for screen readers.
    expect(removed.some((r) => r.text === '−Removed: Tuesday: a long hike.' && r.struck)).toBe(true)
    expect(added.some((a) => a.text === '+Added: Tuesday: the lake by train.' && a.underlined)).toBe(true)
    // Text that looks like markup is shown as the characters it is.
    expect(added.some((a) => a.text.includes('Bring <b>boots</b> and a map.'))).toBe(true)
    expect(await page.$$eval('#history-panel b', (bs) => bs.length)).toBe(0)
    expect(await page.$eval('#history-panel .since-authors', (p) => p.textContent)).toContain(
      "✦ hana's agent",
    )
    // `WEB_SCREENSHOTS=docs bun test web-history` saves the panel as docs/history.md's picture.
    if (process.env.WEB_SCREENSHOTS) {
      await page.screenshot({ path: join(process.env.WEB_SCREENSHOTS, 'history-panel.png') })
    }

    // The preview is this version's Markdown.
    await page.click('#history-panel details.preview-box summary')
    const preview = await page.$eval('#history-panel pre.preview', (pre) => pre.textContent ?? '')
    expect(preview).toContain('Tuesday: a long hike.')
    expect(preview).not.toContain('Packing')
    expect(await seriousViolations(page)).toEqual([])

    // Undo only the agent's newest version (the section it added): its earlier change stays.
    await page.click('#history-panel button.version')
    await page.waitForSelector('#history-panel .diff:not([aria-busy])')
    await page.click('#history-panel button.undo')
    await page.waitForSelector('dialog[open]')
    expect(await page.$eval('dialog[open] h2', (h2) => h2.textContent)).toBe("Undo this version's changes?")
    expect(await page.$eval('dialog[open] .action-version', (p) => p.textContent)).toContain(
      'Packing (added)',
    )
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel')
    await page.click('dialog[open] button.danger')
    await page.waitForSelector('dialog', { hidden: true })
    await page.waitForFunction(() => {
      const text = document.querySelector('.ProseMirror')?.textContent ?? ''
      return !text.includes('Packing') && text.includes('Tuesday: the lake by train.')
    })
    await page.waitForFunction(() =>
      document.querySelector('#history-panel .history-status')?.textContent?.startsWith('Undid the changes'),
    )

    // Restore the first version: its text comes back whole.
    await page.click('#history-panel li:last-child button.version')
    await page.waitForSelector('#history-panel .diff:not([aria-busy])')
    // Restore it: a dialog names it, focus starts on Cancel; Escape leaves it and nothing changes.
    await page.click('#history-panel button.restore')
    await page.waitForSelector('dialog[open]')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel')
    expect(await page.$eval('dialog[open] h2', (h2) => h2.textContent)).toBe('Restore this version?')
    expect(await seriousViolations(page)).toEqual([])
    await page.keyboard.press('Escape')
    await page.waitForSelector('dialog', { hidden: true })
    expect(await editorText(page)).toContain('Tuesday: the lake by train.')
    expect(await page.$eval('#history-panel li:last-child button.version', (b) => b.textContent)).toContain(
      'Created',
    )
    // Again, from the keyboard: Tab from Cancel to Restore, Enter.
    await page.click('#history-panel button.restore')
    await page.waitForSelector('dialog[open]')
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Restore')
    await page.keyboard.press('Enter')
    await page.waitForSelector('dialog', { hidden: true })
    // The live document changes for everyone: this page's editor shows the version's text.
    await page.waitForFunction(
      () => {
        const text = document.querySelector('.ProseMirror')?.textContent ?? ''
        return text.includes('Tuesday: a long hike.') && !text.includes('the lake by train')
      },
      { timeout: 20_000 },
    )
    // The panel says so (in its status region, read out) once it has listed the versions again.
    await page.waitForFunction(() =>
      document.querySelector('#history-panel .history-status')?.textContent?.startsWith('Restored "Created'),
    )

    // Escape closes the panel and gives focus back to its button.
    await page.focus('#history-panel button.version')
    await page.keyboard.press('Escape')
    await page.waitForSelector('#history-panel', { hidden: true })
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-controls'))).toBe(
      'history-panel',
    )
    await page.browserContext().close()
  }, 90_000)

  test('a viewer reads the history but is offered no Restore, and the server refuses theirs', async () => {
    const viewer = await person(world.server, 'vera')
    const shared = await world.server.services.documents.share(world.slug, viewer.user.id, 'viewer')
    if (shared.kind === 'error') throw new Error(shared.message)
    const page = await openedBy(world.browser, world.server, 'vera', world.slug)
    await connected(page)
    await openHistory(page)
    await page.click('#history-panel li:last-child button.version')
    await page.waitForSelector('#history-panel .diff:not([aria-busy])')
    expect(await page.$eval('#history-panel .restore-row', (row) => (row as HTMLElement).hidden)).toBe(true)
    const id = await page.$eval('#history-panel li:last-child button.version', (b) =>
      b.getAttribute('data-version-id'),
    )
    // The same call the button makes, from the viewer's page (her session cookie, our Origin).
    const refused = await page.evaluate(async (path) => {
      const response = await fetch(path, { method: 'POST', credentials: 'same-origin' })
      return { status: response.status, message: ((await response.json()) as { message: string }).message }
    }, `/api/documents/${world.slug}/versions/${id}/restore`)
    expect(refused.status).toBe(403)
    expect(refused.message).toContain('needs write access')
    await page.browserContext().close()
  }, 60_000)

  test('on a 360 px phone the panel takes the whole width and nothing overflows', async () => {
    const page = await openedBy(world.browser, world.server, 'hana', world.slug, {
      width: PHONE_WIDTH,
      height: 740,
    })
    await connected(page)
    await openHistory(page)
    const box = await page.$eval('#history-panel', (e) => {
      const rect = e.getBoundingClientRect()
      return { left: rect.left, width: rect.width }
    })
    expect(box).toEqual({ left: 0, width: PHONE_WIDTH })
    await page.click('#history-panel button.version')
    await page.waitForSelector('#history-panel .diff:not([aria-busy])')
    expect(await horizontalOverflow(page)).toEqual({ overflow: 0, widest: [] })
    expect(await seriousViolations(page)).toEqual([])
    if (process.env.WEB_SCREENSHOTS)
      await page.screenshot({ path: join(process.env.WEB_SCREENSHOTS, 'history-phone.png') })
    await page.browserContext().close()
  }, 60_000)
})
