/**
 * The socket gate's bookkeeping (collab/socket-gate.ts) with stand-in sockets: what waits per address, what
 * the ceiling counts, and which sockets the authentication timeout closes. The real server's side is
 * reliability/red-team-sockets.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { MAX_PENDING_SOCKETS_PER_ADDRESS } from '../collab/limits.ts'
import {
  AUTH_TIMEOUT_CLOSE_CODE,
  authTimeoutReason,
  defaultMaxSockets,
  FULL_REFUSAL,
  type GatedSocket,
  PENDING_REFUSAL,
  SocketGate,
} from '../collab/socket-gate.ts'

type Fake = GatedSocket & { closes: Array<[number, string]> }
const fake = (): Fake => {
  const closes: Array<[number, string]> = []
  return { closes, close: (code, reason) => closes.push([code, reason]) }
}

function gate(options: { authTimeoutMs?: number; maxSockets?: number } = {}) {
  const authenticated = new Set<GatedSocket>()
  const refused: string[] = []
  const g = new SocketGate({
    authTimeoutMs: options.authTimeoutMs ?? 60_000,
    maxSockets: options.maxSockets ?? 10_000,
    authenticated: (socket) => authenticated.has(socket),
    onRefused: (kind) => refused.push(kind),
  })
  return { g, authenticated, refused }
}

describe('socket gate', () => {
  test('an address with MAX_PENDING_SOCKETS_PER_ADDRESS sockets waiting is refused; another address is not', () => {
    const { g, refused } = gate()
    for (let i = 0; i < MAX_PENDING_SOCKETS_PER_ADDRESS; i++) {
      expect(g.refusal('10.0.0.1')).toBeUndefined()
      g.opened(fake(), '10.0.0.1')
    }
    expect(g.refusal('10.0.0.1')).toBe(PENDING_REFUSAL)
    expect(g.refusal('10.0.0.2')).toBeUndefined()
    expect(refused).toEqual(['sockets_pending'])
    expect(g.counts()).toEqual({
      open: MAX_PENDING_SOCKETS_PER_ADDRESS,
      pending: MAX_PENDING_SOCKETS_PER_ADDRESS,
    })
  })

  test('a waiting socket that authenticated, or closed, makes room for the next one of its address', () => {
    const { g, authenticated } = gate()
    const sockets = Array.from({ length: MAX_PENDING_SOCKETS_PER_ADDRESS }, () => fake())
    for (const socket of sockets) g.opened(socket, 'a')
    expect(g.refusal('a')).toBe(PENDING_REFUSAL)
    authenticated.add(sockets[0]!)
    expect(g.refusal('a')).toBeUndefined()
    g.opened(fake(), 'a')
    expect(g.refusal('a')).toBe(PENDING_REFUSAL)
    g.closed(sockets[1]!)
    expect(g.refusal('a')).toBeUndefined()
    // Open: every socket counts until it closes, authenticated or not.
    expect(g.counts().open).toBe(MAX_PENDING_SOCKETS_PER_ADDRESS)
  })

  test('at maxSockets open every upgrade is refused, whatever its address; a close lets the next in', () => {
    const { g, authenticated, refused } = gate({ maxSockets: 3 })
    const sockets = ['a', 'b', 'c'].map((address) => {
      const socket = fake()
      g.opened(socket, address)
      authenticated.add(socket)
      return socket
    })
    expect(g.refusal('d')).toBe(FULL_REFUSAL)
    expect(refused).toEqual(['sockets_full'])
    g.closed(sockets[0]!)
    expect(g.refusal('d')).toBeUndefined()
  })

  test('a socket that authenticated nothing within the timeout is closed with 4408 and the reason; one that did is kept', async () => {
    const { g, authenticated, refused } = gate({ authTimeoutMs: 100 })
    const silent = fake()
    const signedIn = fake()
    const gone = fake()
    g.opened(silent, 'a')
    g.opened(signedIn, 'a')
    g.opened(gone, 'a')
    authenticated.add(signedIn)
    g.closed(gone)
    await Bun.sleep(250)
    expect(silent.closes).toEqual([[AUTH_TIMEOUT_CLOSE_CODE, authTimeoutReason(100)]])
    expect(signedIn.closes).toEqual([])
    expect(gone.closes).toEqual([])
    expect(refused).toEqual(['auth_timeout'])
    expect(g.counts().pending).toBe(0)
  })

  test('the default ceiling keeps FILE_DESCRIPTORS_KEPT of the file limit, and never goes under 64', () => {
    expect(defaultMaxSockets(20_000)).toBe(20_000 - 2_048)
    expect(defaultMaxSockets(1_024)).toBe(64)
    expect(defaultMaxSockets(undefined)).toBeGreaterThan(0)
  })
})
