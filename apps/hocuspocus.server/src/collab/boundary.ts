/**
 * The edge for editor input: every message a WebSocket connection sends is checked here before Hocuspocus
 * applies or broadcasts it. One place, one refusal: a refused message changes nothing, and the connection
 * to that document is closed with a reason that says what was wrong (the provider's `onClose` event
 * carries it; other documents on the same socket are unaffected).
 *
 * - Sync messages: at most MAX_EDITOR_UPDATE_BYTES, and at most MAX_EDITOR_UPDATE_STRUCTS structs inserted and
 *   deleted (MAX_SYNC_STEP2_STRUCTS for the catch-up a provider sends when it connects), counted before the
 *   update is decoded: bytes do not bound the work of checking and applying it; the update's content must fit the document model
 *   (`checkEditorUpdate`: schema types, attributes, marks, nesting depth); a document whose state is over
 *   MAX_DOCUMENT_BYTES takes deletions only, and an update that would take it past MAX_DOCUMENT_STRUCTS
 *   Yjs items is refused before it is decoded (yjs/document-structs.ts).
 * - Editors cannot delete what they do not know: a connection declares the node and mark types its editor
 *   has (`?types=…` in the WebSocket URL, `types=*` for the project's schema; StarterKit's when it declares
 *   nothing), and an update that deletes content of another type is refused (a bound editor deletes what
 *   its schema cannot represent as soon as it opens a document).
 * - Heading ids are the server's: headings an update creates or re-labels get a fresh id when theirs is
 *   malformed, missing or taken, and a heading an update strips of its id gets that id back, as one small
 *   Yjs edit right after the update (so every editor sees it); ids left malformed by older versions are
 *   repaired when a document loads.
 * - Awareness: a message's size is checked here with the others; everything else about awareness (states,
 *   clientIds, who a state says it is) is awareness-guard.ts.
 */
import {
  checkEditorUpdate,
  countUpdateWork,
  EDITOR_TYPES_PARAM,
  type EditorTypes,
  FRAGMENT_NAME,
  type InsertedText,
  MAX_DOCUMENT_BYTES,
  MAX_DOCUMENT_STRUCTS,
  MAX_EDITOR_UPDATE_BYTES,
  MAX_EDITOR_UPDATE_STRUCTS,
  MAX_SYNC_STEP2_STRUCTS,
  ownTextMarks,
  parseEditorTypes,
  reassignDuplicateIds,
  repairHeadingIds,
  restoreHeadingIds,
  type StrippedId,
  structsAdmitted,
  type UpdateCheck,
  unmarkOwnText,
} from '@collab/doc-schema'
import type {
  afterHandleMessagePayload,
  afterLoadDocumentPayload,
  beforeHandleMessagePayload,
  beforeSyncPayload,
  Connection,
  Document,
  Extension,
  onChangePayload,
} from '@hocuspocus/server'
import { MessageType, OutgoingMessage } from '@hocuspocus/server'
import { messageYjsSyncStep1, messageYjsSyncStep2, messageYjsUpdate } from 'y-protocols/sync'
import * as Y from 'yjs'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import { nextTurn } from '../turns.ts'
import { UserShares } from '../user-shares.ts'
import type { ConnectionContext } from './context.ts'
import { EDITOR_REFUSED_CODE, EDITOR_TOO_LARGE_CODE, readMessage } from './editor-message.ts'
import { FLOOD_CLOSE_CODE, FloodBuckets } from './flood.ts'
import {
  EDITOR_MS_BURST,
  EDITOR_MS_PER_SECOND,
  MAX_AWARENESS_MESSAGE_BYTES,
  MAX_AWARENESS_STATE_BYTES,
  MAX_CHARGED_HANDLING_MS,
  MAX_EDITOR_WAIT_MS,
  MAX_HELD_UPDATE_BYTES,
  MAX_HELD_UPDATES,
  MAX_SYNC_ANSWER_WAIT_MS,
  READ_ONLY_STEP2_PRICE_DIVISOR,
  SYNC_ANSWER_BYTE_BURST,
  SYNC_ANSWER_BYTES_PER_SECOND,
  SYNC_ANSWER_TURN_BYTES,
  SYNC_ANSWER_WORKER_BYTES,
  USER_STRUCT_BURST,
  USER_STRUCTS_PER_SECOND,
} from './limits.ts'

