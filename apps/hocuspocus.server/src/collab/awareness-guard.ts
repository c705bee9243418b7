/**
 * The edge for awareness (carets, names, colours): what one connection may put in everyone's presence.
 * Found by the red team (issue 24): read-only viewers sending fresh clientIds in every message grew the
 * server by ~1 GB in 40 s (each listener held 6,328 fake states), and every page trusted `user.name`,
 * `user.agent` and `user.color` as sent, so a non-member of a public document drew a full-page "sign in
 * again" overlay on everyone's editor and made every viewer fetch a URL through a CSS `url()` colour.
 *
 * - Bounded: a message at most MAX_AWARENESS_MESSAGE_BYTES (checked with the other sizes in boundary.ts),
 *   at most MAX_AWARENESS_STATES_PER_MESSAGE states, each at most MAX_AWARENESS_STATE_BYTES of JSON; and at
 *   most MAX_AWARENESS_CLIENTS_PER_CONNECTION clientIds over a connection's life. Read-only viewers too.
 *   Over any of them, the connection to the document is closed with the reason and nothing of the message
 *   is applied.
 * - Truthful: `user` of every state a connection sends is the server's, from the connection's principal
 *   (presenceUserOf): the name, whether it is an agent, and a colour. Nothing the client put in `user` is
 *   kept, its colour neither. The colour is the principal's own (colorOf of the user id) unless another
 *   one present in the document holds it, then the next presence colour no one there holds (pickColor):
 *   one colour per person (and one per person's agents) per document, in all their tabs, kept while they
 *   stay. Colours held by states of other instances (Redis) and the server's own (an agent's edit) count
 *   as held. The connection is told what it was given (a stateless `{"type":"presence","user":…}`), as
 *   its own state is never echoed back to it.
 * - Settled across instances: two instances can give one colour twice (each picks before the other's
 *   state reaches it through Redis). `user.key` is the identity's presence key (presenceKeyOf): opaque,
 *   the same on every instance and in every tab, written here like the rest of `user`, so no client can
 *   set or forge it. Every page settles a clash from those keys the same way (settleColors in
 *   @collab/doc-schema: the smallest key keeps the colour, the others take the next free one).
 * - Owned: a clientId belongs to the connection that first sent it; another connection's state for it, or
 *   one for the server's own clientId (an agent's presence), is dropped from the message. When a connection
 *   closes, every state it introduced goes, also those Hocuspocus does not track. A null state for one of its
 *   own clientIds (the client left presence) removes that state at once (see beforeHandleAwareness).
 *
 * Hocuspocus 4.7 decodes an awareness message into a scratch Awareness, runs `beforeHandleAwareness` on
 * the scratch's Map of states, re-encodes that Map and applies the result to the document's awareness,
 * which broadcasts it: changing the Map (states deleted, `user` replaced) changes what is applied and what
 * every other client receives (red-team-awareness.test.ts observes it through a second provider). The Map
 * also holds the scratch's own empty state (its clock 0 never applies); which clientIds the message really
 * carries is read from the raw message in `beforeHandleMessage`, before it is handled.
 */
import { createHash } from 'node:crypto'
import { pickColor } from '@collab/doc-schema'
import type {
  beforeHandleAwarenessPayload,
  beforeHandleMessagePayload,
  Connection,
  Document,
  Extension,
} from '@hocuspocus/server'
import { IncomingMessage, MessageType } from '@hocuspocus/server'
import { type Awareness, removeAwarenessStates } from 'y-protocols/awareness'
import { type Principal, SESSION_PRINCIPAL_PREFIX } from '../auth/tokens.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import type { ConnectionContext } from './context.ts'
import { EDITOR_REFUSED_CODE, EDITOR_TOO_LARGE_CODE } from './editor-message.ts'
import {
  MAX_AWARENESS_CLIENTS_PER_CONNECTION,
  MAX_AWARENESS_STATE_BYTES,
  MAX_AWARENESS_STATES_PER_MESSAGE,
  MAX_PRESENCE_NAME_CHARS,
} from './limits.ts'
import {
  PresencePacer,
  type PresenceState,
  type RawPresence,
  type WaitingPresence,
} from './presence-pacer.ts'

