/**
 * Awareness that cannot lie or grow (issue 24). Found by the red team on real servers with real providers:
 * read-only viewers sending 7 states of 7.9 KB with fresh clientIds in every message grew the server from
 * 306 to 1,303 MB in 40 s (each listener held 6,328 fake states); and a non-member reading a public document
 * set `user.name`/`agent`/`color` to put a "sign in again" overlay on everyone's editor, and a CSS `url()`
 * colour (awareness or a highlight mark) made every viewer fetch a tracking URL.
 *
 * The attacker is a real provider with a token of a user who is not a member of the public document (a
 * read-only connection); a second real provider (the owner's) is what everyone else sees, and the server's
 * live document awareness is what the server holds.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, isHexColor, PRESENCE_COLORS } from '@collab/doc-schema'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import { Awareness, applyAwarenessUpdate, encodeAwarenessUpdate } from 'y-protocols/awareness'
import * as Y from 'yjs'
import { SESSION_PRINCIPAL_PREFIX } from '../../auth/tokens.ts'
import { presenceUserOf } from '../../collab/awareness-guard.ts'
import {
  MAX_AWARENESS_CLIENTS_PER_CONNECTION,
  MAX_AWARENESS_STATE_BYTES,
  MAX_PRESENCE_NAME_CHARS,
} from '../../collab/limits.ts'
import type { RunningServer } from '../../server.ts'

const CAP = MAX_AWARENESS_CLIENTS_PER_CONNECTION
const OVERLAY_NAME = '✦ alice (owner) — your session expired: sign in again at evil.example'
const OVERLAY_COLOR =
  'red; position: fixed; inset: 0; z-index: 9999; background: url(https://evil.example/t.png)'
const TRACKING_COLOR = 'url(https://evil.example/track.png)'

let server: RunningServer
useTestServer((s) => {
  server = s
})
let alice: Awaited<ReturnType<typeof userWithToken>>
let bob: Awaited<ReturnType<typeof userWithToken>>
let mallory: Awaited<ReturnType<typeof userWithToken>>
const providers: TestProvider[] = []

beforeAll(async () => {
  alice = await userWithToken(server, 'alice')
  bob = await userWithToken(server, 'bob')
  mallory = await userWithToken(server, 'mallory')
}, 60_000)
afterAll(() => {
  for (const p of providers) p.destroy()
})

/** A public document of alice's (mallory is no member: she reads it as anyone may), bob its editor. */
async function publicDocument(title: string) {
  const created = await server.services.documents.create(alice.user.id, { title, isPrivate: false })
  if (created.kind === 'error') throw new Error(created.message)
  const shared = await server.services.documents.share(created.value.slug, bob.user.id, 'editor')
  if (shared.kind === 'error') throw new Error(shared.message)
  return created.value
}

/** A provider that records the reasons the server gives when it closes its connection. */
async function open(room: string, token: string) {
  const p = connectProvider(server.url, room, token)
  providers.push(p)
  const closes: string[] = []
  p.provider.on('close', ({ event }: { event: { reason: string } }) => closes.push(event.reason))
  await p.ready
  return { ...p, closes }
}

/**
 * Sends, through the attacker's real provider, one awareness message holding a state for each of `count`
 * fresh clientIds (the provider sends every change of its awareness that it did not receive itself).
 */
function sendFreshStates(attacker: TestProvider, count: number, state: Record<string, unknown>): number[] {
  const collector = new Awareness(new Y.Doc())
  collector.setLocalState(null)
  const ids: number[] = []
  for (let i = 0; i < count; i++) {
    const doc = new Y.Doc()
    const one = new Awareness(doc)
    one.setLocalState(state)
    applyAwarenessUpdate(collector, encodeAwarenessUpdate(one, [doc.clientID]), null)
    ids.push(doc.clientID)
    one.destroy()
    doc.destroy()
  }
  applyAwarenessUpdate(attacker.provider.awareness!, encodeAwarenessUpdate(collector, ids), 'forged')
  collector.destroy()
  return ids
}

