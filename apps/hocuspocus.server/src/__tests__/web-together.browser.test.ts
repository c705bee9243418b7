/**
 * Two people and an agent in one document, in Debian's Chromium (issue 28). Before: every page chose its
 * own colour from a hash of the handle, so "erin" and "ivan" drew in the very same blue; an agent's chat
 * message was labelled with the person's name, exactly like the person's own; a viewer whose role dropped
 * kept the formatting bar and the chat box until reload, and one raised back to editor stayed read-only
 * until reload; a removed member read "could not be opened"
 * under a status still saying "Connected".
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { contrastRatio, FRAGMENT_NAME, PRESENCE_COLORS } from '@collab/doc-schema'
import { type Browser, CHROMIUM, type Page } from '@collab/test-support/chromium'
import { createDocument } from '@collab/test-support/documents'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import type { RunningServer } from '../server.ts'
import {
  caretsPlaced,
  openDocument,
  openedBy,
  parseRgb,
  person,
  rgbToHex,
  seriousViolations,
  signedIn,
  useServerAndBrowser,
} from './web-support.ts'

/** What one page shows of the others: each remote caret's colours and label, each entry of the list. */
async function seen(page: Page) {
  return page.evaluate(() => ({
    carets: Array.from(document.querySelectorAll('.ProseMirror .caret')).map((caret) => {
      const label = caret.querySelector('.caret-label')!
      return {
        name: label.textContent ?? '',
        border: getComputedStyle(caret).borderLeftColor,
        borderStyle: getComputedStyle(caret).borderLeftStyle,
        labelBackground: getComputedStyle(label).backgroundColor,
        labelText: getComputedStyle(label).color,
      }
    }),
    present: Array.from(document.querySelectorAll('.presence li')).map((li) => ({
      text: li.textContent ?? '',
      agent: li.getAttribute('data-agent') === 'true',
      swatch: getComputedStyle(li.querySelector('.swatch') ?? li).backgroundColor,
    })),
    count: document.querySelector('.presence-count')?.textContent ?? '',
  }))
}

