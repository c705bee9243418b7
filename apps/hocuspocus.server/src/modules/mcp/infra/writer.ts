/**
 * Writes through a Hocuspocus direct connection on the live document, so open editors see the change at
 * once. `disconnect()` with default options stores immediately; but Hocuspocus swallows a failed store,
 * so success is answered only once a store is known to cover this write (durable): told by the
 * persistence extension when it is given, else by reading the stored state back.
 */
import {
  documentStructs,
  FRAGMENT_NAME,
  type Result,
  refuseFor,
  structsAdmitted,
  structsOverMessage,
} from '@collab/doc-schema'
import type { Document, Hocuspocus } from '@hocuspocus/server'
import * as Y from 'yjs'
import type { DocumentsService } from '../../../documents/service.ts'
import { nextTurn } from '../../../turns.ts'
import { stopIfCancelled } from './cancel.ts'

/** The edit's value, or a refusal: of the edit (the document model's; nothing changed), or of a store that was not confirmed. */
export type WriteOutcome<T> = Result<T>

/** The instance is stopping: the write applied nothing, and another instance (or this one, restarted) takes it. */
export const STOPPING_MESSAGE =
  'slug: this server is restarting and applied nothing of this change; call again in a few seconds.'

/** The change is in the live document but no store confirmed it: the caller should read before retrying. */
export const UNSTORED_MESSAGE =
  'slug: the change reached the live document but storing it was not confirmed; the server keeps retrying. Call read_document to check before editing again.'

export type DocumentWriter = {
  write<T>(
    room: string,
    context: Record<string, unknown>,
    edit: (fragment: Y.XmlFragment) => Result<T>,
    options?: WriteOptions,
  ): Promise<WriteOutcome<T>>
  /**
   * Stores what the live document of `room` has unstored, when this instance holds it (a restore's or
   * revert's "before" version is then taken of the stored content: documents/history-before.ts). Throws
   * when the store fails.
   */
  storePending(room: string): Promise<void>
}

export type WriteOptions = {
  /**
   * The call's signal: aborted before the edit is applied (the document loading, the seam holding), the
   * write stops (CallCancelled) and nothing is applied; once applied it stays, is stored as usual, and
   * only the read-back that confirms it is skipped.
   */
  signal?: AbortSignal
  /** Test seam: awaited once the live document is open, just before the edit is applied. */
  beforeApply?: () => Promise<void>
  /**
   * More of the same edit, applied after it succeeded, each in a transaction of its own a turn of the
   * event loop apart, on the same connection (stored and confirmed as one write): a restore's edit of
   * megabytes in parts (documents/history-undo.ts), so other clients are served between them.
   */
  rest?: ReadonlyArray<(fragment: Y.XmlFragment) => void>
}

/**
 * How long an agent stays among the people present in editors after its edit lands: its name (marked as
 * an agent) and a caret where its last insertion ends, through the live document's awareness.
 */
export const AGENT_PRESENCE_MS = 5_000

/** The awareness colour of agents (people's colours come from their names in the web editor). */
const AGENT_COLOR = '#7c3aed'

const presenceTimers = new WeakMap<Document, ReturnType<typeof setTimeout>>()

/**
 * Shows the agent that just wrote in every editor of the document: the server's own awareness state
 * names it and puts a caret after the last text it inserted (a Yjs relative position). Several agents
 * writing at once share this one state: the latest is shown.
 */
function showAgent(document: Document, context: Record<string, unknown>, from: number): void {
  const who = (context.mcp ?? {}) as { handle?: unknown; tool?: unknown }
  if (typeof who.handle !== 'string') return
  const structs = document.store.clients.get(document.clientID) ?? []
  let cursor: { anchor: unknown; head: unknown } | undefined
  for (let i = structs.length - 1; i >= 0; i--) {
    const struct = structs[i]!
    if (struct.id.clock < from) break
    if (struct instanceof Y.Item && !struct.deleted && struct.content instanceof Y.ContentString) {
      const end = Y.relativePositionToJSON(
        new Y.RelativePosition(
          null,
          null,
          Y.createID(document.clientID, struct.id.clock + struct.length - 1),
          -1,
        ),
      )
      cursor = { anchor: end, head: end }
      break
    }
  }
  document.awareness.setLocalState({
    user: { name: `${who.handle}'s agent`, color: AGENT_COLOR, agent: true, tool: who.tool },
    ...(cursor ? { cursor } : {}),
  })
  clearTimeout(presenceTimers.get(document))
  const timer = setTimeout(() => document.awareness.setLocalState(null), AGENT_PRESENCE_MS)
  timer.unref?.()
  presenceTimers.set(document, timer)
}