function serverAwareness(room: string): Awareness {
  const document = server.collab.hocuspocus.documents.get(room)
  if (!document) throw new Error('document not loaded')
  return document.awareness
}

/** How many of `ids` have a state in `awareness`. */
function held(awareness: Awareness, ids: Iterable<number>): number {
  const states = awareness.getStates()
  let count = 0
  for (const id of ids) if (states.has(id)) count++
  return count
}

/** The most of `ids` that `awareness` ever held at once from now on (every applied update counted). */
function peakOf(awareness: Awareness, ids: Set<number>): { readonly peak: number; stop(): void } {
  let peak = held(awareness, ids)
  const onUpdate = () => {
    peak = Math.max(peak, held(awareness, ids))
  }
  awareness.on('update', onUpdate)
  return {
    get peak() {
      return peak
    },
    stop: () => awareness.off('update', onUpdate),
  }
}

/** The server's Connection of `userId` to a loaded document (to wait until its queued messages ran). */
function serverConnectionOf(room: string, userId: string) {
  const document = server.collab.hocuspocus.documents.get(room)
  const connection = document
    ?.getConnections()
    .find((c) => (c.context as { principal?: { user: { id: string } } }).principal?.user.id === userId)
  if (!connection) throw new Error('no connection of that user')
  return connection
}

describe('a forged name, agent badge or colour never reaches anyone else', () => {
  test("a non-member's overlay name, agent claim and CSS colour on a public document are replaced by what its principal says", async () => {
    const doc = await publicDocument('Public notes')
    const listener = await open(doc.room, alice.token)
    const attacker = await open(doc.room, mallory.token)
    attacker.provider.setAwarenessField('user', {
      name: OVERLAY_NAME,
      agent: false,
      color: OVERLAY_COLOR,
      role: 'owner',
      section: 'sign in again at evil.example',
    })
    const seen = await eventually(() => {
      const state = listener.provider.awareness!.getStates().get(attacker.doc.clientID)
      expect(state?.user).toBeDefined()
      return state!.user as Record<string, unknown>
    })
    // mallory connects with an API token: a program acting for her, shown as her agent, in a colour of
    // the server's presence palette.
    expect(seen).toEqual({
      name: "mallory's agent",
      agent: true,
      color: expect.any(String),
      key: expect.stringMatching(/^[0-9a-f]{16}$/),
    })
    expect(PRESENCE_COLORS).toContain(seen.color as string)
    expect(JSON.stringify([...listener.provider.awareness!.getStates().values()])).not.toContain(
      'evil.example',
    )
    // The server holds the same truthful state (what it sends anyone who connects later).
    expect(serverAwareness(doc.room).getStates().get(attacker.doc.clientID)?.user).toEqual(seen)
  })

  test('a #rrggbb colour the client chose is replaced by the server’s, as its name is', async () => {
    const doc = await publicDocument('Chosen colour')
    const listener = await open(doc.room, alice.token)
    const editor = await open(doc.room, bob.token)
    editor.provider.setAwarenessField('user', { name: 'Alice', color: '#f783ac' })
    const user = await eventually(() => {
      const seen = listener.provider.awareness!.getStates().get(editor.doc.clientID)?.user
      expect(seen?.name).toBe("bob's agent")
      return seen
    })
    expect(user.agent).toBe(true)
    expect(user.color).not.toBe('#f783ac')
    expect(PRESENCE_COLORS).toContain(user.color)
  })

  test('a person signed in by the browser is named by their name, never as an agent (presenceUserOf)', () => {
    const user = { ...alice.user, name: 'Alice Liddell' }
    const person = { user, tokenId: `${SESSION_PRINCIPAL_PREFIX}s1`, scopes: ['read', 'write'] as const }
    expect(presenceUserOf(person, '#1f6feb', '0123456789abcdef')).toEqual({
      name: 'Alice Liddell',
      agent: false,
      color: '#1f6feb',
      key: '0123456789abcdef',
    })
    const long = presenceUserOf(
      { ...person, user: { ...user, name: 'A'.repeat(500) } },
      '#000000',
      '0123456789abcdef',
    )
    expect(long.name.length).toBe(MAX_PRESENCE_NAME_CHARS)
  })
})

