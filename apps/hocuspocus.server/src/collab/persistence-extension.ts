/**
 * Loads a document's stored content when it opens and stores its changes (Hocuspocus debounces).
 *
 * A store appends the Yjs updates made since the last store to the document's update log: one row of a
 * few bytes to a few KiB, whatever the document's size. Loading applies the snapshot, then the log.
 * Compaction merges the log into a new snapshot (with the stored outline and, now and then, a version)
 * once the log holds COMPACT_AFTER_UPDATES rows or as many bytes as the snapshot (at least
 * COMPACT_MIN_LOG_BYTES), and when the document unloads; it runs after the store that made it due, so
 * no write waits for it. The title and search text are refreshed from the live document at most every
 * `searchRefreshMs` while it changes (the first store after a quiet period refreshes them at once, and a
 * timer catches the last change), so search lags the content by at most that long.
 *
 * A failed store is logged, counted, and retried with backoff; its updates stay queued in memory (and
 * Hocuspocus keeps the document), so nothing is lost while the database is away. `flush()` is the
 * shutdown path: it stores every document with unstored changes and waits, within a deadline.
 *
 * A write that fails for any other reason (content the database refuses, a bug) is a fault: reported
 * once with the document and the reason (code and message, never text), counted, and what editors wrote
 * is stored anyway: an update is bytes alone, and a compaction that fails is done again as the state
 * alone (no outline, title and search text as they were). Found by hand: one NUL typed into a heading
 * failed every store through the stored outline; the store was retried forever while 20 acknowledged
 * paragraphs piled up, and all were lost at the restart. If even the update cannot be stored, it is
 * retried STORE_FAULT_MAX_RETRIES times, then not until the document changes again; at shutdown it is
 * tried once after the other documents and listed unstored at once.
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
import { MAX_FIND_TEXT_CHARS } from '../documents/search.ts'
import { applyStored, type DocumentsService } from '../documents/service.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import {
  COMPACT_AFTER_UPDATES,
  COMPACT_MIN_LOG_BYTES,
  SEARCH_REFRESH_DUTY,
  SEARCH_REFRESH_MS,
} from './store-policy.ts'

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

/** What this instance knows of a loaded document's stored content, and its unstored updates. */
type Stored = {
  documentId: string
  /** Updates made since the last store took its batch, in order (every origin, peers' included). */
  pending: Uint8Array[]
  /** A batch is being written (its updates are no longer in `pending`). */
  writing: boolean
  /** Bytes of the stored snapshot, and rows and bytes of the log after it. */
  snapshotBytes: number
  logRows: number
  logBytes: number
  /** When the last store of this instance succeeded (the content-updated time the refresh writes). */
  changedAt: Date | undefined
  /** When the title and search text were last written (0: not since load), and whether they lag. */
  derivedAt: number
  derivedStale: boolean
  derivedTimer: ReturnType<typeof setTimeout> | null
  /** How long the last refresh of the title and search text took (ms). */
  derivedCostMs: number
  compacting: boolean
  detach(): void
}

