/**
 * Presence colours across two instances (issue 28), with real Redis between two servers and Debian's
 * Chromium: each instance gives a colour no one it sees holds, but two people whose sockets are on two
 * instances could get the same one (each instance picks before the other's state reaches it). Before, both
 * pages then drew the two people in one colour. Now the server adds a presence key to `user` and every page
 * settles a clash from the keys the same way, so the two pages agree without asking anyone.
 *
 * The race is made certain, not hoped for: the second person first connects on B (a real provider with
 * their session cookie) whose state then times out while its socket stays, so B keeps their colour for them
 * (a person keeps one colour in all their tabs) while A sees no one holding it; the first person, whose own colour is the same, then
 * opens the page on A and gets it too; the second person's page on B gets the colour B kept. Both servers
 * have handed out one colour twice, which the test checks before it looks at the pages.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { colorOf, PRESENCE_COLORS } from '@collab/doc-schema'
import { type Browser, CHROMIUM, launchChromium, type Page } from '@collab/test-support/chromium'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, TWO_INSTANCES, useTwoTestServers } from '@collab/test-support/server'
import { removeAwarenessStates } from 'y-protocols/awareness'
import type { RunningServer } from '../server.ts'
import { caretsPlaced, openDocument, openedBy, person, rgbToHex, signedIn } from './web-support.ts'

type Person = Awaited<ReturnType<typeof person>>

/** Two people whose own colours (colorOf of their user ids) are the same: made until the hash pairs two. */
async function twins(server: RunningServer): Promise<[Person, Person]> {
  const seen = new Map<string, Person>()
  for (let i = 0; i < 40; i++) {
    const made = await person(server, `twin${i}`)
    const twin = seen.get(colorOf(made.user.id))
    if (twin) return [twin, made]
    seen.set(colorOf(made.user.id), made)
  }
  throw new Error('no two people with the same colour in 40: is the palette hash uniform?')
}

/** The colour and presence key `server` holds for each awareness client of `room`. */
function serverPresence(server: RunningServer, room: string): Map<number, { color?: string; key?: string }> {
  const document = server.collab.hocuspocus.documents.get(room)
  const out = new Map<number, { color?: string; key?: string }>()
  for (const [clientId, state] of document?.awareness.getStates() ?? [])
    out.set(clientId, (state as { user?: { color?: string; key?: string } }).user ?? {})
  return out
}

/** One page's view: each remote caret's name and colour, and the colour the list shows the page's person in. */
async function seen(page: Page) {
  const view = await page.evaluate(() => ({
    carets: Array.from(document.querySelectorAll('.ProseMirror .caret')).map((caret) => ({
      name: caret.querySelector('.caret-label')?.textContent ?? '',
      border: getComputedStyle(caret).borderLeftColor,
      label: getComputedStyle(caret.querySelector('.caret-label')!).backgroundColor,
    })),
    me: getComputedStyle(document.querySelector('.presence li .swatch')!).backgroundColor,
  }))
  return {
    carets: view.carets.map((c) => ({ name: c.name, color: rgbToHex(c.border), label: rgbToHex(c.label) })),
    me: rgbToHex(view.me),
  }
}

describe.skipIf(!TWO_INSTANCES || !CHROMIUM)('presence colours across two instances', () => {
  let browser: Browser
  const pair = useTwoTestServers()
  beforeAll(async () => {
    browser = await launchChromium()
  }, 60_000)
  afterAll(() => browser?.close())

  test("two people given one colour by two instances see each other's carets and names in distinct colours, each shown to themselves as the other sees them", async () => {
    const [first, second] = await twins(pair.a)
    const created = await pair.a.services.documents.create(first.user.id, {
      title: 'Two instances',
      markdown: '## Notes\n\nFirst paragraph here.\n\nSecond paragraph here.\n',
    })
    if (created.kind === 'error') throw new Error(created.message)
    const { slug, room } = created.value
    expect((await pair.a.services.documents.share(slug, second.user.id, 'editor')).kind).toBe('ok')
    const shared = colorOf(first.user.id)

    // The second person holds their colour on B with no state anyone sees.
    const pageB = await signedIn(browser, pair.b, second.user.handle)
    const cookie = (await pageB.cookies()).map((c) => `${c.name}=${c.value}`).join('; ')
    const holder = connectProvider(pair.b.url, room, 'session', {
      headers: { cookie, origin: new URL(pair.b.url).origin },
    })
    try {
      await holder.ready
      holder.provider.setAwarenessField('user', {})
      const held = await eventually(() => {
        const user = serverPresence(pair.b, room).get(holder.doc.clientID)
        expect(user?.color).toBe(shared)
        return user!
      })
      // Its state goes as a timed-out one does (y-protocols drops a state not renewed in 30 s) while the
      // socket stays; the holder renews nothing more.
      holder.provider.awareness!.setLocalState(null)
      removeAwarenessStates(
        pair.b.collab.hocuspocus.documents.get(room)!.awareness,
        [holder.doc.clientID],
        'timeout',
      )
      await eventually(() => expect(serverPresence(pair.b, room).has(holder.doc.clientID)).toBe(false))

      const pageA = await openedBy(browser, pair.a, first.user.handle, slug)
      await openDocument(pageB, pair.b, slug)
      await caretsPlaced(pageA, pageB)

      // Both servers handed out one colour twice: what the pages draw is theirs to settle.
      await eventually(() => {
        const users = [...serverPresence(pair.a, room).values()]
        expect(users.map((u) => u.color)).toEqual([shared, shared])
        expect(users.map((u) => u.key)).toContain(held.key)
      }, 15_000)

      const [inA, inB] = await eventually(async () => {
        const views = [await seen(pageA), await seen(pageB)] as const
        expect(views[0].carets.map((c) => c.name)).toEqual([second.user.handle])
        expect(views[1].carets.map((c) => c.name)).toEqual([first.user.handle])
        // Each page shows its person in the colour the other page draws them in.
        expect(views[0].me).toBe(views[1].carets[0]!.color)
        expect(views[1].me).toBe(views[0].carets[0]!.color)
        return views
      }, 15_000)
      const ofSecond = inA.carets[0]!
      const ofFirst = inB.carets[0]!
      expect(ofFirst.color).not.toBe(ofSecond.color)
      for (const caret of [ofFirst, ofSecond]) {
        expect(caret.label).toBe(caret.color)
        expect(PRESENCE_COLORS).toContain(caret.color)
      }
      // The smallest presence key kept the colour both were given.
      const keys = [...serverPresence(pair.a, room).values()].map((u) => u.key!)
      const firstKey = keys.find((key) => key !== held.key)!
      expect([ofFirst.color, ofSecond.color]).toContain(shared)
      expect(firstKey < held.key! ? ofFirst.color : ofSecond.color).toBe(shared)
    } finally {
      holder.destroy()
    }
  })
})
