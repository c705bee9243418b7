/**
 * Presence colours are the server's (issue 28): two people got nearly the same purple (hues 283 and 294
 * of a hash), and each page chose its own colour. Real providers on a real server: everyone present in a
 * document gets a colour of PRESENCE_COLORS no one else there holds, even when their own colours
 * (colorOf of their user ids) are the same; a colour the client claims is not kept; one person's two
 * connections share one colour; and each connection is told the presence it was given.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { colorOf, PRESENCE_COLORS } from '@collab/doc-schema'
import type { TestProvider } from '@collab/test-support/provider'
import { eventually, useProviders, userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { PresenceNotice } from '../collab/awareness-guard.ts'

type Made = Awaited<ReturnType<typeof userWithToken>>

const share = useSharedServer()
const provider = useProviders(() => share.server.url)

/** A provider that keeps the presence notices the server sends it. */
async function open(room: string, token: string) {
  const notices: PresenceNotice[] = []
  const p = await provider(room, token, (p) =>
    p.provider.on('stateless', ({ payload }: { payload: string }) => {
      const parsed = JSON.parse(payload) as { type?: string }
      if (parsed.type === 'presence') notices.push(parsed as PresenceNotice)
    }),
  )
  return { ...p, notices }
}

/** The awareness states a provider sees. */
const states = (p: TestProvider) => p.provider.awareness!.getStates()

describe('presence colours', () => {
  let first: Made
  let second: Made
  let owner: Made
  let room: string
  beforeAll(async () => {
    owner = await userWithToken(share.server, share.handle('owner'))
    // Two users whose own colours are the same: made until the palette's hash puts two together.
    const seen = new Map<string, Made>()
    for (let i = 0; i < 40; i++) {
      const made = await userWithToken(share.server, share.handle(`person${i}`))
      const twin = seen.get(colorOf(made.user.id))
      if (twin) {
        first = twin
        second = made
        break
      }
      seen.set(colorOf(made.user.id), made)
    }
    if (!second) throw new Error('no two users with the same colour in 40: the palette hash is not uniform?')
    const created = await share.server.services.documents.create(owner.user.id, {
      title: 'Colours',
      isPrivate: false,
    })
    if (created.kind === 'error') throw new Error(created.message)
    room = created.value.room
  }, 60_000)

  test('two people whose own colour is the same are drawn in different colours; what they claim is not kept', async () => {
    expect(colorOf(first.user.id)).toBe(colorOf(second.user.id))
    const listener = await open(room, owner.token)
    const a = await open(room, first.token)
    const b = await open(room, second.token)
    a.provider.setAwarenessField('user', { name: 'A', color: '#ffffff' })
    b.provider.setAwarenessField('user', { name: 'B', color: '#ffffff' })
    const [colorA, colorB] = await eventually(() => {
      const states = listener.provider.awareness!.getStates()
      const pair = [states.get(a.doc.clientID)?.user?.color, states.get(b.doc.clientID)?.user?.color]
      expect(pair.every((c) => typeof c === 'string')).toBe(true)
      return pair as [string, string]
    })
    expect(colorA).not.toBe(colorB)
    for (const color of [colorA, colorB]) expect(PRESENCE_COLORS).toContain(color)
    // Each connection is told what the others see of it.
    await eventually(() => {
      expect(a.notices.at(-1)?.user).toEqual({
        name: `${first.user.handle}'s agent`,
        agent: true,
        color: colorA,
        key: states(listener).get(a.doc.clientID)?.user?.key,
      })
      expect(b.notices.at(-1)?.user.key).toBe(states(listener).get(b.doc.clientID)?.user?.key)
      expect(b.notices.at(-1)?.user.color).toBe(colorB)
    })
  })

  test("one person's second connection gets the colour of their first", async () => {
    const created = await share.server.services.documents.create(owner.user.id, {
      title: 'Tabs',
      isPrivate: false,
    })
    if (created.kind === 'error') throw new Error(created.message)
    const listener = await open(created.value.room, owner.token)
    const tab1 = await open(created.value.room, first.token)
    const tab2 = await open(created.value.room, first.token)
    tab1.provider.setAwarenessField('user', {})
    tab2.provider.setAwarenessField('user', {})
    const colorOfClient = (id: number) => listener.provider.awareness!.getStates().get(id)?.user?.color
    await eventually(() => {
      expect(colorOfClient(tab1.doc.clientID)).toBeDefined()
      expect(colorOfClient(tab2.doc.clientID)).toBe(colorOfClient(tab1.doc.clientID))
    })
  })
  test("the presence key is the server's: what a client claims is not kept; one key per identity, its tabs share it", async () => {
    const created = await share.server.services.documents.create(owner.user.id, {
      title: 'Keys',
      isPrivate: false,
    })
    if (created.kind === 'error') throw new Error(created.message)
    const room = created.value.room
    const listener = await open(room, owner.token)
    const forger = await open(room, first.token)
    const tab = await open(room, first.token)
    const other = await open(room, second.token)
    // The smallest key there is, in `user` and beside it: a forger would keep any clashing colour.
    const forged = '0000000000000000'
    forger.provider.setAwarenessField('user', { name: 'F', color: '#c62828', key: forged })
    forger.provider.setAwarenessField('key', forged)
    tab.provider.setAwarenessField('user', {})
    other.provider.setAwarenessField('user', {})
    const keyOf = (p: TestProvider) => states(listener).get(p.doc.clientID)?.user?.key as string | undefined
    await eventually(() => {
      for (const p of [forger, tab, other]) expect(keyOf(p)).toMatch(/^[0-9a-f]{16}$/)
    })
    expect(keyOf(forger)).not.toBe(forged)
    expect(keyOf(tab)).toBe(keyOf(forger))
    expect(keyOf(other)).not.toBe(keyOf(forger))
    await eventually(() => expect(forger.notices.at(-1)?.user.key).toBe(keyOf(forger)))
  })
})
