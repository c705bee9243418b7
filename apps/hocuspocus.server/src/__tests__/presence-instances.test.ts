/**
 * Presence across instances (issue 28's carets, on two servers through Redis): a person who closes their
 * page on instance A, or sets their state to null, is gone from the pages on instance B at once. Hocuspocus
 * 4.7 hands a peer's awareness message to a scratch Awareness that drops null states, so before, B's people
 * kept seeing the caret until it timed out ~30 s later (measured 30-33 s here); RedisSync now applies the
 * removals beside it. Failure caught: the caret still on B when `eventually` gives up (10 s).
 */
import { describe, expect, test } from 'bun:test'
import { editorsOnBoth, eventually, TWO_INSTANCES, useTwoTestServers } from '@collab/test-support/server'

describe.skipIf(!TWO_INSTANCES)('presence across instances (postgres)', () => {
  const pair = useTwoTestServers()

  test('a person leaving on A, by a null state or by closing, is gone on B', async () => {
    const { onA, onB } = await editorsOnBoth(pair.a, pair.b, 'pat', 'Presence across')
    const seenOnB = () => onB.provider.awareness!.getStates().has(onA.doc.clientID)
    onA.provider.setAwarenessField('cursor', { at: 1 })
    await eventually(() => expect(seenOnB()).toBe(true))

    onA.provider.awareness!.setLocalState(null)
    await eventually(() => expect(seenOnB()).toBe(false))

    onA.provider.awareness!.setLocalState({ cursor: { at: 2 } })
    await eventually(() => expect(seenOnB()).toBe(true))
    onA.destroy()
    await eventually(() => expect(seenOnB()).toBe(false))
    onB.destroy()
  })
})