/** Tells when a store of a document succeeded, with the state vector it covered (PersistenceExtension). */
export type StoreConfirmations = {
  /** `batch`: the store's batch number (batchesTaken), when the confirmations number them. */
  onStored(room: string, listener: (vector: Map<number, number>, batch?: number) => void): () => void
  /**
   * The number of the last store batch taken: a store whose batch is numbered above it holds every change
   * made before it was read, deletions included (a state vector shows insertions only).
   */
  batchesTaken?(): number
  /**
   * Awaited before an edit is applied: what others changed before it is stored and versioned first, so
   * the write has a version of its own (collab/persistence/versions.ts).
   */
  beforeWrite?(document: Document, context: Record<string, unknown>): Promise<void>
  /** Stores the document's unstored changes now (the persistence extension's `storePending`). */
  storePending?(document: Document): Promise<void>
  /**
   * Takes now an agent's version that waits at its bound (collab/persistence/versions.ts), so a version
   * of the whole stored content taken next (a restore's or revert's "before") does not swallow it.
   */
  settleVersions?(document: Document): Promise<void>
  /**
   * Called just before the edit applies anything: the function to call once the write's direct connection
   * is closed, or undefined when the server is stopping (nothing is applied: STOPPING_MESSAGE).
   */
  beginWrite?(): (() => void) | undefined
}

