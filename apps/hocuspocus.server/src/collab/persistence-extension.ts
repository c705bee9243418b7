/**
 * Loads a document's stored state when it opens and stores it after changes (Hocuspocus debounces).
 *
 * A failed store is logged, counted, and retried with backoff; Hocuspocus keeps a document whose store
 * failed in memory, so nothing is lost while the database is away. `flush()` is the shutdown path:
 * it stores every document with unstored changes and waits, within a deadline.
 *
 * A store that fails for any other reason (content the database refuses, a bug) is a fault: reported
 * once with the document and the reason (code and message, never text), counted, and the Yjs state is
 * stored alone (no outline, title and search text as they were), so what editors wrote is durable anyway.
 * Found by hand: one NUL typed into a heading failed every store through the stored outline; the store
 * was retried forever while 20 acknowledged paragraphs piled up, and all were lost at the restart. If even
 * the state cannot be stored, it is retried STORE_FAULT_MAX_RETRIES times, then not until the document
 * changes again; at shutdown it is tried once after the other documents and listed unstored at once.
 */
import { FRAGMENT_NAME, liveOutline, readPlainText, readTitle } from '@collab/doc-schema'
import type {
  beforeUnloadDocumentPayload,
  Document,
  Extension,
  Hocuspocus,
  onChangePayload,
  onLoadDocumentPayload,
  onStoreDocumentPayload,
} from '@hocuspocus/server'
import * as Y from 'yjs'
import { isDatabaseUnavailable } from '../db/errors.ts'
import type { DocumentsService } from '../documents/service.ts'
import { MAX_SEARCH_TEXT_CHARS } from '../documents/store.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'

/** First retry after a failed store; doubles per failure up to the cap. */
export const STORE_RETRY_BASE_MS = 500
export const STORE_RETRY_MAX_MS = 15_000
/**
 * Retries (with the same backoff) of a store that failed for a reason other than the database being away,
 * even as the state alone; then none until the document changes again, so no store is retried forever.
 */
export const STORE_FAULT_MAX_RETRIES = 3
/** Longest failure message kept in the log (its first line; the code says the rest). */
const FAULT_REASON_MAX_CHARS = 200

/** A document whose last store failed for a reason other than the database being away. */
type Fault = {
  /** Error code (SQLSTATE, Prisma code or error name) and the first line of its message, never text. */
  code: string
  reason: string
  /** Retries spent since the last change; `stalled` once they reach STORE_FAULT_MAX_RETRIES. */
  retries: number
  stalled: boolean
}

export class PersistenceExtension implements Extension {
  priority = 100
  extensionName = 'persistence'

  private readonly documentIds = new Map<string, string>()
  /** Bytes of each loaded document's Yjs state when it was last loaded or stored (the size ceiling's base). */
  private readonly stateSizes = new Map<string, number>()
  /** Change generation per document; cleared when a store covering the latest change succeeds. */
  private readonly dirty = new Map<string, number>()
  private readonly retries = new Map<
    string,
    { attempt: number; timer: ReturnType<typeof setTimeout> | null }
  >()
  /** Documents whose last store failed for content or a bug (cleared by a full store). */
  private readonly faults = new Map<string, Fault>()
  private instance: Hocuspocus | undefined
  private readonly storedListeners = new Map<string, Set<(vector: Map<number, number>) => void>>()

  constructor(
    private readonly deps: {
      documents: DocumentsService
      logger: Logger
      metrics: Metrics
      /** Several instances share the database (Redis): merge each store with the stored state. */
      mergeWithStored?: boolean
    },
  ) {}

  async onConfigure({ instance }: { instance: Hocuspocus }): Promise<void> {
    this.instance = instance
  }

  async onLoadDocument({ documentName, document }: onLoadDocumentPayload): Promise<void> {
    const loaded = await this.deps.documents.loadState(documentName)
    if (!loaded) throw new Error(`no stored document for room ${documentName}`)
    this.documentIds.set(documentName, loaded.documentId)
    this.stateSizes.set(documentName, loaded.state?.byteLength ?? 0)
    if (loaded.state) Y.applyUpdate(document, loaded.state)
    this.deps.metrics.documentLoads.inc()
  }

  async onChange({ documentName }: onChangePayload): Promise<void> {
    this.dirty.set(documentName, (this.dirty.get(documentName) ?? 0) + 1)
    // A new change earns a stalled document new attempts (Hocuspocus stores after the change).
    const fault = this.faults.get(documentName)
    if (fault?.stalled) {
      fault.stalled = false
      fault.retries = 0
    }
  }

  async onStoreDocument(payload: onStoreDocumentPayload): Promise<void> {
    try {
      await this.write(payload.document)
      this.clearRetry(payload.documentName)
    } catch (error) {
      if (isDatabaseUnavailable(error)) this.scheduleRetry(payload.document)
      else this.scheduleFaultRetry(payload.document)
      // Hocuspocus keeps the document in memory after a failed store, and prints what it is given with
      // console.error: the full error is already in our structured log, so it gets a one-line summary.
      throw new Error('document store failed; kept in memory, retrying (see the structured log)')
    }
  }

