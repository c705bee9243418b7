/**
 * The states a server wrote a moment ago (documents/recent-states.ts), kept so a restore's or revert's
 * next steps do not read them back: a snapshot is given only at the row version its write committed, a
 * version by its id; each caller gets a copy of its own (callers hand them to the documents' worker,
 * which detaches them); entries go after RECENT_STATE_MS or past RECENT_STATE_BYTES; small states are
 * never kept. No database: the clock is the test's.
 */
import { describe, expect, test } from 'bun:test'
import { RECENT_STATE_BYTES, RECENT_STATE_MS, RecentStates } from '../documents/recent-states.ts'

const state = (bytes: number, fill = 7) => new Uint8Array(bytes).fill(fill)

describe('recent states', () => {
  test('a snapshot only at the row version written, a version by its id, each a copy of its own', () => {
    const recent = new RecentStates(100)
    const written = state(1000)
    recent.written('doc', '42', written, 5n)
    written.fill(0) // the caller's array moves on (given to the worker): the kept one does not
    expect(recent.snapshot('doc', '43')).toBeNull()
    expect(recent.snapshot('other', '42')).toBeNull()
    const first = recent.snapshot('doc', '42')
    expect(first?.[0]).toBe(7)
    first?.fill(1)
    expect(recent.snapshot('doc', '42')?.[0]).toBe(7)
    expect(recent.version(5n)?.byteLength).toBe(1000)
    expect(recent.version(6n)).toBeNull()
  })

  test('a later write of the snapshot replaces it; small states are not kept', () => {
    const recent = new RecentStates(100)
    recent.written('doc', '1', state(1000, 1))
    recent.written('doc', '2', state(50, 2))
    expect(recent.snapshot('doc', '1')).toBeNull()
    expect(recent.snapshot('doc', '2')).toBeNull()
  })

  test('entries go after RECENT_STATE_MS, and the oldest past RECENT_STATE_BYTES in all', () => {
    let now = 0
    const recent = new RecentStates(100, () => now)
    recent.written('a', '1', state(1000), 1n)
    now = RECENT_STATE_MS - 1
    expect(recent.snapshot('a', '1')).not.toBeNull()
    now = RECENT_STATE_MS + 1
    expect(recent.snapshot('a', '1')).toBeNull()
    expect(recent.version(1n)).toBeNull()
    const big = Math.floor(RECENT_STATE_BYTES / 2) + 1
    recent.written('b', '1', state(big), 2n)
    now += 1
    recent.written('c', '1', state(big), 3n)
    expect(recent.snapshot('b', '1')).toBeNull()
    expect(recent.version(2n)).toBeNull()
    expect(recent.snapshot('c', '1')?.byteLength).toBe(big)
    expect(recent.version(3n)?.byteLength).toBe(big)
  })
  test('an idle server lets its kept states go once due, with no call to prune them', async () => {
    const recent = new RecentStates(100, Date.now, 30)
    recent.written('doc', '1', state(1000), 1n)
    expect(recent.heldBytes).toBe(1000)
    // Before, they were pruned only by the next write or read: an idle server held them for good.
    for (let waited = 0; recent.heldBytes > 0 && waited < 2000; waited += 10) await Bun.sleep(10)
    expect(recent.heldBytes).toBe(0)
  })
})