export function createDocumentWriter(deps: {
  hocuspocus: Pick<Hocuspocus, 'openDirectConnection' | 'documents'>
  documents: Pick<DocumentsService, 'loadState'>
  confirmations?: StoreConfirmations
}): DocumentWriter {
  return {
    async storePending(room) {
      const document = deps.hocuspocus.documents.get(room)
      if (!document) return
      await deps.confirmations?.storePending?.(document)
      await deps.confirmations?.settleVersions?.(document)
    },
    async write(room, context, edit, options = {}) {
      const { signal } = options
      stopIfCancelled(signal)
      // Every client whose clock the edit advanced, and to where: the server's own edits are its live
      // document's client; a restore or revert (documents/history-undo.ts) brings a scratch document's.
      let written = new Map<number, number>()
      let confirmed = false
      const covers = (vector: Map<number, number>) =>
        written.size > 0 && [...written].every(([client, clock]) => (vector.get(client) ?? 0) >= clock)
      // The last batch taken when the edit's last transaction ran: a store of a later batch holds all of
      // it. A revert that only deletes advances no clock, so `covers` cannot tell; reading the stored
      // content back to tell was a decode and a merge of the whole state on the event loop (~0.6 s for a
      // state of 8 MiB, on a loaded machine) that still could not.
      const numbered = deps.confirmations?.batchesTaken !== undefined
      let editBatch = Number.POSITIVE_INFINITY
      /** Whether the edit's transactions changed the document at all (Yjs sends an update only then). */
      let changed = false
      const onUpdate = () => {
        changed = true
      }
      /** Inside each of the edit's transactions: the batch mark, and its update watched for. */
      const markEdit = (doc: Y.Doc) => {
        editBatch = deps.confirmations?.batchesTaken?.() ?? editBatch
        doc.on('update', onUpdate)
      }
      /** Resolves when a store confirms the write (`confirmed` turns true). */
      let onConfirmed = () => {}
      const confirmation = new Promise<void>((resolve) => {
        onConfirmed = resolve
      })
      const stopListening = deps.confirmations?.onStored(room, (vector, batch) => {
        if (!(covers(vector) || (batch !== undefined && batch > editBatch))) return
        confirmed = true
        onConfirmed()
      })
      const connection = await deps.hocuspocus.openDirectConnection(room, context).catch((error) => {
        stopListening?.()
        throw error
      })
      let outcome: Result<unknown> | undefined
      let leave: (() => void) | undefined
      try {
        if (connection.document) await deps.confirmations?.beforeWrite?.(connection.document, context)
        await options.beforeApply?.()
        // Loading the live document may have taken a while: a caller gone by now gets nothing applied.
        stopIfCancelled(signal)
        // A stopping instance applies nothing new: its last store, which waits for this write, would not.
        leave = deps.confirmations?.beginWrite ? deps.confirmations.beginWrite() : () => {}
        if (!leave) return { kind: 'error', code: 'unavailable', field: 'slug', message: STOPPING_MESSAGE }
        let live: Document | undefined
        let before = 0
        let vectorBefore = new Map<number, number>()
        /** Every client the transactions so far advanced, and to where. */
        const advancedSince = (doc: Y.Doc) => {
          const advanced = new Map<number, number>()
          for (const [client, clock] of Y.decodeStateVector(Y.encodeStateVector(doc)))
            if (clock > (vectorBefore.get(client) ?? 0)) advanced.set(client, clock)
          return advanced
        }
        await connection.transact((doc) => {
          vectorBefore = Y.decodeStateVector(Y.encodeStateVector(doc))
          before = Y.getState(doc.store, doc.clientID)
          markEdit(doc)
          // A document at its item limit takes no more of an agent's (one write adds a bounded number).
          outcome = structsAdmitted(doc, 1)
            ? edit(doc.getXmlFragment(FRAGMENT_NAME))
            : refuseFor('too_large', `slug: ${structsOverMessage(documentStructs(doc))}`, 'slug')
          written = advancedSince(doc)
          live = doc
        })
        live?.off('update', onUpdate)
        for (const part of outcome?.kind === 'ok' ? (options.rest ?? []) : []) {
          // A large write's parts take turns with the other sliced work (turns.ts): editors' messages
          // read meanwhile, and their broadcasts, go first.
          await nextTurn()
          await connection.transact((doc) => {
            markEdit(doc)
            part(doc.getXmlFragment(FRAGMENT_NAME))
            written = advancedSince(doc)
          })
          live?.off('update', onUpdate)
        }
        if (live && outcome?.kind === 'ok' && Y.getState(live.store, live.clientID) > before)
          showAgent(live, context, before)
        // Hocuspocus sends the change to connected editors from a setImmediate flush. The store that
        // disconnect() starts runs database work that can hold the event loop (PGlite executes on this
        // thread), so let that flush go first: editors see the edit before it is stored, not after.
        await new Promise<void>((resolve) => setImmediate(resolve))
      } finally {
        const closed = connection.disconnect().finally(() => {
          stopListening?.()
          leave?.()
        })
        // The disconnect stores, then unloads the document when nobody else has it open, and the unload
        // waits: the compaction of its log, and with Redis a whole second (the extension's
        // disconnectDelay) before it starts. The caller's answer depends on the store only, so it goes
        // once a store confirms the edit; the unload finishes on its own (a failure there loses nothing:
        // the persistence extension keeps a document with unstored changes loaded).
        if (outcome?.kind === 'ok' && changed && deps.confirmations) {
          closed.catch(() => {})
          await Promise.race([closed, confirmation])
        } else await closed
      }
      if (!outcome) throw new Error('direct connection transaction did not run')
      if (outcome.kind === 'error') return outcome
      const value = outcome.value as never
      if (confirmed || (numbered && !changed)) return { kind: 'ok', value }
      // Applied, and stored by the disconnect's store as any write; nobody waits for the confirmation.
      stopIfCancelled(signal, true)
      // Not stored by the disconnect (a store was under way): store what is pending now, which confirms
      // it, rather than read the stored content back (for a document of megabytes, a decode and a merge
      // of its whole state here, on the event loop).
      const document = deps.hocuspocus.documents.get(room)
      if (document && deps.confirmations?.storePending)
        await deps.confirmations.storePending(document).catch(() => {})
      if (confirmed) return { kind: 'ok', value }
      // Only deletions (no clock advanced), and no store numbered after the edit succeeded: not stored.
      // The state vector a read-back would give cannot show deletions, so there is nothing to read.
      if (numbered && written.size === 0)
        return { kind: 'error', code: 'unavailable', field: 'slug', message: UNSTORED_MESSAGE }
      // The change is in the live document whatever happens now: a database that cannot be asked means
      // "not confirmed", never a failure the caller would retry as new.
      const stored = await deps.documents.loadState(room).catch(() => null)
      const storedVector = stored?.state
        ? Y.decodeStateVector(Y.encodeStateVectorFromUpdate(stored.state))
        : new Map<number, number>()
      if (written.size === 0 || covers(storedVector)) return { kind: 'ok', value }
      return { kind: 'error', code: 'unavailable', field: 'slug', message: UNSTORED_MESSAGE }
    },
  }
}