describe('a CSS url() colour never reaches another client', () => {
  test('in awareness: the listener gets a #rrggbb colour, never the url()', async () => {
    const doc = await publicDocument('Tracking pixel')
    const listener = await open(doc.room, alice.token)
    const attacker = await open(doc.room, mallory.token)
    attacker.provider.setAwarenessField('user', { name: 'm', color: TRACKING_COLOR })
    // Also in states of other clientIds of the same message, and in fields beside `user`.
    const extra = sendFreshStates(attacker, 1, { user: { color: TRACKING_COLOR }, cursor: null })
    await eventually(() => {
      const states = listener.provider.awareness!.getStates()
      expect(isHexColor(states.get(attacker.doc.clientID)?.user?.color)).toBe(true)
      expect(isHexColor(states.get(extra[0]!)?.user?.color)).toBe(true)
    })
    expect(JSON.stringify([...listener.provider.awareness!.getStates().values()])).not.toContain('url(')
    expect(JSON.stringify([...serverAwareness(doc.room).getStates().values()])).not.toContain('url(')
  })

  test('in a highlight mark: an editor’s update with a url() colour is refused with the reason, and nobody gets the mark', async () => {
    const doc = await publicDocument('Highlighted')
    const listener = await open(doc.room, alice.token)
    const editor = await open(doc.room, bob.token)
    const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
    editor.doc.transact(() => {
      const paragraph = new Y.XmlElement('paragraph')
      paragraph.insert(0, [new Y.XmlText('marked')])
      fragment.insert(fragment.length, [paragraph])
      ;(paragraph.get(0) as Y.XmlText).format(0, 6, { highlight: { color: TRACKING_COLOR } })
    })
    await eventually(() =>
      expect(editor.closes.join('\n')).toContain('update refused: mark "highlight" attribute "color"'),
    )
    const live = server.collab.hocuspocus.documents.get(doc.room)!
    expect(JSON.stringify(live.getXmlFragment(FRAGMENT_NAME).toJSON())).not.toContain('url(')
    expect(JSON.stringify(listener.doc.getXmlFragment(FRAGMENT_NAME).toJSON())).not.toContain('url(')
  })
})