/**
 * Why an editor's update is refused at the document's item limit. A close reason holds 123 bytes:
 * structsOverMessage's longer account goes to agents.
 */
export const DOCUMENT_FULL_REASON = `update refused: the document is at its limit of ${MAX_DOCUMENT_STRUCTS.toLocaleString('en-US')} items; export it as Markdown and import that as a new document`

/** Kept for the importers of the flood control from here (it lives in flood.ts). */
export { FloodBuckets } from './flood.ts'

/** A WebSocket close reason holds at most 123 bytes. */
const MAX_REASON_CHARS = 120

/** The origin of the server's own repairs: a local change, stored like any other. */
const REPAIR_ORIGIN = { source: 'local' as const, context: { boundary: true } }

type Refusal = { code: number; reason: string }

const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`

/** The user a connection authenticated as (undefined before it did). */
const userIdOf = (connection: Connection): string | undefined =>
  (connection.context as ConnectionContext | undefined)?.principal.user.id

/**
 * What answering a sync step 1 carrying `vector` sends, estimated without encoding it: the document's
 * state bytes times the share of its clocks the vector lacks (a fresh client's empty vector lacks all of
 * them; an up-to-date one nothing). A vector that does not decode is priced as lacking everything (Yjs
 * refuses it when the answer is made).
 */
export function syncAnswerBytes(document: Y.Doc, vector: Uint8Array, stateBytes: number): number {
  let known: Map<number, number>
  try {
    known = Y.decodeStateVector(vector)
  } catch {
    return stateBytes
  }
  let total = 0
  let lacking = 0
  for (const [client, structs] of document.store.clients) {
    const last = structs[structs.length - 1]
    if (!last) continue
    const clock = last.id.clock + last.length
    total += clock
    lacking += Math.max(0, clock - (known.get(client) ?? 0))
  }
  return total === 0 ? 0 : Math.ceil((stateBytes * lacking) / total)
}

export class EditorBoundary implements Extension {
  /** After authentication (1000), before persistence (100): nothing is checked for a refused connection. */
  priority = 500
  extensionName = 'editor-boundary'

  /** Connections refused once: nothing more of theirs is applied (they are closed and read-only). */
  private readonly refused = new WeakSet<Connection>()
  /** Each connection's flood-control buckets (see EDITOR_MESSAGES_PER_SECOND). */
  private readonly buckets = new WeakMap<Connection, FloodBuckets>()
  /** Each user's share of struct work across their connections (USER_STRUCTS_PER_SECOND), by user id. */
  private readonly shares = new UserShares(USER_STRUCTS_PER_SECOND, USER_STRUCT_BURST)
  /** Each user's share of sync answers, in bytes of state sent (SYNC_ANSWER_BYTES_PER_SECOND). */
  private readonly syncAnswers = new UserShares(SYNC_ANSWER_BYTES_PER_SECOND, SYNC_ANSWER_BYTE_BURST)
  /** Each user's share of the event loop's time spent handling their messages (EDITOR_MS_PER_SECOND). */
  private editorTime = new UserShares(EDITOR_MS_PER_SECOND, EDITOR_MS_BURST)
  /** When each connection's message, its waits over, started being handled (its time is charged after). */
  private readonly handlingSince = new WeakMap<Connection, number>()
  /** Time the message being handled spent waiting inside its handling (sync answers paced): not charged. */
  private readonly waitedMs = new WeakMap<Connection, number>()
  /** Headings each connection's last message created or re-labelled, repaired after it is applied. */
  private readonly touchedHeadings = new WeakMap<Connection, Y.ID[]>()
  /** Headings each connection's last message stripped of their id, and that id: restored after it. */
  private readonly strippedIds = new WeakMap<Connection, StrippedId[]>()
  /** Text each connection's last message inserted: unmarked where it landed inside a suggestion. */
  private readonly insertedText = new WeakMap<Connection, InsertedText[]>()
  /** The node and mark types each connection declared (`?types=` of its WebSocket request). */
  private readonly declaredTypes = new WeakMap<Connection, EditorTypes>()
  /**
   * Updates held back, in arrival order, because they build on content the document does not have yet
   * (see `hold`): applied once the connection's sync step 2 has brought that content.
   */
  private readonly held = new WeakMap<Connection, { updates: Uint8Array[]; bytes: number }>()
  /** Connections whose message being handled was held: read-only for that message only. */
  private readonly holding = new WeakSet<Connection>()
  /** Connections whose sync step 1 being handled was paced already (answerOnWorker could not answer it). */
  private readonly pacedStep1 = new WeakSet<Connection>()
  /** Connections sent the server's sync step 1 (Hocuspocus answers theirs with it) whose step 2 has not come. */
  private readonly awaitingStep2 = new WeakSet<Connection>()
  /** Bytes of updates applied to each document since its last load or store (the size estimate's growth). */
  private readonly growth = new Map<string, { base: number; bytes: number }>()

  constructor(
    private readonly deps: {
      logger: Logger
      metrics: Metrics
      /** Bytes of a loaded document's state at its last load or store. */
      stateBytes(documentName: string): number
      /**
       * What an editor with state vector `vector` lacks of `document`, made off the event loop for `userId`
       * (the documents' worker) as a sync step 2 message to `address`, framed there; null when it cannot
       * be (the worker is busy; the document's updates are not kept), and Hocuspocus answers it.
       */
      answerSync?(
        document: Document,
        vector: Uint8Array,
        userId: string,
        address: string,
      ): Promise<Uint8Array | null>
    },
  ) {}

  async beforeHandleMessage({ update, connection, document }: beforeHandleMessagePayload): Promise<void> {
    if (this.refused.has(connection)) return
    const message = readMessage(update)
    const type = message.type
    if (type === MessageType.Sync && update.byteLength > MAX_EDITOR_UPDATE_BYTES)
      return this.refuse(connection, 'size', {
        code: EDITOR_TOO_LARGE_CODE,
        reason: `update refused: ${mib(update.byteLength)} is over the ${mib(MAX_EDITOR_UPDATE_BYTES)} limit per message; send smaller changes`,
      })
    if (type === MessageType.Awareness && update.byteLength > MAX_AWARENESS_MESSAGE_BYTES)
      return this.refuse(connection, 'awareness', {
        code: EDITOR_TOO_LARGE_CODE,
        reason: `awareness refused: ${update.byteLength} bytes is over the ${MAX_AWARENESS_MESSAGE_BYTES}-byte limit`,
      })
    // The work of checking and applying an update follows its structs, not its bytes: counted before it is
    // decoded (a read-only connection's updates are not applied, so not counted).
    let structs = 0
    if (message.update && !connection.readOnly) {
      const limit =
        message.syncType === messageYjsSyncStep2 ? MAX_SYNC_STEP2_STRUCTS : MAX_EDITOR_UPDATE_STRUCTS
      const work = countUpdateWork(message.update, document, limit)
      if (work?.over)
        return this.refuse(connection, 'structs', {
          code: EDITOR_TOO_LARGE_CODE,
          reason: `update refused: it inserts or deletes more than ${limit.toLocaleString('en-US')} items at once; paste or delete in smaller parts`,
        })
      structs = work?.cost ?? 0
      // What the document would hold: its structs, not its bytes, are what keeping and loading it cost.
      if (work && work.inserted > 0 && !structsAdmitted(document, work.inserted))
        return this.refuse(connection, 'document_structs', {
          code: EDITOR_TOO_LARGE_CODE,
          reason: DOCUMENT_FULL_REASON,
        })
    }
    // Pace this connection's queue to the flood rates, so its messages never crowd out everyone else's.
    let buckets = this.buckets.get(connection)
    if (!buckets) {
      buckets = new FloodBuckets()
      this.buckets.set(connection, buckets)
    }
    const connectionWait = buckets.draw(update.byteLength, structs)
    const userWait = this.userShareWait(connection, structs)
    const userId = userIdOf(connection)
    const timeWait = userId ? this.editorTime.owedMs(userId) : 0
    const wait = Math.max(connectionWait, userWait, timeWait)
    if (wait > 0) {
      // Counted by each share it waits for (the structs' or the connection's, and the time's).
      if (connectionWait > 0 || userWait > 0)
        this.deps.metrics.editorPaced.inc({ by: userWait > connectionWait ? 'user' : 'connection' })
      if (timeWait > 0) this.deps.metrics.editorPaced.inc({ by: 'time' })
      await Bun.sleep(Math.min(wait, MAX_EDITOR_WAIT_MS))
    }
    // A query of everyone's presence is a byte, and Hocuspocus encodes every state in the document for it:
    // priced on the share of sync answers as that many states at their largest.
    if (type === MessageType.QueryAwareness)
      await this.paceSyncAnswer(connection, document.awareness.getStates().size * MAX_AWARENESS_STATE_BYTES)
    if (message.syncType === messageYjsSyncStep1 && message.vector && message.typeAt !== undefined)
      await this.answerOnWorker(connection, document, message.vector, update, message.typeAt)
    // From here to the end of afterHandleMessage the message is handled (checked, applied, broadcast,
    // repaired) on the event loop: that time is charged to its user's share.
    this.handlingSince.set(connection, performance.now())
    this.waitedMs.delete(connection)
  }

  /**
   * Answers a sync step 1 whose answer is large (SYNC_ANSWER_WORKER_BYTES) off the event loop when it can
   * (`answerSync`): sends the answer (a step 2) and the server's own step 1, as Hocuspocus would, then makes
   * the message one Hocuspocus does nothing with (a stateless message of no payload, which no extension
   * here handles: its type byte rewritten in place, in the buffer Hocuspocus reads next), so it is not
   * answered twice. Paced on the user's share here, as beforeSync would have. When the answer cannot be
   * made off the event loop, Hocuspocus answers the message as before (beforeSync does not pace it again).
   */
  private async answerOnWorker(
    connection: Connection,
    document: Document,
    vector: Uint8Array,
    raw: Uint8Array,
    typeAt: number,
  ): Promise<void> {
    const userId = userIdOf(connection)
    if (!this.deps.answerSync || !userId) return
    const bytes = syncAnswerBytes(document, vector, this.estimatedBytes(document.name))
    if (bytes < SYNC_ANSWER_WORKER_BYTES) return
    await this.paceSyncAnswer(connection, bytes)
    const answer = await this.deps.answerSync(document, vector, userId, connection.messageAddress)
    const open = !this.refused.has(connection) && document.hasConnection(connection)
    if (!answer && open) {
      this.pacedStep1.add(connection)
      this.deps.metrics.largeSyncAnswers.inc({ where: 'event_loop' })
      return
    }
    raw[typeAt] = MessageType.Stateless
    if (!answer || !open) return // closed meanwhile: nothing to answer
    this.awaitingStep2.add(connection)
    connection.send(answer)
    connection.send(
      new OutgoingMessage(connection.messageAddress)
        .createSyncMessage()
        .writeFirstSyncStepFor(document)
        .toUint8Array(),
    )
    this.deps.metrics.largeSyncAnswers.inc({ where: 'worker' })
  }

  async beforeSync({ type, payload, connection, document }: beforeSyncPayload): Promise<void> {
    // Hocuspocus answers a sync step 1 with what the sender lacks, then its own step 1, which the provider
    // answers with a step 2.
    if (type === messageYjsSyncStep1) {
      this.awaitingStep2.add(connection)
      if (this.pacedStep1.delete(connection)) return // paced by answerOnWorker, answered by Hocuspocus
      const state = this.estimatedBytes(document.name)
      return this.paceSyncAnswer(connection, syncAnswerBytes(document, payload, state))
    }
    if (type !== messageYjsSyncStep2 && type !== messageYjsUpdate) return
    // Closed by Hocuspocus (shutdown, a revoke), its socket still brings what was queued behind a paced
    // message or sent before the close reached the client: never applied nor acknowledged, so a stopping
    // instance is not left holding typing it cannot store (reliability/balancer-restart.test.ts).
    if (!document.hasConnection(connection)) connection.readOnly = true
    // Hocuspocus does not apply a read-only connection's changes (refused ones are read-only): no check.
    // It answers a step 2 with whether the document holds it, from a snapshot of the whole document.
    if (connection.readOnly)
      return type === messageYjsSyncStep2
        ? this.paceSyncAnswer(
            connection,
            Math.ceil(this.estimatedBytes(document.name) / READ_ONLY_STEP2_PRICE_DIVISOR),
          )
        : undefined
    // Behind an update already held, in order: its sender's acknowledgements stay in the order it sent.
    if (type === messageYjsUpdate && this.held.has(connection))
      return this.hold(connection, document, payload)
    const check = checkEditorUpdate(document, payload, this.typesOf(connection))
    if (!check.ok && check.missingContent && type === messageYjsUpdate)
      return this.hold(connection, document, payload)
    if (!this.accept(connection, document, check)) return
    if (type === messageYjsSyncStep2) this.awaitingStep2.delete(connection) // releases what is held, after it
  }

  /**
   * Whether a checked update may be applied; refuses the connection when not. Notes the headings to repair
   * once it is applied.
   */
  private accept(connection: Connection, document: Document, check: UpdateCheck): boolean {
    if (!check.ok) {
      this.refuse(connection, check.undeclaredType ? 'undeclared_type' : 'content', {
        code: EDITOR_REFUSED_CODE,
        reason: `update refused: ${check.reason}`,
      })
      return false
    }
    if (check.inserts && this.estimatedBytes(document.name) > MAX_DOCUMENT_BYTES) {
      this.refuse(connection, 'document_size', {
        code: EDITOR_TOO_LARGE_CODE,
        reason: `update refused: the document is over its ${mib(MAX_DOCUMENT_BYTES)} limit; delete content or start a new document`,
      })
      return false
    }
    if (check.headingItems.length > 0) {
      const pending = this.touchedHeadings.get(connection)
      this.touchedHeadings.set(connection, pending ? pending.concat(check.headingItems) : check.headingItems)
    }
    if (check.strippedIds.length > 0) {
      const pending = this.strippedIds.get(connection)
      this.strippedIds.set(connection, pending ? pending.concat(check.strippedIds) : check.strippedIds)
    }
    if (check.textItems.length > 0) {
      const pending = this.insertedText.get(connection)
      this.insertedText.set(connection, pending ? pending.concat(check.textItems) : check.textItems)
    }
    return true
  }

  /**
   * Holds back an update that builds on content the document does not have yet, instead of refusing it.
   * Legitimate after a kill: an editor whose instance died before passing its last changes on reconnects
   * here and types during the handshake; its typing arrives before the sync step 2 that carries those
   * changes (found by reliability/balancer-restart.test.ts: refused, the editor's connection to the document
   * was closed while its socket stayed open, and it synced with no one until the provider's 30 s silence
   * timeout). A held update is neither applied nor acknowledged (read-only for this message: Hocuspocus
   * answers "not applied", which the provider ignores) until the connection's next sync step 2 has been
   * applied; then it is checked again and applied and acknowledged (`release`). The server asks for that
   * step 2 when none is on its way. Past MAX_HELD_UPDATES or MAX_HELD_UPDATE_BYTES it is refused as before.
   */
  private hold(connection: Connection, document: Document, update: Uint8Array): void {
    const held = this.held.get(connection) ?? { updates: [], bytes: 0 }
    if (held.updates.length >= MAX_HELD_UPDATES || held.bytes + update.byteLength > MAX_HELD_UPDATE_BYTES) {
      this.held.delete(connection)
      this.refuse(connection, 'content', {
        code: EDITOR_REFUSED_CODE,
        reason: `update refused: it builds on content this server does not have, and over ${MAX_HELD_UPDATES} updates waited for it; reconnect to resync`,
      })
      return
    }
    held.updates.push(update.slice()) // the payload is a view into the message's buffer
    held.bytes += update.byteLength
    this.held.set(connection, held)
    connection.readOnly = true
    this.holding.add(connection)
    this.deps.metrics.editorHeld.inc()
    if (!this.awaitingStep2.has(connection)) {
      this.awaitingStep2.add(connection)
      connection.send(
        new OutgoingMessage(connection.messageAddress)
          .createSyncMessage()
          .writeFirstSyncStepFor(document)
          .toUint8Array(),
      )
    }
  }

  /** After the connection's sync step 2: what was held is checked again, applied and acknowledged, in order. */
  private release(connection: Connection, document: Document): void {
    const held = this.held.get(connection)
    this.held.delete(connection)
    if (!held) return
    for (const update of held.updates) {
      const check = checkEditorUpdate(document, update, this.typesOf(connection))
      if (!this.accept(connection, document, check)) return
      Y.applyUpdate(document, update, { source: 'connection', connection })
      connection.send(new OutgoingMessage(connection.messageAddress).writeSyncStatus(true).toUint8Array())
    }
  }

  /** A held message handled: the connection writes again, unless its access or a refusal took that away. */
  private endHolding(connection: Connection): void {
    this.holding.delete(connection)
    const context = connection.context as ConnectionContext | undefined
    if (!this.refused.has(connection) && context?.canWrite && connection.document.hasConnection(connection))
      connection.readOnly = false
  }

  async afterHandleMessage(payload: afterHandleMessagePayload): Promise<void> {
    try {
      this.afterHandled(payload)
    } finally {
      this.chargeHandling(payload.connection)
    }
  }

  /** After a message is applied: held updates released, heading ids repaired, own text unmarked. */
  private afterHandled({ connection, document }: afterHandleMessagePayload): void {
    if (this.holding.has(connection)) this.endHolding(connection)
    else if (
      this.held.has(connection) &&
      !this.awaitingStep2.has(connection) &&
      !this.refused.has(connection)
    )
      this.release(connection, document)
    const touched = this.touchedHeadings.get(connection)
    const stripped = this.strippedIds.get(connection)
    const text = this.insertedText.get(connection)
    this.insertedText.delete(connection)
    // Walking a text that holds a suggestion is the editor's work too: its time is charged with the rest.
    const marked = text ? ownTextMarks(document, text) : []
    if (!touched && !stripped && marked.length === 0) return
    this.touchedHeadings.delete(connection)
    this.strippedIds.delete(connection)
    let repaired = 0
    let unmarked = 0
    // One transaction: the stripped ids come back first, so a heading pasted with one of them is the one
    // that gets a fresh id.
    document.transact(() => {
      if (stripped) repaired += restoreHeadingIds(stripped, REPAIR_ORIGIN)
      if (touched)
        repaired += repairHeadingIds(document.getXmlFragment(FRAGMENT_NAME), touched, REPAIR_ORIGIN)
      // A person's words typed inside an agent's suggestion are theirs, not part of the proposal.
      unmarked = unmarkOwnText(marked)
    }, REPAIR_ORIGIN)
    if (unmarked > 0) this.deps.metrics.ownTextUnmarked.inc({}, unmarked)
    if (unmarked > 0)
      this.deps.logger.debug({ documentId: this.documentId(connection), unmarked }, 'own text unmarked')
    if (repaired > 0) {
      this.deps.metrics.headingIdRepairs.inc({}, repaired)
      this.deps.logger.debug({ documentId: this.documentId(connection), repaired }, 'heading ids repaired')
    }
  }

  /** Ids written by older versions (or by hand) that are malformed or repeated are replaced at load. */
  async afterLoadDocument({ document, documentName }: afterLoadDocumentPayload): Promise<void> {
    const repaired = reassignDuplicateIds(document.getXmlFragment(FRAGMENT_NAME), REPAIR_ORIGIN)
    if (repaired > 0) {
      this.deps.metrics.headingIdRepairs.inc({}, repaired)
      this.deps.logger.info({ room: documentName, repaired }, 'heading ids repaired at load')
    }
  }

  async onChange({ documentName, update }: onChangePayload): Promise<void> {
    const entry = this.current(documentName)
    entry.bytes += update.byteLength
  }

  async afterUnloadDocument({ documentName }: { documentName: string }): Promise<void> {
    this.growth.delete(documentName)
  }

  /** The state's size at its last load or store plus every update since (deletions counted as growth). */
  private estimatedBytes(documentName: string): number {
    const entry = this.current(documentName)
    return entry.base + entry.bytes
  }

  private current(documentName: string): { base: number; bytes: number } {
    const base = this.deps.stateBytes(documentName)
    let entry = this.growth.get(documentName)
    if (!entry || entry.base !== base) {
      entry = { base, bytes: 0 }
      this.growth.set(documentName, entry)
    }
    return entry
  }

  /** How long the connection's user should wait for `structs` of work (their share across connections). */
  private userShareWait(connection: Connection, structs: number): number {
    const userId = userIdOf(connection)
    return userId && structs > 0 ? this.shares.spend(userId, structs) : 0
  }

  /**
   * Paces the answer to a sync step 1 by what it sends (`syncAnswerBytes`; a read-only connection's step 2
   * by READ_ONLY_STEP2_PRICE_DIVISOR) on the sender's user's share of sync answers: it waits out what the
   * user owed before it (answers already sent and reserved), and one that would wait longer than
   * MAX_SYNC_ANSWER_WAIT_MS closes its connection, unanswered and uncharged (thrown: Hocuspocus then
   * closes it without answering). Reserved on arrival, so step 1s arriving together on many sockets queue
   * behind each other (one socket's messages are handled one at a time: each waits for the one before).
   */
  private async paceSyncAnswer(connection: Connection, bytes: number): Promise<void> {
    const userId = userIdOf(connection)
    if (!userId || this.refused.has(connection) || bytes === 0) return
    const owed = this.syncAnswers.spend(userId, bytes)
    const wait = Math.max(0, owed - (bytes / SYNC_ANSWER_BYTES_PER_SECOND) * 1000)
    if (wait > MAX_SYNC_ANSWER_WAIT_MS) {
      this.syncAnswers.spend(userId, -bytes)
      const refusal = {
        code: FLOOD_CLOSE_CODE,
        reason: `sync refused: over ${mib(SYNC_ANSWER_BYTES_PER_SECOND)}/s of documents sent to you; reconnect in ${Math.ceil(wait / 1000)} s`,
      }
      this.refuse(connection, 'sync', refusal)
      // Thrown so Hocuspocus does not answer it (it answers a read-only connection's step 1 too): it closes
      // the connection with this code and reason and drops what is queued behind.
      throw Object.assign(new Error(refusal.reason), refusal)
    }
    const waitStarted = performance.now()
    if (wait > 0) {
      this.deps.metrics.editorPaced.inc({ by: 'sync' })
      await Bun.sleep(wait)
    } else if (bytes >= SYNC_ANSWER_TURN_BYTES) await nextTurn()
    const waited = performance.now() - waitStarted
    if (waited > 0) this.waitedMs.set(connection, (this.waitedMs.get(connection) ?? 0) + waited)
  }

  /**
   * Charges the time the connection's last message took to handle (since its waits ended, less the waits
   * inside) to its user's share of the event loop: a user whose messages are dear to handle (keystrokes
   * in a paragraph of 10,000 marks, sync step 1s answered on the event loop) waits before their next,
   * however few structs or bytes each holds.
   */
  private chargeHandling(connection: Connection): void {
    const since = this.handlingSince.get(connection)
    if (since === undefined) return
    this.handlingSince.delete(connection)
    const busy = performance.now() - since - (this.waitedMs.get(connection) ?? 0)
    this.waitedMs.delete(connection)
    const userId = userIdOf(connection)
    if (userId && busy > 0) this.editorTime.spend(userId, Math.min(busy, MAX_CHARGED_HANDLING_MS))
  }

  /** For tests: how long a user's next message would wait for their share (ms; 0 when it lasts). */
  userDebtMs(userId: string): number {
    return this.shares.owedMs(userId)
  }

  /** For tests: what is left of a user's share of the event loop's time (ms; below zero while they owe). */
  userTimeLeftMs(userId: string): number {
    return this.editorTime.left(userId)
  }

  /**
   * For tests: every user's share of the event loop's time at another rate and burst (ms), from now on
   * (a test cannot make a message dear enough to empty the real one without holding its own process).
   */
  useEditorTimeShare(perSecond: number, burst: number): void {
    this.editorTime = new UserShares(perSecond, burst)
  }

  /** The types a connection declared in its WebSocket URL (read once per connection). */
  private typesOf(connection: Connection): EditorTypes {
    let types = this.declaredTypes.get(connection)
    if (!types) {
      let value: string | null = null
      try {
        value = new URL(connection.request.url).searchParams.get(EDITOR_TYPES_PARAM)
      } catch {
        // no URL to read: the connection declared nothing
      }
      types = parseEditorTypes(value)
      this.declaredTypes.set(connection, types)
    }
    return types
  }

  private documentId(connection: Connection): string | undefined {
    return (connection.context as ConnectionContext | undefined)?.documentId
  }

  /**
   * Refuses this connection's message and closes its connection to the document with the reason. Nothing
   * is thrown (Hocuspocus would print it): the connection becomes read-only first, so Hocuspocus does not
   * apply the sync message it is handling, and its later messages are dropped the same way.
   */
  private refuse(connection: Connection, kind: string, refusal: Refusal): void {
    if (this.refused.has(connection)) return
    this.refused.add(connection)
    this.deps.metrics.editorRefusals.inc({ kind })
    const context = connection.context as ConnectionContext | undefined
    this.deps.logger.info(
      { documentId: context?.documentId, userId: context?.principal.user.id, kind, reason: refusal.reason },
      'editor message refused',
    )
    connection.readOnly = true
    connection.close({ code: refusal.code, reason: refusal.reason.slice(0, MAX_REASON_CHARS) })
  }
}