const UTF8 = new TextDecoder()

/** A WebSocket close reason holds at most 123 bytes. */
const MAX_REASON_CHARS = 120

/** What the server puts in `user` of every awareness state a connection sends. */
export type PresenceUser = { name: string; color: string; agent: boolean; key: string }

/**
 * The presence `user` of a connection's principal, in `color`, with `key` (presenceKeyOf). A browser's session principal is the
 * person, by their name (else handle); any other principal (an API token: an agent, a script, an editor
 * of one's own) is a program acting for the user, shown as their agent, as the MCP writer shows agents.
 */
export function presenceUserOf(principal: Principal, color: string, key: string): PresenceUser {
  const { user } = principal
  const person = isPerson(principal)
  const name = person ? (user.name ?? user.handle) : `${user.handle}'s agent`
  return { name: Array.from(name).slice(0, MAX_PRESENCE_NAME_CHARS).join(''), color, agent: !person, key }
}

const isPerson = (principal: Principal) => principal.tokenId.startsWith(SESSION_PRINCIPAL_PREFIX)

/** Who a colour belongs to in a document: the person, or the person's agents (all of them, one colour). */
const identityOf = (principal: Principal) =>
  `${isPerson(principal) ? 'person' : 'agent'}:${principal.user.id}`

/**
 * The presence key of an identity (identityOf) in a document (its room): 16 hex digits of a SHA-256 of
 * both, so every instance computes the same key and the key says nothing of the user id, nor links one
 * person's presence in two documents. Pages only compare keys (isPresenceKey, settleColors).
 */
export function presenceKeyOf(room: string, identity: string): string {
  return createHash('sha256').update(`presence-key\n${room}\n${identity}`).digest('hex').slice(0, 16)
}

/** What a connection is told about itself (a stateless message): the presence the others see. */
export type PresenceNotice = { type: 'presence'; user: PresenceUser }

/** A colour held in a document, and the connections holding it. */
type Held = { color: string; connections: Set<Connection> }

/** A client's entry in an awareness message: its clientId and clock (of its state, or of its leaving). */
export type ClientClock = { clientId: number; clock: number }

/** A client's state as the message carries it: its JSON's UTF-8 bytes (a view into the message), not decoded. */
export type ClientState = ClientClock & { json: Uint8Array }

/** `null` in UTF-8: a client's state when it left presence. */
const NULL_STATE = [0x6e, 0x75, 0x6c, 0x6c]
const isNull = (json: Uint8Array) => json.length === 4 && NULL_STATE.every((byte, i) => json[i] === byte)

/**
 * The clientIds an awareness message carries states for, with their clocks and their states' JSON bytes
 * (not decoded), and those it removes (a `null` state: the client left, e.g. `setLocalState(null)` as a page
 * closes); undefined for other messages. `countAt` is where the update's count of entries is in `message`
 * (one byte when `entries` is under 128). `message` is a whole Hocuspocus message (document name, type,
 * awareness update).
 */
export function awarenessClients(message: Uint8Array):
  | {
      name: string
      clients: ClientState[]
      removed: ClientClock[]
      entries: number
      countAt: number
    }
  | undefined {
  try {
    const incoming = new IncomingMessage(message)
    const name = incoming.readVarString()
    if (incoming.readVarUint() !== MessageType.Awareness) return undefined
    const update = incoming.readVarUint8Array()
    // The update's bytes end where the decoder is: its first (the count) is `length` before.
    const countAt = incoming.decoder.pos - update.length
    const entriesOf = new IncomingMessage(update)
    const entries = entriesOf.readVarUint()
    const clients: ClientState[] = []
    const removed: ClientClock[] = []
    // Bounded by the message size (boundary.ts); the states' JSON is neither decoded nor parsed here.
    for (let i = 0; i < entries; i++) {
      const clientId = entriesOf.readVarUint()
      const clock = entriesOf.readVarUint()
      const json = entriesOf.readVarUint8Array()
      if (!isNull(json)) clients.push({ clientId, clock, json })
      else removed.push({ clientId, clock })
    }
    return { name, clients, removed, entries, countAt }
  } catch {
    return undefined // Hocuspocus refuses what does not decode
  }
}