describe.skipIf(!CHROMIUM)('together in the web editor', () => {
  let server: RunningServer
  let browser: Browser
  useServerAndBrowser((given) => {
    ;({ server, browser } = given)
  })
  const providers: TestProvider[] = []
  afterAll(() => {
    for (const p of providers) p.destroy()
  })

  test("two people see each other's carets and names in distinct, opaque, readable colours; the list tells them from an agent", async () => {
    // erin and ivan: the old hash of their handles gave both hue 250.
    const erin = await person(server, 'erin')
    const ivan = await person(server, 'ivan')
    const { slug, room } = await createDocument(server, erin.user.id, {
      title: 'Together',
      markdown:
        '## Notes\n\nFirst paragraph here.\n\nSecond paragraph here.\n\n## Tasks\n\n- [ ] Check the caret colours\n- [x] Share with ivan\n',
    })
    expect((await server.services.documents.share(slug, ivan.user.id, 'editor')).kind).toBe('ok')

    const a = await signedIn(browser, server, 'erin')
    const b = await signedIn(browser, server, 'ivan')
    await openDocument(a, server, slug)
    await openDocument(b, server, slug)
    await caretsPlaced(a, b)

    const [ofIvan, ofErin] = await eventually(async () => {
      const inA = await seen(a)
      const inB = await seen(b)
      expect(inA.carets.map((c) => c.name)).toEqual(['ivan'])
      expect(inB.carets.map((c) => c.name)).toEqual(['erin'])
      return [inA, inB]
    }, 15_000)
    const ivanCaret = ofIvan.carets[0]!
    const erinCaret = ofErin.carets[0]!
    for (const caret of [ivanCaret, erinCaret]) {
      // Opaque: not transparent (TipTap's fallback for a colour it does not take), not see-through.
      expect(parseRgb(caret.border).a).toBe(1)
      expect(caret.border).toBe(caret.labelBackground)
      expect(PRESENCE_COLORS).toContain(rgbToHex(caret.border))
      // The label's white text reads on its colour (WCAG AA, 4.5:1).
      expect(
        contrastRatio(rgbToHex(caret.labelText), rgbToHex(caret.labelBackground)),
      ).toBeGreaterThanOrEqual(4.5)
      expect(caret.borderStyle).toBe('solid') // a person's caret; an agent's is dashed
    }
    expect(rgbToHex(ivanCaret.border)).not.toBe(rgbToHex(erinCaret.border))

    // The list: you first in the colour the others see you in, then the others; "2 here".
    expect(ofIvan.present[0]!.text).toBe('erin (you)')
    await eventually(async () => expect((await seen(a)).present[0]!.swatch).toBe(erinCaret.border))
    expect(ofIvan.present[1]).toEqual({ text: 'ivan', agent: false, swatch: ivanCaret.border })
    expect(ofIvan.count).toBe('2 here')

    // A program of erin's (an editor connected with her API token) with its caret in the text: listed
    // apart from the people, marked as her agent, in a colour of its own.
    const program = connectProvider(server.url, room, erin.token)
    providers.push(program)
    await program.ready
    const second = (program.doc.getXmlFragment(FRAGMENT_NAME).get(3) as Y.XmlElement).get(0) as Y.XmlText
    const at = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(second, 3))
    program.provider.setAwarenessField('cursor', { anchor: at, head: at })
    const withAgent = await eventually(async () => {
      const now = await seen(b)
      expect(now.present.some((p) => p.agent)).toBe(true)
      return now
    })
    const agentEntry = withAgent.present.find((p) => p.agent)!
    expect(agentEntry.text).toBe("✦ erin's agent")
    expect(withAgent.present.at(-1)).toEqual(agentEntry) // people first, agents after
    const agentCaret = await eventually(async () => {
      const caret = (await seen(b)).carets.find((c) => c.name === "✦ erin's agent")
      expect(caret).toBeDefined()
      return caret!
    })
    expect(agentCaret.borderStyle).toBe('dashed')
    expect(agentCaret.border).toBe(agentEntry.swatch)
    expect(new Set([agentCaret.border, ivanCaret.border, erinCaret.border]).size).toBe(3)
    expect(await seriousViolations(a)).toEqual([])
    // `WEB_SCREENSHOTS=docs bun test web-together` saves the page as docs/web.md's desktop picture.
    if (process.env.WEB_SCREENSHOTS) {
      await a.click('.ProseMirror h2')
      await Bun.sleep(500)
      await a.screenshot({ path: join(process.env.WEB_SCREENSHOTS, 'web-together.png') })
    }
  })

  test("an agent's chat message is labelled as the agent and its app, the person's as the person", async () => {
    const olga = await person(server, 'olga')
    const issued = await server.services.tokens.issue(olga.user.id, {
      scopes: ['read', 'write'],
      label: 'Claude Desktop',
    })
    if (issued.kind === 'error') throw new Error(issued.message)
    const { slug } = await createDocument(server, olga.user.id, {
      title: 'Chat labels',
      markdown: '## Plan\n\nText.\n',
    })
    const page = await openedBy(browser, server, 'olga', slug)
    await page.click('.ProseMirror p')
    await eventually(async () =>
      expect(await page.$eval('.chat h2', (e) => e.textContent)).toBe('Chat: Plan'),
    )
    await page.type('.chat textarea', 'From me')
    await page.click('.chat button[type=submit]')
    await eventually(async () =>
      expect(await page.$$eval('.messages p', (ps) => ps.map((p) => p.textContent))).toEqual(['From me']),
    )

    // The agent posts over MCP in the room of the heading the page shows (its id from the page's outline).
    const section = await page.$$eval('.outline a', (links) =>
      links
        .find((a) => a.textContent === 'Plan')!
        .getAttribute('href')!
        .slice(1),
    )
    const agent = await connectClient(mcpUrlOf(server), issued.value.token)
    try {
      const posted = await callText(agent, 'post_chat_message', {
        slug,
        section_id: section,
        text: 'From the agent',
      })
      expect(posted.isError).toBeFalsy()
    } finally {
      await agent.close()
    }
    const messages = await eventually(async () => {
      const items = await page.$$eval('.messages li', (lis) =>
        lis.map((li) => ({
          author: li.querySelector('b')?.textContent,
          app: li.querySelector('.badge')?.textContent ?? null,
          text: li.querySelector('p')?.textContent,
        })),
      )
      expect(items).toHaveLength(2)
      return items
    })
    expect(messages).toEqual([
      { author: 'olga', app: null, text: 'From me' },
      { author: "✦ olga's agent", app: 'Claude Desktop', text: 'From the agent' },
    ])
    expect(await seriousViolations(page)).toEqual([])
  })

  test('a role dropped to viewer takes the formatting bar and the chat box away at once, a raise gives them back, removal says so in the status', async () => {
    const owner = await person(server, 'pia')
    const quinn = await person(server, 'quinn')
    const { slug } = await createDocument(server, owner.user.id, {
      title: 'Roles',
      markdown: '## Part\n\nWords.\n',
    })
    expect((await server.services.documents.share(slug, quinn.user.id, 'editor')).kind).toBe('ok')
    const page = await openedBy(browser, server, 'quinn', slug)
    const state = () =>
      page.evaluate(() => ({
        editable: document.querySelector('.ProseMirror')?.getAttribute('contenteditable'),
        toolbar: Boolean(document.querySelector('.toolbar:not([hidden])')),
        chatBox: Boolean(document.querySelector('.chat textarea')),
        access: document.querySelector('.access')?.textContent ?? '',
        status: document.querySelector('[data-testid=status]')?.textContent ?? '',
        banner: document.querySelector('.banner:not([hidden])')?.textContent ?? '',
      }))
    await eventually(async () =>
      expect(await state()).toMatchObject({
        editable: 'true',
        toolbar: true,
        chatBox: true,
        status: 'Connected',
      }),
    )

    expect((await server.services.documents.share(slug, quinn.user.id, 'viewer')).kind).toBe('ok')
    await eventually(async () => {
      const now = await state()
      expect(now).toMatchObject({ editable: 'false', toolbar: false, chatBox: false })
      expect(now.access).toStartWith('read-only')
    })

    // The owner, in their own page, makes quinn an editor again through the share API: quinn's open page
    // gets the bar and the chat box back without a reload, and what quinn types reaches the owner's page.
    const ownerPage = await openedBy(browser, server, 'pia', slug)
    const raised = await ownerPage.evaluate(
      async (path) =>
        (
          await fetch(path, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ role: 'editor' }),
          })
        ).status,
      `/api/documents/${slug}/members/quinn`,
    )
    expect(raised).toBe(200)
    await eventually(async () => {
      const now = await state()
      expect(now).toMatchObject({ editable: 'true', toolbar: true, chatBox: true, status: 'Connected' })
      expect(now.access).toStartWith('editing')
    })
    await page.click('.ProseMirror p:last-of-type')
    await page.keyboard.press('End')
    await page.keyboard.type(' Raised and typing.')
    await eventually(async () =>
      expect(
        await ownerPage.evaluate(() => document.querySelector('.ProseMirror')?.textContent ?? ''),
      ).toContain('Raised and typing.'),
    )
    await ownerPage.browserContext().close()

    expect((await server.services.documents.unshare(slug, quinn.user.id)).kind).toBe('ok')
    const removed = await eventually(async () => {
      const now = await state()
      expect(now.banner).toContain('no longer have access')
      return now
    })
    expect(removed.status).toBe('No access')
    // It stays so: the page does not reconnect, get refused, and claim "Connected" again.
    await Bun.sleep(1500)
    expect((await state()).status).toBe('No access')
  })
})
