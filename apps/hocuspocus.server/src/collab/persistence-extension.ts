/**
 * Loads a document's stored state when it opens and stores it after changes (Hocuspocus debounces).
 *
 * A failed store is logged, counted, and retried with backoff; Hocuspocus keeps a document whose store
 * failed in memory, so nothing is lost while the database is away. `flush()` is the shutdown path:
 * it stores every document with unstored changes and waits, within a deadline.
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
import type { DocumentsService } from '../documents/service.ts'
import { MAX_SEARCH_TEXT_CHARS } from '../documents/store.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'

/** First retry after a failed store; doubles per failure up to the cap. */
export const STORE_RETRY_BASE_MS = 500
export const STORE_RETRY_MAX_MS = 15_000

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
  }

  async onStoreDocument(payload: onStoreDocumentPayload): Promise<void> {
    try {
      await this.write(payload.document)
      this.clearRetry(payload.documentName)
    } catch {
      this.scheduleRetry(payload.document)
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
    if (!this.retries.get(documentName)?.timer) this.scheduleRetry(document)
    throw new Error('unstored changes: kept in memory until stored')
  }

  async afterUnloadDocument({ documentName }: { documentName: string }): Promise<void> {
    this.documentIds.delete(documentName)
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

  /** Documents with changes not yet stored. */
  pendingCount(): number {
    return this.dirty.size
  }

  /**
   * Stores every loaded document that has unstored changes, retrying until all are stored or the
   * deadline passes. Returns the rooms still unstored (empty on success).
   */
  async flush(deadlineMs: number): Promise<string[]> {
    const instance = this.instance
    if (!instance) return []
    for (const entry of this.retries.values()) if (entry.timer) clearTimeout(entry.timer)
    const end = Date.now() + deadlineMs
    let delay = STORE_RETRY_BASE_MS
    for (;;) {
      const pending = [...this.dirty.keys()].filter((name) => instance.documents.has(name))
      for (const name of [...this.dirty.keys()]) if (!instance.documents.has(name)) this.dirty.delete(name)
      if (pending.length === 0) return []
      await Promise.all(
        pending.map(async (name) => {
          const document = instance.documents.get(name)
          if (!document) return
          await document.saveMutex.runExclusive(() => this.write(document)).catch(() => {})
        }),
      )
      if (this.dirty.size === 0) return []
      if (Date.now() + delay > end) return [...this.dirty.keys()]
      await Bun.sleep(delay)
      delay = Math.min(delay * 2, STORE_RETRY_MAX_MS)
    }
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
        { mergeWithStored: this.deps.mergeWithStored },
      )
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
      this.deps.logger.error({ documentId, err: error }, 'document store failed; kept in memory, will retry')
      throw error
    }
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
