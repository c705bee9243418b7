/**
 * What a person sees of agents' changes without asking (issue 27), in Debian's Chromium on a real server:
 * - "Since you last looked": the owner opens a document, leaves; an agent writes through MCP with an API
 *   token named for its app; when the owner opens the document again a notice names the agent and its app,
 *   and "Review changes" opens the history panel on the version the owner last saw, showing the agent's
 *   text as added since. Once reviewed, the next visit shows no notice; people's own typing raises none.
 *   The mark is the server's, per person: a change dismissed in one browser is not news in another.
 * - The panel follows: while it is open, an agent's new write appears at the top of the list without a
 *   reload.
 * axe-core finds no serious or critical violation with the notice shown.
 */
import { describe, expect, test } from 'bun:test'
import { CHROMIUM, type Page } from '@collab/test-support/chromium'
import { DATABASE_KIND } from '@collab/test-support/database'
import { callText } from '@collab/test-support/mcp'
import { eventually } from '@collab/test-support/server'
import {
  connected,
  openDocument,
  openedBy,
  seriousViolations,
  signedIn,
  useOwnerWithAgent,
} from './web-support.ts'

/** The page has read what changed since the last look (and marked what it saw, when it had no notice). */
const looked = (page: Page) => page.waitForFunction(() => document.querySelector('.since-look[data-checked]'))

