/**
 * The registry that lets a notifications/cancelled (a POST of its own on the stateless endpoint) stop the
 * request it names: only the same caller's request with that id, also when the cancel overtakes its
 * request (then within CANCEL_MEMORY_MS only), and nothing once the request's POST has been answered.
 */
import { describe, expect, test } from 'bun:test'
import { CANCEL_MEMORY_MS, InFlightRequests } from '../http/in-flight.ts'

const request = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x' } })
const cancel = (requestId: number | string) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId },
})

describe('in-flight requests over stateless HTTP', () => {
  test("a cancel stops its caller's running request with that id, not another caller's or id", () => {
    const calls = new InFlightRequests()
    const mine = new AbortController()
    const theirs = new AbortController()
    const other = new AbortController()
    calls.track('token-a', request(7), mine)
    calls.track('token-b', request(7), theirs)
    calls.track('token-a', request('7'), other)
    calls.track('token-b', cancel(8), new AbortController())
    calls.track('token-a', cancel(7), new AbortController())
    expect(mine.signal.aborted).toBe(true)
    expect(theirs.signal.aborted).toBe(false)
    expect(other.signal.aborted).toBe(false) // the string id "7" is another request
  })

  test('a cancel that overtakes its request stops it on arrival, within CANCEL_MEMORY_MS only', () => {
    let now = 1_000_000
    const calls = new InFlightRequests(() => now)
    calls.track('token-a', cancel(3), new AbortController())
    const overtaken = new AbortController()
    calls.track('token-a', request(3), overtaken)
    expect(overtaken.signal.aborted).toBe(true)

    calls.track('token-a', cancel(4), new AbortController())
    now += CANCEL_MEMORY_MS + 1
    const late = new AbortController()
    calls.track('token-a', request(4), late)
    expect(late.signal.aborted).toBe(false)
  })

  test('once its POST is answered a request is forgotten: a cancel then stops nothing', () => {
    const calls = new InFlightRequests()
    const done = new AbortController()
    const release = calls.track('token-a', [request(1), request(2)], done)
    expect(calls.size).toBe(2)
    release()
    expect(calls.size).toBe(0)
    calls.track('token-a', cancel(1), new AbortController())
    expect(done.signal.aborted).toBe(false)
  })
})