/** A document whose last store failed for a reason other than the database being away. */
type Fault = {
  /** What failed: storing the content (the update or a compaction), or only its title and search text. */
  part: 'content' | 'derived'
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

  private readonly stored = new Map<string, Stored>()
  private readonly retries = new Map<
    string,
    { attempt: number; timer: ReturnType<typeof setTimeout> | null }
  >()
  /** Documents whose last write failed for content or a bug (cleared by a whole store). */
  private readonly faults = new Map<string, Fault>()
  private instance: Hocuspocus | undefined
  private readonly storedListeners = new Map<string, Set<(vector: Map<number, number>) => void>>()
  /** Set by flush(): shutdown stores what is pending and compacts nothing. */
  private closing = false
  private readonly compactAfterUpdates: number
  private readonly searchRefreshMs: number

  constructor(
    private readonly deps: {
      documents: DocumentsService
      logger: Logger
      metrics: Metrics
      /** Several instances share the database (Redis): compaction merges what the others logged. */
      mergeWithStored?: boolean
      /** COMPACT_AFTER_UPDATES unless given. */
      compactAfterUpdates?: number
      /** SEARCH_REFRESH_MS unless given; 0 refreshes the title and search text at every store. */
      searchRefreshMs?: number
    },
  ) {
    this.compactAfterUpdates = deps.compactAfterUpdates ?? COMPACT_AFTER_UPDATES
    this.searchRefreshMs = deps.searchRefreshMs ?? SEARCH_REFRESH_MS
  }

  async onConfigure({ instance }: { instance: Hocuspocus }): Promise<void> {
    this.instance = instance
  }

  async onLoadDocument({ documentName, document }: onLoadDocumentPayload): Promise<void> {
    const loaded = await this.deps.documents.loadStored(documentName)
    if (!loaded) throw new Error(`no stored document for room ${documentName}`)
    applyStored(document, loaded)
    // Every later change, from any origin, is queued for the next store: registered before any other
    // hook can change the document (heading ids repaired at load included), and called synchronously
    // with each transaction, so a batch and the state vector taken with it always agree.
    const queue = (update: Uint8Array) => {
      const entry = this.stored.get(documentName)
      if (entry) entry.pending.push(update)
    }
    document.on('update', queue)
    const entry: Stored = {
      documentId: loaded.documentId,
      pending: [],
      writing: false,
      snapshotBytes: loaded.snapshot?.byteLength ?? 0,
      logRows: loaded.updates.length,
      logBytes: loaded.updateBytes,
      changedAt: undefined,
      derivedAt: 0,
      derivedStale: false,
      derivedTimer: null,
      derivedCostMs: 0,
      compacting: false,
      detach: () => document.off('update', queue),
    }
    this.stored.set(documentName, entry)
    this.deps.metrics.documentLoads.inc()
    // A log left long by a crash (or an older instance) is merged soon after the load.
    if (this.compactionDue(entry)) this.scheduleCompaction(document)
  }

  async onChange({ documentName }: onChangePayload): Promise<void> {
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
   * A document that unloads with a log is compacted first, so a cold read finds one snapshot and its
   * stored outline (a failed compaction loses nothing: the log stays and is applied at the next load).
   */
  async beforeUnloadDocument({ documentName, document }: beforeUnloadDocumentPayload): Promise<void> {
    const entry = this.stored.get(documentName)
    if (!entry) return
    if (this.unstored(entry)) {
      // A stalled fault waits for the next change (or shutdown), in memory: never dropped.
      if (!this.retries.get(documentName)?.timer && !this.faults.get(documentName)?.stalled)
        this.scheduleRetry(document)
      throw new Error('unstored changes: kept in memory until stored')
    }
    if (entry.logRows > 0 && !this.closing)
      await document.saveMutex.runExclusive(() => this.compact(document)).catch(() => {})
  }

  async afterUnloadDocument({ documentName }: { documentName: string }): Promise<void> {
    const entry = this.stored.get(documentName)
    if (entry) {
      entry.detach()
      if (entry.derivedTimer) clearTimeout(entry.derivedTimer)
    }
    this.stored.delete(documentName)
    this.faults.delete(documentName)
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

  /** Bytes of the document's stored content (snapshot and log) as this instance last wrote or loaded it. */
  stateBytes(documentName: string): number {
    const entry = this.stored.get(documentName)
    return entry ? entry.snapshotBytes + entry.logBytes : 0
  }

  /** Rows in the document's update log since its snapshot, as this instance knows them. */
  logRows(documentName: string): number {
    return this.stored.get(documentName)?.logRows ?? 0
  }

  /** Rooms whose last store failed for content or a bug, with the code and reason (never text). */
  faultsByRoom(): Map<string, { code: string; reason: string; stalled: boolean }> {
    return new Map(
      [...this.faults].map(([room, f]) => [room, { code: f.code, reason: f.reason, stalled: f.stalled }]),
    )
  }

  /** Documents with changes not yet stored. */
  pendingCount(): number {
    let count = 0
    for (const entry of this.stored.values()) if (this.unstored(entry)) count++
    return count
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
    this.closing = true
    for (const entry of this.retries.values()) if (entry.timer) clearTimeout(entry.timer)
    for (const entry of this.stored.values()) if (entry.derivedTimer) clearTimeout(entry.derivedTimer)
    const end = Date.now() + deadlineMs
    const givenUp = new Set<string>()
    const unstoredNames = () =>
      [...this.stored]
        .filter(([name, entry]) => instance.documents.has(name) && this.unstored(entry))
        .map(([name]) => name)
    let delay = STORE_RETRY_BASE_MS
    for (;;) {
      const pending = unstoredNames().filter((name) => !givenUp.has(name))
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
      if (unstoredNames().every((name) => givenUp.has(name))) break
      if (Date.now() + delay > end) break
      await Bun.sleep(delay)
      delay = Math.min(delay * 2, STORE_RETRY_MAX_MS)
    }
    // Titles and search text still behind the content are written once, within the same deadline.
    for (const [name, entry] of this.stored) {
      const document = instance.documents.get(name)
      if (!document || !entry.derivedStale || this.unstored(entry) || Date.now() >= end) continue
      await document.saveMutex.runExclusive(() => this.refreshDerived(document, entry)).catch(() => {})
    }
    const unstored = unstoredNames()
    for (const name of unstored) {
      const fault = this.faults.get(name)
      this.deps.logger.error(
        { documentId: this.stored.get(name)?.documentId, code: fault?.code, reason: fault?.reason },
        'shutdown: document not stored; its changes since the last store are lost',
      )
    }
    return unstored
  }

  private unstored(entry: Stored): boolean {
    return entry.pending.length > 0 || entry.writing
  }

  private compactionDue(entry: Stored): boolean {
    return (
      entry.logRows >= this.compactAfterUpdates ||
      (entry.logBytes >= COMPACT_MIN_LOG_BYTES && entry.logBytes >= entry.snapshotBytes)
    )
  }

  /**
   * One store: the queued updates, merged into one, appended to the log. Then, when due, the title and
   * search text (at once after a quiet period, else by a timer) and compaction (after this store).
   */
  private async write(document: Document): Promise<void> {
    const name = document.name
    const entry = this.stored.get(name)
    if (!entry) return // never loaded by us (or already unloaded): nothing of ours to store
    // Hocuspocus also stores on disconnect when nothing changed: nothing is written then, unless the
    // title and search text are behind and due (a refresh the database was away for, say).
    if (entry.pending.length === 0) {
      if (entry.derivedStale && this.derivedDue(entry)) await this.refreshDerived(document, entry)
      return
    }
    const started = performance.now()
    const batch = entry.pending
    entry.pending = []
    entry.writing = true
    const vector = Y.encodeStateVector(document) // covers the batch: updates are queued synchronously
    let update: Uint8Array
    try {
      update = batch.length === 1 ? (batch[0] as Uint8Array) : Y.mergeUpdates(batch)
      await this.deps.documents.appendUpdate(entry.documentId, update)
    } catch (error) {
      entry.pending = batch.concat(entry.pending) // stays queued, in order, for the retry
      entry.writing = false
      this.deps.metrics.storeFailures.inc()
      if (isDatabaseUnavailable(error))
        this.deps.logger.error(
          { documentId: entry.documentId, err: error },
          'document store failed; kept in memory, will retry',
        )
      else this.reportFault(name, entry.documentId, error, 'document store failed')
      throw error
    }
    entry.writing = false
    entry.changedAt = new Date()
    entry.logRows++
    entry.logBytes += update.byteLength
    entry.derivedStale = true
    const fault = this.faults.get(name)
    if (fault?.part === 'content') this.faults.delete(name)
    const listeners = this.storedListeners.get(name)
    if (listeners?.size) {
      const covered = Y.decodeStateVector(vector)
      for (const listener of listeners) listener(covered)
    }
    this.deps.metrics.stores.inc()
    this.deps.metrics.storeLatency.observe({}, (performance.now() - started) / 1000)
    this.deps.logger.debug({ documentId: entry.documentId, bytes: update.byteLength }, 'document stored')
    // With no interval (tests), at once: search finds what a write wrote when it is answered. Otherwise
    // by the timer, also when already due, so the write is answered without waiting for it.
    if (this.searchRefreshMs === 0) await this.refreshDerived(document, entry)
    else this.scheduleDerived(document, entry)
    if (this.compactionDue(entry)) this.scheduleCompaction(document)
  }

  /**
   * Due once `searchRefreshMs` has passed since the last refresh, and SEARCH_REFRESH_DUTY times as long as
   * that refresh took: refreshing a large document (a million characters to index: ~0.3 s on PGlite,
   * on this thread) then takes at most 1/SEARCH_REFRESH_DUTY of the time while it is typed into.
   */
  private derivedWait(entry: Stored): number {
    if (this.searchRefreshMs === 0) return 0
    const interval = Math.max(this.searchRefreshMs, entry.derivedCostMs * SEARCH_REFRESH_DUTY)
    return Math.max(0, entry.derivedAt + interval - Date.now())
  }

  private derivedDue(entry: Stored): boolean {
    return this.derivedWait(entry) === 0
  }

  /**
   * Writes the title and search text of the live document. A failure is a fault of the derived data
   * only (reported once; the content is stored): they stay as they were until a later refresh succeeds.
   */
  private async refreshDerived(document: Document, entry: Stored): Promise<void> {
    if (entry.derivedTimer) clearTimeout(entry.derivedTimer)
    entry.derivedTimer = null
    entry.derivedAt = Date.now()
    entry.derivedStale = false
    const fragment = document.getXmlFragment(FRAGMENT_NAME)
    const started = performance.now()
    try {
      await this.deps.documents.refreshDerived(entry.documentId, {
        title: readTitle(fragment),
        text: readPlainText(fragment, MAX_FIND_TEXT_CHARS),
        changedAt: entry.changedAt,
      })
      entry.derivedCostMs = performance.now() - started
      if (this.faults.get(document.name)?.part === 'derived') this.faults.delete(document.name)
    } catch (error) {
      entry.derivedStale = true
      if (isDatabaseUnavailable(error)) return // refreshed by the next store once it is back
      this.reportFault(document.name, entry.documentId, error, 'title and search text not stored', 'derived')
    }
  }

  /** A refresh when the interval since the last one has passed (a store with nothing queued does it). */
  private scheduleDerived(document: Document, entry: Stored): void {
    if (entry.derivedTimer || this.closing) return
    const wait = this.derivedWait(entry)
    entry.derivedTimer = setTimeout(() => {
      entry.derivedTimer = null
      const instance = this.instance
      if (!instance?.documents.has(document.name) || this.stored.get(document.name) !== entry) return
      void document.saveMutex
        .runExclusive(async () => {
          if (entry.derivedStale) await this.refreshDerived(document, entry)
        })
        .catch(() => {})
    }, wait)
  }

  /** Compaction after the current store, so the write that made it due is answered first. */
  private scheduleCompaction(document: Document): void {
    const entry = this.stored.get(document.name)
    if (!entry || entry.compacting || this.closing) return
    entry.compacting = true
    setTimeout(() => {
      void document.saveMutex
        .runExclusive(() => this.compact(document))
        .catch(() => {})
        .finally(() => {
          entry.compacting = false
        })
    }, 0)
  }

  /**
   * Merges the log into a new snapshot with its title, search text and outline, in one transaction.
   * Content the database refuses (or a bug in what is derived) makes it the state alone; a failure of
   * that too, or the database being away, leaves the log as it is (nothing is lost) for the next try.
   */
  private async compact(document: Document): Promise<void> {
    const name = document.name
    const entry = this.stored.get(name)
    if (!entry || entry.logRows === 0 || !this.instance?.documents.has(name)) return
    // Shutdown compacts nothing (a compaction scheduled just before it would race the database's close).
    if (this.closing) return
    const started = performance.now()
    const state = Y.encodeStateAsUpdate(document)
    const vector = Y.encodeStateVector(document) // the same snapshot: nothing runs between the two
    const mergeWithStored = this.deps.mergeWithStored
    let stored: { bytes: number }
    try {
      try {
        const fragment = document.getXmlFragment(FRAGMENT_NAME)
        // Title and search text only when a refresh is still due: otherwise they are current, and
        // reading up to a million characters for them would be wasted.
        const keepDerived = !entry.derivedStale
        stored = await this.deps.documents.storeState(
          entry.documentId,
          {
            state,
            vector,
            title: keepDerived ? '' : readTitle(fragment),
            text: keepDerived ? '' : readPlainText(fragment, MAX_FIND_TEXT_CHARS),
            changedAt: entry.changedAt,
            // From the document's shared memo: only sections edited since the last time are re-hashed.
            outline: liveOutline(fragment),
          },
          { mergeWithStored, compact: true, keepDerived },
        )
        this.faults.delete(name)
        entry.derivedAt = Date.now()
        entry.derivedStale = false
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error
        this.reportFault(name, entry.documentId, error, 'compaction failed; compacting the state alone')
        stored = await this.deps.documents.storeState(
          entry.documentId,
          { state, vector, title: '', text: '' },
          { mergeWithStored, compact: true, stateOnly: true },
        )
      }
    } catch (error) {
      this.deps.metrics.storeFailures.inc()
      if (isDatabaseUnavailable(error))
        this.deps.logger.warn(
          { documentId: entry.documentId, err: error },
          'compaction failed; the log stays',
        )
      else
        this.logFault(
          name,
          entry.documentId,
          error,
          'compaction failed, even as the state alone; the log stays',
        )
      throw error
    }
    entry.snapshotBytes = stored.bytes
    entry.logRows = 0
    entry.logBytes = 0
    this.deps.metrics.compactions.inc()
    this.deps.logger.debug(
      { documentId: entry.documentId, bytes: stored.bytes, ms: Math.round(performance.now() - started) },
      'document log compacted',
    )
  }

  /**
   * Counts a fault and logs it at error level once per document and reason (until a full store succeeds),
   * with the error's code and the first line of its message: never the document's text, which a query's
   * parameters or an error's detail can hold.
   */
  private reportFault(
    name: string,
    documentId: string,
    error: unknown,
    what: string,
    part: Fault['part'] = 'content',
  ): void {
    this.deps.metrics.storeFaults.inc()
    this.logFault(name, documentId, error, what, part)
  }

  /** Records the fault's reason and logs it, once per document and reason (see `reportFault`). */
  private logFault(
    name: string,
    documentId: string,
    error: unknown,
    what: string,
    part: Fault['part'] = 'content',
  ): void {
    const { code, reason } = faultReason(error)
    const fault = this.faults.get(name)
    if (fault && fault.code === code && fault.reason === reason && fault.part === part) return
    if (fault) {
      fault.code = code
      fault.reason = reason
      fault.part = part
    } else this.faults.set(name, { part, code, reason, retries: 0, stalled: false })
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
      { documentId: this.stored.get(name)?.documentId, code: fault.code, reason: fault.reason },
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