/**
 * Applies the removals of an awareness message to `awareness`, as y-protocols would have: a state goes when
 * the removal's clock is not older than the state's. Needed because Hocuspocus 4.7 handles every awareness
 * message (a connection's, or another instance's through Redis) through a scratch Awareness whose Map drops
 * a null state and re-encodes only what the Map holds: without this a person's leaving reached no one until
 * their socket closed here, or, from another instance, until the state timed out (30 s).
 */
export function applyRemovals(awareness: Awareness, removed: ClientClock[], origin: unknown): void {
  const leaving = removed
    .filter(({ clientId, clock }) => {
      const meta = awareness.meta.get(clientId)
      return awareness.getStates().has(clientId) && meta !== undefined && meta.clock <= clock
    })
    .map((r) => r.clientId)
  if (leaving.length > 0) removeAwarenessStates(awareness, leaving, origin)
}

export class AwarenessGuard implements Extension {
  /** After authentication (1000), before persistence (100), beside the editor boundary (500). */
  priority = 500
  extensionName = 'awareness-guard'

  /** Connections refused once: nothing more of their awareness is applied (they are closed). */
  private readonly refused = new WeakSet<Connection>()
  /** The clientIds each connection introduced (sent a state for first), for its whole life. */
  private readonly introduced = new WeakMap<Connection, Set<number>>()
  /** Per document, the connection that owns each clientId. */
  private readonly owners = new WeakMap<Document, Map<number, Connection>>()
  /** The clientIds of the awareness message each connection is handling that it may set, with their clocks. */
  private readonly carried = new WeakMap<Connection, Map<number, number>>()
  /** The removals of its own clientIds in the awareness message each connection is handling. */
  private readonly leaving = new WeakMap<Connection, ClientClock[]>()
  /** Per document, the colour each identity present holds (identityOf). */
  private readonly colors = new WeakMap<Document, Map<string, Held>>()
  /** The presence each connection was given. */
  private readonly given = new WeakMap<Connection, PresenceUser>()

  /** Each user's share of presence sent to others on their behalf (presence-pacer.ts). */
  private readonly pacer: PresencePacer

  constructor(private readonly deps: { logger: Logger; metrics: Metrics }) {
    this.pacer = new PresencePacer({
      metrics: deps.metrics,
      live: (connection) => !this.refused.has(connection) && connection.document.hasConnection(connection),
      prepare: (connection, states) => this.prepareWaiting(connection, states),
    })
  }

  async beforeHandleMessage({ update, connection, document }: beforeHandleMessagePayload): Promise<void> {
    this.carried.delete(connection)
    this.leaving.delete(connection)
    if (this.refused.has(connection) || !document.hasConnection(connection)) return
    const message = awarenessClients(update)
    if (!message) return
    if (message.entries > MAX_AWARENESS_STATES_PER_MESSAGE)
      return this.refuse(connection, {
        code: EDITOR_TOO_LARGE_CODE,
        reason: `awareness refused: ${message.entries} client states in one message; the limit is ${MAX_AWARENESS_STATES_PER_MESSAGE}`,
      })
    const owners = this.ownersOf(document)
    const mine = this.introduced.get(connection) ?? new Set<number>()
    const allowed = new Map<number, number>()
    const fresh: number[] = []
    for (const { clientId, clock } of message.clients) {
      const owner = owners.get(clientId)
      if (clientId === document.clientID || (owner && owner !== connection)) continue // not its to set
      allowed.set(clientId, clock)
      if (!mine.has(clientId) && !fresh.includes(clientId)) fresh.push(clientId)
    }
    if (mine.size + fresh.length > MAX_AWARENESS_CLIENTS_PER_CONNECTION)
      return this.refuse(connection, {
        code: EDITOR_REFUSED_CODE,
        reason: `awareness refused: states for ${mine.size + fresh.length} client ids on one connection; the limit is ${MAX_AWARENESS_CLIENTS_PER_CONNECTION} (one per Y.Doc)`,
      })
    if (fresh.length > 0) {
      if (mine.size === 0) {
        this.introduced.set(connection, mine)
        connection.onClose((closed) => this.release(connection, closed))
      }
      for (const clientId of fresh) {
        mine.add(clientId)
        owners.set(clientId, connection)
      }
    }
    this.carried.set(connection, allowed)
    // Only its own clientIds: another connection's (or the server's) presence is not its to take away.
    const leaving = message.removed.filter(({ clientId }) => owners.get(clientId) === connection)
    if (leaving.length > 0) this.leaving.set(connection, leaving)
    // Past the user's share its states would wait anyway (presence-pacer.ts): kept as their bytes, not
    // decoded, and the message is handed on carrying no state (its count of entries set to 0 in the buffer
    // Hocuspocus reads next; its removals are applied from `leaving` in beforeHandleAwareness, as ever).
    const userId = (connection.context as ConnectionContext | undefined)?.principal?.user.id
    if (
      userId &&
      allowed.size > 0 &&
      this.pacer.holding(connection, userId) &&
      update[message.countAt] === message.entries
    ) {
      const raw = new Map<number, RawPresence>()
      // Views into the message, not copies (a copy of each state was a third of the server's CPU under a
      // flood): a held state keeps its message's buffer alive, at most one per client that waits (a
      // message of at most MAX_AWARENESS_MESSAGE_BYTES, the buffer Bun made for it alone).
      for (const { clientId, clock, json } of message.clients)
        if (allowed.has(clientId)) raw.set(clientId, { clock, json })
      this.pacer.hold(connection, userId, raw)
      this.carried.set(connection, new Map())
      update[message.countAt] = 0
    }
  }

