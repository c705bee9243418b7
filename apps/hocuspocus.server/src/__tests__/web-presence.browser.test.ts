/**
 * The web page against forged presence and stored colours (issue 24), in Debian's Chromium: a non-member
 * of a public document (a real provider with an API token) claims to be "alice (owner)" with a colour that
 * is a declaration list ending in a CSS url(), and the document already holds a highlight whose colour is
 * a url() (stored before the server checked colours). A person reading it in the page sees the attacker
 * only as "✦ mallory's agent" inside the presence list, the highlight without a colour, and the page never
 * requests the tracking URL (it points at the test server, so a fetch would be seen).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { createDocumentUpdate, FRAGMENT_NAME, readPlainText, readTitle } from '@collab/doc-schema'
import { type Browser, CHROMIUM, type Page } from '@collab/test-support/chromium'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken } from '@collab/test-support/server'
import * as Y from 'yjs'
import type { RunningServer } from '../server.ts'
import { useServerAndBrowser } from './web-support.ts'

const PASSWORD = 'correct horse battery staple'

describe.skipIf(!CHROMIUM)('presence and colours in the page', () => {
  let server: RunningServer
  let browser: Browser
  const providers: TestProvider[] = []
  useServerAndBrowser((given) => {
    ;({ server, browser } = given)
  })
  afterAll(async () => {
    for (const p of providers) p.destroy()
  })

  async function signedIn(handle: string): Promise<Page> {
    const context = await browser.createBrowserContext()
    const page = await context.newPage()
    await page.setViewport({ width: 1280, height: 800 })
    await page.goto(`${server.url}/sign-in`)
    await page.type('#handle', handle)
    await page.type('#password', PASSWORD)
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')])
    return page
  }

  test('a forged overlay name and url() colours draw nothing outside the presence list, and nothing is fetched', async () => {
    const tracking = `${server.url}/track.png`
    const alice = await userWithToken(server, 'alice')
    const carol = await userWithToken(server, 'carol')
    const mallory = await userWithToken(server, 'mallory')
    expect((await server.auth.accounts.setPassword(carol.user.id, PASSWORD)).kind).toBe('ok')
    // A public document of alice's, stored with a highlight whose colour is a url() (older content).
    const created = await server.services.documents.create(alice.user.id, {
      title: 'Open plan',
      isPrivate: false,
    })
    if (created.kind === 'error') throw new Error(created.message)
    const doc = new Y.Doc()
    const base = createDocumentUpdate('Open plan', 'Marked words here.')
    if (base.kind === 'error') throw new Error(base.message)
    Y.applyUpdate(doc, base.value)
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    ;((fragment.get(1) as Y.XmlElement).get(0) as Y.XmlText).format(0, 6, {
      highlight: { color: `#ffee00; background-image: url(${tracking})` },
    })
    await server.services.documents.storeState(created.value.id, {
      state: Y.encodeStateAsUpdate(doc),
      title: readTitle(fragment),
      text: readPlainText(fragment),
    })

    const page = await signedIn('carol')
    const requested: string[] = []
    page.on('request', (request) => requested.push(request.url()))
    await page.goto(`${server.url}/d/${created.value.slug}`)
    await page.waitForFunction(() => document.querySelector('.ProseMirror')?.textContent?.includes('Marked'))

    const attacker = connectProvider(server.url, created.value.room, mallory.token)
    providers.push(attacker)
    await attacker.ready
    attacker.provider.setAwarenessField('user', {
      name: `✦ alice (owner) — your session expired: sign in again at evil.example ${'!'.repeat(400)}`,
      agent: false,
      color: `red; position: fixed; inset: 0; z-index: 9999; background: url(${tracking})`,
    })
    const names = await eventually(async () => {
      const items = await page.$$eval('.presence li', (lis) => lis.map((li) => li.textContent))
      expect(items).toContain("✦ mallory's agent")
      return items
    })
    expect(names.join('\n')).not.toContain('evil.example')
    // Carol herself, as the server names her to others: a person, not an agent (a second provider sees it).
    const listener = connectProvider(server.url, created.value.room, alice.token)
    providers.push(listener)
    await listener.ready
    await eventually(() =>
      expect(
        [...listener.provider.awareness!.getStates().values()].some(
          (state) => state.user?.name === 'carol' && state.user?.agent === false,
        ),
      ).toBe(true),
    )

    const layout = await page.evaluate(() => {
      const list = document.querySelector('.presence')!.getBoundingClientRect()
      const entries = Array.from(document.querySelectorAll('.presence li')).map((li) =>
        li.getBoundingClientRect(),
      )
      const styles = Array.from(document.querySelectorAll('[style]')).map(
        (e) => e.getAttribute('style') ?? '',
      )
      const mark = document.querySelector('.ProseMirror mark')
      return {
        inside: entries.every((e) => e.right <= list.right + 1 && e.bottom <= list.bottom + 1),
        listHeight: list.height,
        // Nothing shown is laid over the page (the page's own closed panels, display: none, show nothing).
        fixed: Array.from(document.querySelectorAll('body *')).some(
          (e) => e.getClientRects().length > 0 && getComputedStyle(e).position === 'fixed',
        ),
        styles,
        markStyle: mark?.getAttribute('style') ?? null,
        mark: Boolean(mark),
      }
    })
    expect(layout.inside).toBe(true)
    expect(layout.listHeight).toBeLessThan(100)
    expect(layout.fixed).toBe(false)
    expect(layout.styles.join('\n')).not.toContain('url(')
    expect(layout.mark).toBe(true)
    expect(layout.markStyle).toBeNull()
    expect(requested.filter((url) => url.includes('/track.png'))).toEqual([])
  })
})
