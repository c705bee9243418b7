/**
 * A person who leaves a document's presence (their page sets its awareness state to null, as a provider
 * does when it is destroyed or a tab hides it) is gone for everyone at once, not when their socket closes
 * or their state times out 30 s later. Hocuspocus 4.7 handles an awareness message through a scratch
 * Awareness whose Map drops a null state, so the removal never reached the document; the awareness guard
 * now removes the connection's own clientIds itself. Real providers on a real server. Failure caught: the
 * listener still seeing the state after the leaver said it left (the test times out waiting).
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { eventually, useProviders, userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { RunningServer } from '../server.ts'

let server: RunningServer
let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
const open = useProviders(() => server.url)

describe('leaving presence', () => {
  let room: string
  let ownerToken: string
  let guestToken: string
  beforeAll(async () => {
    const owner = await userWithToken(server, handle('owner'))
    const guest = await userWithToken(server, handle('guest'))
    ownerToken = owner.token
    guestToken = guest.token
    const created = await server.services.documents.create(owner.user.id, {
      title: 'Leaving',
      isPrivate: false,
    })
    if (created.kind === 'error') throw new Error(created.message)
    room = created.value.room
  })

  test("a state set to null leaves everyone's view while the socket stays open", async () => {
    const listener = await open(room, ownerToken)
    const leaver = await open(room, guestToken)
    leaver.provider.setAwarenessField('cursor', { at: 1 })
    await eventually(() =>
      expect(listener.provider.awareness!.getStates().has(leaver.doc.clientID)).toBe(true),
    )

    leaver.provider.awareness!.setLocalState(null)
    await eventually(() =>
      expect(listener.provider.awareness!.getStates().has(leaver.doc.clientID)).toBe(false),
    )
    // Still connected: the removal came from the message, not from the socket closing.
    expect(leaver.provider.isSynced).toBe(true)
    expect(server.collab.hocuspocus.documents.get(room)?.awareness.getStates().has(leaver.doc.clientID)).toBe(
      false,
    )

    // Coming back works: the clientId is still the connection's own (a null state takes no fields: a
    // whole state is set again).
    leaver.provider.awareness!.setLocalState({ cursor: { at: 2 } })
    await eventually(() =>
      expect(listener.provider.awareness!.getStates().get(leaver.doc.clientID)?.cursor).toEqual({ at: 2 }),
    )
  })

  test("a connection cannot remove another's state by sending null for its clientId", async () => {
    const listener = await open(room, ownerToken)
    const present = await open(room, ownerToken)
    const forger = await open(room, guestToken)
    present.provider.setAwarenessField('cursor', { at: 3 })
    forger.provider.setAwarenessField('cursor', { at: 4 })
    await eventually(() => {
      const states = listener.provider.awareness!.getStates()
      expect(states.has(present.doc.clientID) && states.has(forger.doc.clientID)).toBe(true)
    })
    // The forger's Awareness learns the other's state from the server; removing it sends a null for it.
    const { removeAwarenessStates } = await import('y-protocols/awareness')
    removeAwarenessStates(forger.provider.awareness!, [present.doc.clientID], 'forged')
    forger.provider.setAwarenessField('cursor', { at: 5 }) // a later message of the forger's, handled after
    await eventually(() =>
      expect(listener.provider.awareness!.getStates().get(forger.doc.clientID)?.cursor).toEqual({ at: 5 }),
    )
    expect(listener.provider.awareness!.getStates().has(present.doc.clientID)).toBe(true)
  })
})
