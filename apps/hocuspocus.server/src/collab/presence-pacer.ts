/**
 * Presence fanout, per user: what the server sends to everyone because one user's connections changed
 * their presence. An awareness message is small, and Hocuspocus sends what it changes to every connection
 * of the document: found by the red team (issue 24), 16 sockets of one user sending four states of ~7 KB
 * seventy times a second each, inside every per-socket limit, to a document 40 others had open held
 * everyone's /health at p99 235-358 ms (floor 7) and grew the server by 130-180 MiB of queued sends.
 *
 * Each change is priced at its states' JSON bytes times the document's connections (what goes out) and
 * drawn from the user's share (PRESENCE_FANOUT_BYTES_PER_SECOND). While the share lasts, presence is
 * applied at once, as before. Once it is owed, a connection's states are not applied but kept, the newest
 * per clientId (presence is a last-state-wins value: a caret's earlier places are of no use to anyone),
 * and applied when the share has refilled, one connection at a time, in the order they waited. So a
 * user who moves their caret faster than the share allows is shown late, never wrongly or not at all, and
 * what the server holds for them is one state per clientId (MAX_AWARENESS_CLIENTS_PER_CONNECTION per
 * connection), however fast they send. Removals (a client leaving presence) are never held: they are
 * small, and a held state would bring the client back.
 *
 * A message that comes while its user's states wait anyway (`holding`) is kept as it came, its states'
 * JSON bytes not decoded (`hold`), and handed to Hocuspocus without them (awareness-guard.ts): a flood
 * past the share costs a read of its entries' lengths per message, not Hocuspocus's scratch document, a
 * decode, two parses and two encodes. What waits is parsed and checked (`prepare`, the guard's checks)
 * only when it is applied.
 */
import type { Connection, Document } from '@hocuspocus/server'
import { applyAwarenessUpdate } from 'y-protocols/awareness'
import { varUint } from '../documents/worker/frames.ts'
import type { Metrics } from '../metrics.ts'
import { UserShares } from '../user-shares.ts'
import { PRESENCE_FANOUT_BYTE_BURST, PRESENCE_FANOUT_BYTES_PER_SECOND } from './limits.ts'

/** One client's presence as a connection sent it: its clock (from the message), state, and JSON size. */
export type PresenceState = { clock: number; state: Record<string, unknown>; bytes: number }

/** One client's presence as its message carried it: its clock and the state's JSON bytes, not parsed. */
export type RawPresence = { clock: number; json: Uint8Array }

/** What waits for a client: a checked state, or a message's text not yet parsed. */
export type WaitingPresence = PresenceState | RawPresence

type Queue = { connections: Set<Connection>; timer?: ReturnType<typeof setTimeout> }

export class PresencePacer {
  private readonly shares = new UserShares(PRESENCE_FANOUT_BYTES_PER_SECOND, PRESENCE_FANOUT_BYTE_BURST)
  /** Per connection, the newest state of each of its clientIds that waits for its user's share. */
  private readonly waiting = new WeakMap<Connection, Map<number, WaitingPresence>>()
  /** Per user, their connections with states waiting, in the order they began to wait. */
  private readonly queues = new Map<string, Queue>()

  constructor(
    private readonly deps: {
      metrics: Metrics
      /** Whether a connection may still set presence (open, in its document, not refused). */
      live(connection: Connection): boolean
      /**
       * What waits, checked and ready to apply (a raw state parsed, `user` the server's); undefined when
       * the connection was refused for it (nothing of it is applied).
       */
      prepare(
        connection: Connection,
        states: Map<number, WaitingPresence>,
      ): Map<number, PresenceState> | undefined
    },
  ) {}

  /**
   * Whether `states` (a connection's message, already checked) may be applied now; drawn from the user's
   * share when so. Otherwise they are kept, replacing what the connection had waiting for the same
   * clientIds, and applied once the share allows (`states` should then be cleared by the caller).
   */
  admit(connection: Connection, userId: string, states: Map<number, PresenceState>): boolean {
    if (states.size === 0) return true
    if (!this.holding(connection, userId)) {
      this.shares.spend(userId, this.price(connection.document, states))
      return true
    }
    this.hold(connection, userId, states)
    return false
  }

  /** Whether a change of the connection's presence would wait now (its user's share is owed, or theirs wait). */
  holding(connection: Connection, userId: string): boolean {
    return this.waiting.has(connection) || this.shares.owedMs(userId) > 0 || this.queues.has(userId)
  }

  /** Keeps `states` to apply once the user's share allows, replacing what waited for the same clientIds. */
  hold(connection: Connection, userId: string, states: Map<number, WaitingPresence>): void {
    if (states.size === 0) return
    const waiting = this.waiting.get(connection)
    if (waiting) for (const [clientId, state] of states) waiting.set(clientId, state)
    else this.waiting.set(connection, new Map(states))
    this.deps.metrics.editorPaced.inc({ by: 'presence' })
    let queue = this.queues.get(userId)
    if (!queue) {
      queue = { connections: new Set() }
      this.queues.set(userId, queue)
    }
    queue.connections.add(connection)
    this.schedule(userId, queue)
  }

  /** The connection's clients that left presence: what they had waiting is dropped. */
  forget(connection: Connection, clientIds: Iterable<number>): void {
    const waiting = this.waiting.get(connection)
    if (!waiting) return
    for (const clientId of clientIds) waiting.delete(clientId)
  }

  /** For tests: how many states wait for a user's share, across their connections. */
  waitingStates(userId: string): number {
    let count = 0
    for (const connection of this.queues.get(userId)?.connections ?? [])
      count += this.waiting.get(connection)?.size ?? 0
    return count
  }

  /** What a change sends: its states' bytes to every connection of the document. */
  private price(document: Document, states: Map<number, PresenceState>): number {
    let bytes = 0
    for (const { bytes: size } of states.values()) bytes += size
    return bytes * Math.max(1, document.getConnectionsCount())
  }

  private schedule(userId: string, queue: Queue): void {
    if (queue.timer) return
    // At least a millisecond, so a share just refilled is not spent within the turn that owed it.
    const wait = Math.max(1, Math.ceil(this.shares.owedMs(userId)))
    queue.timer = setTimeout(() => {
      queue.timer = undefined
      this.release(userId, queue)
    }, wait)
    queue.timer.unref?.()
  }

  /** Applies what waits, a connection at a time, while the user's share lasts; waits again when not. */
  private release(userId: string, queue: Queue): void {
    for (const connection of queue.connections) {
      if (this.shares.owedMs(userId) > 0) {
        this.schedule(userId, queue)
        return
      }
      queue.connections.delete(connection)
      const waiting = this.waiting.get(connection)
      this.waiting.delete(connection)
      if (!waiting || waiting.size === 0 || !this.deps.live(connection)) continue
      const states = this.deps.prepare(connection, waiting)
      if (!states || states.size === 0) continue
      this.shares.spend(userId, this.price(connection.document, states))
      applyAwarenessUpdate(connection.document.awareness, encodeStates(states), {
        source: 'connection',
        connection,
      })
    }
    this.queues.delete(userId)
  }
}

/** An awareness update (y-protocols' encoding) carrying `states` with their clocks. */
function encodeStates(states: Map<number, PresenceState>): Uint8Array {
  const bytes: number[] = varUint(states.size)
  for (const [clientId, { clock, state }] of states) {
    const json = new TextEncoder().encode(JSON.stringify(state))
    bytes.push(...varUint(clientId), ...varUint(clock), ...varUint(json.length))
    for (const byte of json) bytes.push(byte)
  }
  return Uint8Array.from(bytes)
}