  /**
   * Vetoes unloading a document whose changes are not stored (Hocuspocus unloads on last disconnect
   * when no store is pending, which includes "the last store failed"), and makes sure a store is coming.
   */
  async beforeUnloadDocument({ documentName, document }: beforeUnloadDocumentPayload): Promise<void> {
    if (!this.dirty.has(documentName) || !this.documentIds.has(documentName)) return
    // A stalled fault waits for the next change (or shutdown), in memory: never dropped.
    if (!this.retries.get(documentName)?.timer && !this.faults.get(documentName)?.stalled)
      this.scheduleRetry(document)
    throw new Error('unstored changes: kept in memory until stored')
  }

  async afterUnloadDocument({ documentName }: { documentName: string }): Promise<void> {
    this.documentIds.delete(documentName)
    this.faults.delete(documentName)
    this.stateSizes.delete(documentName)
    this.clearRetry(documentName)
  }

  /**
   * Calls `listener` with the state vector each successful store of the document covered, until the
   * returned function is called. Writers use it to know their change is durable without reading it back.
   */
  onStored(documentName: string, listener: (vector: Map<number, number>) => void): () => void {
    let set = this.storedListeners.get(documentName)
    if (!set) {
      set = new Set()
      this.storedListeners.set(documentName, set)
    }
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0 && this.storedListeners.get(documentName) === set)
        this.storedListeners.delete(documentName)
    }
  }

  /** Bytes of the document's Yjs state at its last load or store (0 when unknown). */
  stateBytes(documentName: string): number {
    return this.stateSizes.get(documentName) ?? 0
  }

  /** Rooms whose last store failed for content or a bug, with the code and reason (never text). */
  faultsByRoom(): Map<string, { code: string; reason: string; stalled: boolean }> {
    return new Map(
      [...this.faults].map(([room, f]) => [room, { code: f.code, reason: f.reason, stalled: f.stalled }]),
    )
  }

  /** Documents with changes not yet stored. */
  pendingCount(): number {
    return this.dirty.size
  }

  /**
   * Stores every loaded document that has unstored changes, retrying until all are stored or the
   * deadline passes. Returns the rooms still unstored (empty on success). Documents with a fault are
   * tried after the others, once: one that fails again for a reason other than the database being away
   * is listed unstored at once (and logged), so it never spends the deadline of the others.
   */
  async flush(deadlineMs: number): Promise<string[]> {
    const instance = this.instance
    if (!instance) return []
    for (const entry of this.retries.values()) if (entry.timer) clearTimeout(entry.timer)
    const end = Date.now() + deadlineMs
    const givenUp = new Set<string>()
    let delay = STORE_RETRY_BASE_MS
    for (;;) {
      for (const name of [...this.dirty.keys()]) if (!instance.documents.has(name)) this.dirty.delete(name)
      const pending = [...this.dirty.keys()].filter((name) => !givenUp.has(name))
      if (pending.length === 0) break
      const store = async (name: string) => {
        const document = instance.documents.get(name)
        if (!document) return
        await document.saveMutex
          .runExclusive(() => this.write(document))
          .catch((error: unknown) => {
            if (!isDatabaseUnavailable(error)) givenUp.add(name)
          })
      }
      await Promise.all(pending.filter((name) => !this.faults.has(name)).map(store))
      await Promise.all(pending.filter((name) => this.faults.has(name)).map(store))
      if ([...this.dirty.keys()].every((name) => givenUp.has(name))) break
      if (Date.now() + delay > end) break
      await Bun.sleep(delay)
      delay = Math.min(delay * 2, STORE_RETRY_MAX_MS)
    }
    const unstored = [...this.dirty.keys()]
    for (const name of unstored) {
      const fault = this.faults.get(name)
      this.deps.logger.error(
        { documentId: this.documentIds.get(name), code: fault?.code, reason: fault?.reason },
        'shutdown: document not stored; its changes since the last store are lost',
      )
    }
    return unstored
  }

  private async write(document: Document): Promise<void> {
    const name = document.name
    const documentId = this.documentIds.get(name)
    if (!documentId) return // never loaded by us (or already unloaded): nothing of ours to store
    const generation = this.dirty.get(name)
    // Hocuspocus also stores on disconnect when nothing changed; a no-op store would still move the
    // content-updated time (and reorder listings), so only changed documents are written.
    if (generation === undefined) return
    const started = performance.now()
    try {
      const state = Y.encodeStateAsUpdate(document)
      const vector = Y.encodeStateVector(document) // the same snapshot: nothing runs between the two
      const fragment = document.getXmlFragment(FRAGMENT_NAME)
      const mergeWithStored = this.deps.mergeWithStored
      try {
        await this.deps.documents.storeState(
          documentId,
          {
            state,
            vector,
            title: readTitle(fragment),
            text: readPlainText(fragment, MAX_SEARCH_TEXT_CHARS),
            // From the document's shared memo: only sections edited since the last store are re-hashed.
            outline: liveOutline(fragment),
          },
          { mergeWithStored },
        )
        this.faults.delete(name)
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error
        // Content or a bug in what is derived from it: reported, and the state stored alone.
        this.reportFault(name, documentId, error, 'full store failed; storing the state alone')
        await this.deps.documents.storeState(
          documentId,
          { state, vector, title: '', text: '' },
          { mergeWithStored, stateOnly: true },
        )
        const fault = this.faults.get(name)
        if (fault) {
          fault.retries = 0
          fault.stalled = false
        }
      }
      if (this.dirty.get(name) === generation) this.dirty.delete(name)
      this.stateSizes.set(name, state.byteLength)
      const listeners = this.storedListeners.get(name)
      if (listeners?.size) {
        const covered = Y.decodeStateVector(vector)
        for (const listener of listeners) listener(covered)
      }
      this.deps.metrics.stores.inc()
      this.deps.metrics.storeLatency.observe({}, (performance.now() - started) / 1000)
      this.deps.logger.debug({ documentId, bytes: state.byteLength }, 'document stored')
    } catch (error) {
      this.deps.metrics.storeFailures.inc()
      if (isDatabaseUnavailable(error))
        this.deps.logger.error(
          { documentId, err: error },
          'document store failed; kept in memory, will retry',
        )
      else this.logFault(name, documentId, error, 'document store failed, even as the state alone')
      throw error
    }
  }

  /**
   * Counts a fault and logs it at error level once per document and reason (until a full store succeeds),
   * with the error's code and the first line of its message: never the document's text, which a query's
   * parameters or an error's detail can hold.
   */
  private reportFault(name: string, documentId: string, error: unknown, what: string): void {
    this.deps.metrics.storeFaults.inc()
    this.logFault(name, documentId, error, what)
  }

  /** Records the fault's reason and logs it, once per document and reason (see `reportFault`). */
  private logFault(name: string, documentId: string, error: unknown, what: string): void {
    const { code, reason } = faultReason(error)
    const fault = this.faults.get(name)
    if (fault && fault.code === code && fault.reason === reason) return
    if (fault) {
      fault.code = code
      fault.reason = reason
    } else this.faults.set(name, { code, reason, retries: 0, stalled: false })
    this.deps.logger.error({ documentId, code, reason }, `${what} (${code})`)
  }

  /** After a fault: a few retries with backoff, then none until the document changes (`onChange`). */
  private scheduleFaultRetry(document: Document): void {
    const name = document.name
    const fault = this.faults.get(name)
    if (!fault || fault.retries < STORE_FAULT_MAX_RETRIES) {
      if (fault) fault.retries++
      this.scheduleRetry(document)
      return
    }
    if (fault.stalled) return
    fault.stalled = true
    this.clearRetry(name)
    this.deps.logger.error(
      { documentId: this.documentIds.get(name), code: fault.code, reason: fault.reason },
      'document store: no more retries until the document changes; its changes stay in memory',
    )
  }

  private scheduleRetry(document: Document): void {
    const name = document.name
    const entry = this.retries.get(name) ?? { attempt: 0, timer: null }
    if (entry.timer) clearTimeout(entry.timer)
    const delay = Math.min(STORE_RETRY_BASE_MS * 2 ** entry.attempt, STORE_RETRY_MAX_MS)
    entry.attempt++
    entry.timer = setTimeout(() => {
      entry.timer = null
      const instance = this.instance
      if (!instance?.documents.has(name)) return
      void instance.storeDocumentHooks(
        document,
        {
          instance,
          document,
          documentName: name,
          clientsCount: 0,
          lastContext: {},
          lastTransactionOrigin: undefined,
        },
        true,
      )
    }, delay)
    this.retries.set(name, entry)
  }

  private clearRetry(name: string): void {
    const entry = this.retries.get(name)
    if (entry?.timer) clearTimeout(entry.timer)
    this.retries.delete(name)
  }
}

/** An error's code (SQLSTATE, Prisma code or name) and the first line of its message, cut short. */
function faultReason(error: unknown): { code: string; reason: string } {
  const e = (error ?? {}) as {
    name?: unknown
    code?: unknown
    message?: unknown
    meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; originalMessage?: unknown } } }
  }
  const cause = e.meta?.driverAdapterError?.cause
  const code = [cause?.originalCode, e.code, e.name].find((c) => typeof c === 'string' && c !== '')
  const message = [cause?.originalMessage, e.message].find((m) => typeof m === 'string' && m.trim() !== '')
  const firstLine = typeof message === 'string' ? (message.trim().split('\n')[0] ?? '') : String(error)
  return {
    code: (code as string | undefined) ?? 'unknown',
    reason: firstLine.slice(0, FAULT_REASON_MAX_CHARS),
  }
}