  async beforeHandleAwareness({ states, connection, document }: beforeHandleAwarenessPayload): Promise<void> {
    if (!connection) return // from another instance (Redis) or this server: already checked at its edge
    const allowed = this.carried.get(connection)
    const leaving = this.leaving.get(connection)
    this.carried.delete(connection)
    this.leaving.delete(connection)
    // A refused or closed connection (by any extension) adds nothing: what is applied and broadcast is empty.
    if (!allowed || this.refused.has(connection) || !document.hasConnection(connection)) {
      states.clear()
      return
    }
    // A state set to null is not in `states` (applyRemovals says why): removed here with the connection as
    // origin, as Hocuspocus would have, so everyone is told and the connection's list of clients is kept.
    if (leaving) {
      this.pacer.forget(
        connection,
        leaving.map((r) => r.clientId),
      )
      applyRemovals(document.awareness, leaving, { source: 'connection', connection })
    }
    const principal = (connection.context as ConnectionContext | undefined)?.principal
    const checked = new Map<number, PresenceState>()
    for (const [clientId, state] of states) {
      // Hocuspocus's scratch state, another connection's clientId, the server's own: not this message's.
      const made =
        allowed.has(clientId) && principal
          ? this.checkedState(connection, document, principal, allowed.get(clientId) ?? 0, state)
          : undefined
      if (made === 'refused') {
        states.clear()
        return
      }
      if (made) checked.set(clientId, made)
      else states.delete(clientId)
    }
    // What everyone is sent on this user's behalf is paced: past their share, the newest state waits.
    if (principal && !this.pacer.admit(connection, principal.user.id, checked)) states.clear()
  }

  /**
   * A state a connection sent, checked: at most MAX_AWARENESS_STATE_BYTES of JSON, its `user` the
   * server's. Undefined when it is no state (dropped); 'refused' when too large (the connection is refused).
   */
  private checkedState(
    connection: Connection,
    document: Document,
    principal: Principal,
    clock: number,
    state: unknown,
  ): PresenceState | 'refused' | undefined {
    if (typeof state !== 'object' || state === null) return undefined
    const size = JSON.stringify(state)?.length ?? 0
    if (size > MAX_AWARENESS_STATE_BYTES) {
      this.refuse(connection, {
        code: EDITOR_TOO_LARGE_CODE,
        reason: `awareness refused: a client state of ${size} characters is over the ${MAX_AWARENESS_STATE_BYTES} limit`,
      })
      return 'refused'
    }
    const presence = state as Record<string, unknown>
    presence.user = this.presenceOf(connection, document, principal)
    return { clock, state: presence, bytes: size }
  }