describe('clientIds per connection are capped', () => {
  test(`a viewer cycling a fresh clientId per message is refused after ${CAP}; the listener and the server never hold more than ${CAP} of its states`, async () => {
    const doc = await publicDocument('Cycling ids')
    const listener = await open(doc.room, alice.token)
    const attacker = await open(doc.room, mallory.token)
    attacker.provider.setAwarenessField('user', { name: 'm' })
    const ids = new Set<number>([attacker.doc.clientID])
    const onListener = peakOf(listener.provider.awareness!, ids)
    const onServer = peakOf(serverAwareness(doc.room), ids)
    const connection = serverConnectionOf(doc.room, mallory.user.id)
    for (let i = 0; i < 40; i++)
      for (const id of sendFreshStates(attacker, 1, { user: { name: `x${i}` } })) ids.add(id)
    await eventually(() =>
      expect(attacker.closes.join('\n')).toContain(
        `awareness refused: states for ${CAP + 1} client ids on one connection; the limit is ${CAP}`,
      ),
    )
    await connection.waitForPendingMessages()
    // Every id up to the cap was applied (the cap does not refuse an ordinary editor), none after it.
    expect(onServer.peak).toBe(CAP)
    expect(onListener.peak).toBeLessThanOrEqual(CAP)
    await eventually(() => expect(held(serverAwareness(doc.room), ids)).toBe(0))
    await eventually(() => expect(held(listener.provider.awareness!, ids)).toBe(0))
    onListener.stop()
    onServer.stop()
  })

  test('four viewer sockets sending 7 states of ~7.9 KB with fresh clientIds per message (the red team’s attack): the server’s awareness stays within the cap per connection', async () => {
    const doc = await publicDocument('Awareness flood')
    const listener = await open(doc.room, alice.token)
    const awareness = serverAwareness(doc.room)
    const baseline = awareness.getStates().size
    const ids = new Set<number>()
    const onServer = peakOf(awareness, ids)
    const onListener = peakOf(listener.provider.awareness!, ids)
    const padding = 'p'.repeat(MAX_AWARENESS_STATE_BYTES - 300)
    const attackers = await Promise.all([0, 1, 2, 3].map(() => open(doc.room, mallory.token)))
    const connections = server.collab.hocuspocus.documents.get(doc.room)!.getConnections()
    for (const attacker of attackers) {
      ids.add(attacker.doc.clientID)
      for (let round = 0; round < 25; round++)
        for (const id of sendFreshStates(attacker, 7, { user: { name: 'flood' }, padding })) ids.add(id)
    }
    for (const attacker of attackers)
      await eventually(() => expect(attacker.closes.join('\n')).toContain('awareness refused'))
    for (const connection of connections) await connection.waitForPendingMessages()
    // Each attacker's first message already carries 7 new ids (with its own, 8 > 4): refused whole.
    expect(onServer.peak).toBeLessThanOrEqual(attackers.length * CAP)
    expect(onListener.peak).toBeLessThanOrEqual(attackers.length * CAP)
    await eventually(() => expect(awareness.getStates().size).toBe(baseline))
    expect(held(listener.provider.awareness!, ids)).toBe(0)
    onServer.stop()
    onListener.stop()
  })
})

describe('a closed connection leaves no state behind', () => {
  test('after a viewer closes, none of its states (its own and the others it introduced) stay on the server or on a listener', async () => {
    const doc = await publicDocument('Leaving')
    const listener = await open(doc.room, alice.token)
    const attacker = await open(doc.room, mallory.token)
    attacker.provider.setAwarenessField('user', { name: 'm' })
    const ids = [attacker.doc.clientID, ...sendFreshStates(attacker, 2, { user: { name: 'extra' } })]
    await eventually(() => expect(held(listener.provider.awareness!, ids)).toBe(3))
    expect(held(serverAwareness(doc.room), ids)).toBe(3)
    attacker.destroy()
    await eventually(() => expect(held(serverAwareness(doc.room), ids)).toBe(0))
    await eventually(() => expect(held(listener.provider.awareness!, ids)).toBe(0))
  })

  test('messages a refused connection had already sent add nothing after it is closed', async () => {
    const doc = await publicDocument('After the refusal')
    const listener = await open(doc.room, alice.token)
    const attacker = await open(doc.room, mallory.token)
    const connection = serverConnectionOf(doc.room, mallory.user.id)
    const ids = new Set<number>([attacker.doc.clientID])
    const onServer = peakOf(serverAwareness(doc.room), ids)
    // One message over the cap (refused), then 30 more, each with one fresh id, queued behind it.
    for (const id of sendFreshStates(attacker, CAP + 1, { user: { name: 'over' } })) ids.add(id)
    for (let i = 0; i < 30; i++)
      for (const id of sendFreshStates(attacker, 1, { user: { name: 'late' } })) ids.add(id)
    await eventually(() => expect(attacker.closes.join('\n')).toContain('awareness refused'))
    await connection.waitForPendingMessages()
    // Hocuspocus goes on handling a closed connection's queued messages, and no longer tracks the states
    // they add for removal: without the guard they stayed until the 30 s awareness timeout.
    expect(onServer.peak).toBe(0)
    expect(held(serverAwareness(doc.room), ids)).toBe(0)
    expect(held(listener.provider.awareness!, ids)).toBe(0)
    onServer.stop()
  })
})