describe.skipIf(!CHROMIUM)(`agents' changes since the last look, in Chromium (${DATABASE_KIND})`, () => {
  // Versions as soon as asked: no interval between automatic ones.
  const world = useOwnerWithAgent(
    'ines',
    { scopes: ['read', 'write'], label: 'Recipe Bot' },
    { title: 'Recipes', markdown: '## Soup\n\nLeeks and potatoes.' },
    { versionMinIntervalMs: 0, versionPauseMs: 150, versionAgentPauseMs: 150 },
  )

  /** Versions of the document, newest first, as the server lists them. */
  async function versions() {
    const found = await world.server.services.documents.bySlugForAdmin(world.slug)
    if (found.kind === 'error') throw new Error(found.message)
    return world.server.services.documents.listVersions(found.value.id, { limit: 5 })
  }

  /** The agent appends a section and waits for the version that holds it. */
  async function agentAppends(title: string, text: string) {
    const appended = await callText(world.agent, 'append_to_document', {
      slug: world.slug,
      markdown: `## ${title}\n\n${text}`,
    })
    expect(appended.isError).toBeFalsy()
    await eventually(async () => {
      const [newest] = await versions()
      expect(newest?.reason).toBe('agent')
      expect(newest?.summary?.sections.map((s) => s.t)).toEqual([title])
    })
  }

  test('a notice names the agent and its app; Review shows what it added; reviewed, it is gone', async () => {
    const page = await signedIn(world.browser, world.server, 'ines')
    // The first visit: nothing to tell, the page marks what it saw.
    await openDocument(page, world.server, world.slug)
    await connected(page)
    await looked(page)
    expect(await page.$eval('.since-look', (e) => (e as HTMLElement).hidden)).toBe(true)

    // Away (the page is closed), an agent writes.
    await page.goto('about:blank')
    await agentAppends('Bread', 'Flour, water, salt and <b>time</b>.')

    await openDocument(page, world.server, world.slug)
    await connected(page)
    await page.waitForSelector('.since-look:not([hidden])')
    const notice = await page.$eval('.since-look', (e) => e.textContent ?? '')
    expect(notice).toContain('Since you last looked')
    expect(notice).toContain("ines's agent")
    expect(notice).toContain('Recipe Bot')
    expect(notice).toContain('(1 version)')
    expect(await seriousViolations(page)).toEqual([])

    // Review: the panel opens on the version last seen, and what changed from it to now is the agent's.
    await page.click('.since-look button')
    await page.waitForSelector('#history-panel .diff:not([aria-busy]) .diff-section')
    expect(await page.$eval('.since-look', (e) => (e as HTMLElement).hidden)).toBe(true)
    const added = await page.$$eval('#history-panel .diff-lines li.ins', (items) =>
      items.map((li) => li.textContent ?? ''),
    )
    expect(added.some((line) => line.includes('Flour, water, salt and <b>time</b>.'))).toBe(true)
    expect(await page.$eval('#history-panel .since-authors', (p) => p.textContent)).toContain('Recipe Bot')
    // The selected version is the one before the agent's write (the creation).
    expect(
      await page.$eval('#history-panel button.version[aria-pressed=true]', (b) => b.textContent ?? ''),
    ).toContain('Created')

    // Reviewed: the next visit has nothing to say.
    await openDocument(page, world.server, world.slug)
    await connected(page)
    await looked(page)
    expect(await page.$eval('.since-look', (e) => (e as HTMLElement).hidden)).toBe(true)
    await page.close()
  })

  /** The owner's last-look mark as the server keeps it (`PUT` with `body` first, when given). */
  async function lastLook(body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${world.server.url}/api/documents/${world.slug}/last-look`, {
      method: body === undefined ? 'GET' : 'PUT',
      headers: { authorization: `Bearer ${world.owner.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: response.status, json: (await response.json()) as Record<string, unknown> }
  }

  test("the mark is the person's, not the browser's: a change seen on one device is not news on another", async () => {
    const laptop = await openedBy(world.browser, world.server, 'ines', world.slug)
    await connected(laptop)
    await looked(laptop)
    const [seen] = await versions()
    await eventually(async () =>
      expect((await lastLook()).json.mark).toEqual({
        versionId: String(seen!.id),
        createdAt: seen!.createdAt.toISOString(),
      }),
    )
    await laptop.close()
    await agentAppends('Salad', 'Leaves and lemon.')

    // Another browser (its own storage), the same person: the notice shows there.
    const phone = await openedBy(world.browser, world.server, 'ines', world.slug)
    await phone.waitForSelector('.since-look:not([hidden])')
    expect(await phone.$eval('.since-look', (e) => e.textContent ?? '')).toContain('Recipe Bot')
    await phone.click('.since-look button:last-of-type') // Dismiss
    const [newest] = await versions()
    await eventually(async () =>
      expect((await lastLook()).json.mark).toMatchObject({ versionId: String(newest!.id) }),
    )
    await phone.close()

    // Dismissed on the phone: a third browser has nothing to say.
    const desktop = await openedBy(world.browser, world.server, 'ines', world.slug)
    await connected(desktop)
    await looked(desktop)
    expect(await desktop.$eval('.since-look', (e) => (e as HTMLElement).hidden)).toBe(true)
    await desktop.close()

    // The mark moves forward only, and a bad version is refused naming the field.
    const older = await lastLook({ versionId: String(seen!.id) })
    expect(older.status).toBe(200)
    expect(older.json.mark).toMatchObject({ versionId: String(newest!.id) })
    const bad = await lastLook({ versionId: 'latest' })
    expect(bad.status).toBe(400)
    expect(bad.json.field).toBe('versionId')
    const unknown = await lastLook({ versionId: '999999' })
    expect(unknown.status).toBe(404)
    expect(String(unknown.json.message)).toContain('GET …/versions')
  })

  test("people's own typing raises no notice", async () => {
    const page = await openedBy(world.browser, world.server, 'ines', world.slug)
    await connected(page)
    await looked(page)
    await page.goto('about:blank')
    // Someone types (the owner, through the editor in another page) while this page is away.
    const other = await openedBy(world.browser, world.server, 'ines', world.slug)
    await connected(other)
    const before = (await versions())[0]?.id
    await other.click('.ProseMirror p')
    await other.keyboard.type(' Also thyme.')
    await eventually(async () => {
      const [newest] = await versions()
      expect(newest?.id).not.toBe(before)
      expect(((newest?.authors ?? []) as Array<{ k: string }>).map((a) => a.k)).toEqual(['person'])
    })
    await other.close()

    await openDocument(page, world.server, world.slug)
    await connected(page)
    await looked(page)
    expect(await page.$eval('.since-look', (e) => (e as HTMLElement).hidden)).toBe(true)
    await page.close()
  })

  test('an open history panel lists an agent write as it lands, without a reload', async () => {
    const page = await openedBy(world.browser, world.server, 'ines', world.slug)
    await connected(page)
    await page.click('button[aria-controls=history-panel]')
    await page.waitForSelector('#history-panel button.version')
    const count = await page.$$eval('#history-panel button.version', (b) => b.length)

    await agentAppends('Salad', 'Greens and lemon.')
    await page.waitForFunction(
      (n) => document.querySelectorAll('#history-panel button.version').length > n,
      {},
      count,
    )
    const newest = await page.$eval('#history-panel button.version', (b) => b.textContent ?? '')
    expect(newest).toContain("After an agent's write")
    expect(newest).toContain('Salad (added)')
    await page.close()
  })
})