  /**
   * What waited for the user's share, checked as a message's states are (checkedState), a state kept as
   * its text parsed first; undefined when the connection is refused for one of them (nothing applied).
   */
  private prepareWaiting(
    connection: Connection,
    waiting: Map<number, WaitingPresence>,
  ): Map<number, PresenceState> | undefined {
    const principal = (connection.context as ConnectionContext | undefined)?.principal
    if (!principal) return undefined
    const ready = new Map<number, PresenceState>()
    for (const [clientId, presence] of waiting) {
      if ('state' in presence) {
        ready.set(clientId, presence)
        continue
      }
      let state: unknown
      try {
        state = JSON.parse(UTF8.decode(presence.json))
      } catch {
        this.refuse(connection, {
          code: EDITOR_REFUSED_CODE,
          reason: 'awareness refused: a client state that is not JSON',
        })
        return undefined
      }
      const made = this.checkedState(connection, connection.document, principal, presence.clock, state)
      if (made === 'refused') return undefined
      if (made) ready.set(clientId, made)
    }
    return ready
  }

  /** For tests: how many presence states of a user wait for their share (presence-pacer.ts). */
  waitingPresence(userId: string): number {
    return this.pacer.waitingStates(userId)
  }

  /** The connection's presence: given once, with a colour no other identity in the document holds. */
  private presenceOf(connection: Connection, document: Document, principal: Principal): PresenceUser {
    const given = this.given.get(connection)
    if (given) return given
    let colors = this.colors.get(document)
    if (!colors) {
      colors = new Map()
      this.colors.set(document, colors)
    }
    const identity = identityOf(principal)
    let held = colors.get(identity)
    if (!held) {
      const taken = [...colors.values()].map((h) => h.color)
      // States this instance's connections did not send: other instances' people, the server's agent.
      const local = this.ownersOf(document)
      for (const [clientId, state] of document.awareness.getStates()) {
        const color = (state as { user?: { color?: unknown } }).user?.color
        if (!local.has(clientId) && typeof color === 'string') taken.push(color)
      }
      held = { color: pickColor(principal.user.id, taken), connections: new Set() }
      colors.set(identity, held)
    }
    held.connections.add(connection)
    const user = presenceUserOf(principal, held.color, presenceKeyOf(document.name, identity))
    this.given.set(connection, user)
    const notice: PresenceNotice = { type: 'presence', user }
    connection.sendStateless(JSON.stringify(notice))
    return user
  }

  private ownersOf(document: Document): Map<number, Connection> {
    let owners = this.owners.get(document)
    if (!owners) {
      owners = new Map()
      this.owners.set(document, owners)
    }
    return owners
  }

  /**
   * A closed connection's states all go. Hocuspocus removes the clientIds it saw this connection add
   * (removeConnection, before this runs); any other it introduced still present is removed here.
   */
  private release(connection: Connection, document: Document): void {
    const colors = this.colors.get(document)
    for (const [identity, held] of colors ?? []) {
      if (held.connections.delete(connection) && held.connections.size === 0) colors?.delete(identity)
    }
    const mine = this.introduced.get(connection)
    if (!mine) return
    const owners = this.ownersOf(document)
    const left: number[] = []
    for (const clientId of mine) {
      if (owners.get(clientId) !== connection) continue
      owners.delete(clientId)
      if (document.awareness.getStates().has(clientId)) left.push(clientId)
    }
    if (left.length > 0) removeAwarenessStates(document.awareness, left, null)
  }

  private refuse(connection: Connection, refusal: { code: number; reason: string }): void {
    if (this.refused.has(connection)) return
    this.refused.add(connection)
    this.deps.metrics.editorRefusals.inc({ kind: 'awareness' })
    const context = connection.context as ConnectionContext | undefined
    this.deps.logger.info(
      { documentId: context?.documentId, userId: context?.principal.user.id, reason: refusal.reason },
      'awareness refused',
    )
    // Read-only first, as the editor boundary does: nothing more of this connection is applied.
    connection.readOnly = true
    connection.close({ code: refusal.code, reason: refusal.reason.slice(0, MAX_REASON_CHARS) })
  }
}
