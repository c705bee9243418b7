/**
 * Loads a document's stored content when it opens and stores its changes (Hocuspocus debounces): this
 * file wires Hocuspocus's hooks to the pieces in persistence/.
 *
 * - A store appends the Yjs updates made since the last store to the document's update log
 *   (log-append.ts); loading applies the snapshot, then the log.
 * - Compaction merges the log into a new snapshot when it grows, and when the document unloads
 *   (compaction.ts; store-policy.ts says when).
 * - The title and search text follow the live document at most `searchRefreshMs` behind (title-search.ts).
 * - A failed store is logged, counted, and retried with backoff; its updates stay queued in memory (and
 *   Hocuspocus keeps the document), so nothing is lost while the database is away (retry.ts).
 * - A write that fails for any other reason (content the database refuses, a bug) is a fault (faults.ts):
 *   reported once with the document and the reason (code and message, never text), and what editors wrote
 *   is stored anyway: an update is bytes alone, and a failed compaction is done again as the state alone.
 *   Found by hand: one NUL typed into a heading failed every store through the stored outline; the store
 *   was retried forever while 20 acknowledged paragraphs piled up, and all were lost at the restart. If
 *   even the update cannot be stored, it is retried STORE_FAULT_MAX_RETRIES times, then not until the
 *   document changes again; at shutdown it is tried once after the other documents and listed unstored.
 * - `flush()` is the shutdown path: it stores every document with unstored changes and waits, within a
 *   deadline (flush.ts).
 */
import type {
  beforeUnloadDocumentPayload,
  Document,
  Extension,
  Hocuspocus,
  onChangePayload,
  onDisconnectPayload,
  onLoadDocumentPayload,
  onStoreDocumentPayload,
} from '@hocuspocus/server'
import * as Y from 'yjs'
import { isDatabaseUnavailable } from '../db/errors.ts'
import { rawAuthorKey, rawAuthorOf } from '../documents/history-authors.ts'
import type { DocumentsService } from '../documents/service.ts'
import type { LoadedParts } from '../documents/stored-content.ts'
import { adoptStoredOutline, applyStored } from '../documents/stored-parts.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import { runInSlices } from '../turns.ts'
import { Compaction } from './persistence/compaction.ts'
import { StoreFaults } from './persistence/faults.ts'
import { flushLoaded } from './persistence/flush.ts'
import { LoadedDocuments, unstored } from './persistence/loaded.ts'
import { LoadedUpdates } from './persistence/loaded-updates.ts'
import { LogAppend } from './persistence/log-append.ts'
import { StoreRetries } from './persistence/retry.ts'
import { TitleSearchRefresh } from './persistence/title-search.ts'
import { VersionPolicy } from './persistence/versions.ts'
import { WriteGate } from './persistence/write-gate.ts'
import { COMPACT_AFTER_UPDATES, LOAD_IN_PARTS_BYTES, SEARCH_REFRESH_MS } from './store-policy.ts'

/**
 * Applies a part of a load to a document nobody sees yet without its 'update' listeners (Hocuspocus's own,
 * which broadcasts to the connections it has: none while loading; ours are added after the load): Yjs
 * encodes a transaction's update only for them, and re-encoding each part took a sixth of a large load's
 * CPU on the event loop (red-team-history's profile of a revert in a 7.8 MiB state: ~50 of the load's
 * ~300 samples). Synchronous: nothing else runs while they are set aside.
 */
function applyUnheard(document: Document, part: Uint8Array): void {
  const listeners = document._observers.get('update')
  document._observers.delete('update')
  try {
    Y.applyUpdate(document, part)
  } finally {
    if (listeners) document._observers.set('update', listeners)
  }
}

export class PersistenceExtension implements Extension {
  priority = 100
  extensionName = 'persistence'

  private readonly loaded = new LoadedDocuments()
  private readonly faults: StoreFaults
  private readonly retries: StoreRetries
  private readonly titleSearch: TitleSearchRefresh
  private readonly compaction: Compaction
  private readonly append: LogAppend
  private readonly versions: VersionPolicy
  private readonly writes = new WriteGate()
  /** What each large live document was built from, for editors' sync answers made on the worker. */
  readonly loadedUpdates = new LoadedUpdates()

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
      /** LIVE_MERGE_STRUCTS (store-policy.ts) unless given. */
      liveMergeStructs?: number
      /**
       * When versions are taken (limits.ts MIN_VERSION_INTERVAL_MS, VERSION_PAUSE_MS and
       * AGENT_VERSION_PAUSE_MS unless given).
       */
      versionTiming?: { minIntervalMs?: number; pauseMs?: number; agentPauseMs?: number }
    },
  ) {
    const { documents, logger, metrics } = deps
    this.faults = new StoreFaults({ logger, metrics })
    this.retries = new StoreRetries(this.loaded, this.faults, logger)
    this.titleSearch = new TitleSearchRefresh(
      this.loaded,
      this.faults,
      documents,
      deps.searchRefreshMs ?? SEARCH_REFRESH_MS,
      metrics,
    )
    this.compaction = new Compaction(this.loaded, this.faults, {
      documents,
      logger,
      metrics,
      mergeWithStored: deps.mergeWithStored,
      compactAfterUpdates: deps.compactAfterUpdates ?? COMPACT_AFTER_UPDATES,
      minVersionIntervalMs: deps.versionTiming?.minIntervalMs,
      // Section totals follow the live document as often as its title and search text do.
      measureIntervalMs: deps.searchRefreshMs ?? SEARCH_REFRESH_MS,
      liveMergeStructs: deps.liveMergeStructs,
    })
    this.versions = new VersionPolicy(this.loaded, this.compaction, deps.versionTiming)
    this.append = new LogAppend(
      this.loaded,
      {
        faults: this.faults,
        titleSearch: this.titleSearch,
        compaction: this.compaction,
        versions: this.versions,
      },
      { documents, logger, metrics },
    )
  }

  async onConfigure({ instance }: { instance: Hocuspocus }): Promise<void> {
    this.loaded.instance = instance
  }

  async onLoadDocument({ documentName, document }: onLoadDocumentPayload): Promise<void> {
    const read = await this.deps.documents.loadForLoad(documentName)
    if (!read) throw new Error(`no stored document for room ${documentName}`)
    const loaded = await this.applyLoaded(document, read)
    const entry = this.loaded.track(documentName, document, loaded)
    this.deps.metrics.documentLoads.inc()
    // A log left long by a crash (or an older instance) is merged soon after the load.
    if (this.compaction.due(entry)) this.compaction.schedule(document)
  }

  /**
   * Applies the stored content to the document being loaded: at once when small, else in parts split on
   * the documents' worker (LOAD_IN_PARTS_BYTES), applied in slices of the event loop's turns (turns.ts: parts
   * applied quickly need not each wait for a turn, a slow one holds others for one part only), so a load of
   * megabytes never holds other clients for long (nobody sees the document before its load ends). When
   * the worker refuses (its queue is full, its deadline passed), it is applied at once as before.
   */
  private async applyLoaded(document: Document, read: LoadedParts): Promise<LoadedParts> {
    const snapshotBytes = read.snapshot?.byteLength ?? read.snapshotBytes ?? 0
    const bytes = snapshotBytes + read.updateBytes
    const snapshot = read.slicedSnapshot ?? read.snapshot
    const parts =
      bytes >= LOAD_IN_PARTS_BYTES && !this.loaded.closing
        ? await this.deps.documents
            .splitStored(read.documentId, { snapshot, updates: read.updates })
            .catch(() => null)
        : null
    // What the rest of the load knows of it (its sizes, its outline): the bytes stay unread when split.
    const loaded: LoadedParts = { ...read, slicedSnapshot: null, snapshotBytes }
    if (parts?.kind !== 'ok') {
      // Refused (the queue is full, the deadline passed): decoded and applied here, at once, as before.
      applyStored(document, { ...loaded, snapshot })
      return { ...loaded, snapshot }
    }
    const empty = document.store.clients.size === 0
    // Kept for editors' sync answers, made on the worker from them (persistence/loaded-updates.ts).
    this.loadedUpdates.keep(document, parts.value)
    const applying = function* () {
      for (const part of parts.value) {
        applyUnheard(document, part)
        yield
      }
    }
    await runInSlices(applying())
    adoptStoredOutline(document, loaded, empty)
    this.deps.metrics.documentLoadsInParts.inc()
    return loaded
  }

  /**
   * The last connection gone: Hocuspocus tries the unload now (or after its pending store) and gives up
   * if the save lock is held then; `unloadIfIdle` asks again once it is released.
   */
  async onDisconnect({ document }: onDisconnectPayload): Promise<void> {
    if (document.getConnectionsCount() === 0) this.loaded.unloadIfIdle(document)
  }

  async onChange({ documentName }: onChangePayload): Promise<void> {
    this.faults.changed(documentName)
  }

  async onStoreDocument(payload: onStoreDocumentPayload): Promise<void> {
    try {
      await this.append.write(payload.document)
      this.retries.clear(payload.documentName)
      // Section totals follow the edit (only changed blocks are rendered), off any read's path, at most
      // every `searchRefreshMs`.
      this.compaction.measureSoon(payload.document)
    } catch (error) {
      if (isDatabaseUnavailable(error)) this.retries.schedule(payload.document)
      else this.retries.scheduleAfterFault(payload.document)
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
   * A large one (compaction.ts `mergesOnly`) is compacted once it has unloaded instead, so its decoded
   * copy on the documents' worker never stands beside the live one (`afterUnloadDocument`).
   */
  async beforeUnloadDocument({ documentName, document }: beforeUnloadDocumentPayload): Promise<void> {
    const entry = this.loaded.get(documentName)
    if (!entry) return
    this.keepUnstored(entry, document)
    // An agent's version waiting at its bound first, so what people typed after it stays out of it.
    await this.settleVersions(document).catch(() => {})
    // People's last changes become a version as they leave, when the interval allows one.
    const version =
      entry.unversioned && this.versions.allowed(entry)
        ? { reason: entry.versionReason ?? ('unload' as const) }
        : undefined
    if (this.loaded.closing) return
    if (this.compaction.mergesOnly(document)) {
      entry.afterUnload =
        entry.logRows > 0 || version || entry.merged
          ? { version, live: new WeakRef(document as object) }
          : null
      return
    }
    if (entry.logRows > 0 || version) {
      await this.compaction.run(document, version).catch(() => {})
      // Asked again: while the compaction ran, an editor or a writer may have come, changed the document,
      // failed to store and gone. Hocuspocus checks only connections and pending stores after this hook,
      // so such a change was unloaded with the document (lost).
      this.keepUnstored(entry, document)
    }
  }

  /** Throws (so Hocuspocus keeps the document) while it holds changes not stored, and sees a store coming. */
  private keepUnstored(entry: Parameters<typeof unstored>[0], document: Document): void {
    if (!unstored(entry)) return
    // A stalled fault waits for the next change (or shutdown), in memory: never dropped.
    if (!this.retries.isScheduled(document.name) && !this.faults.get(document.name)?.stalled)
      this.retries.schedule(document)
    throw new Error('unstored changes: kept in memory until stored')
  }

  async afterUnloadDocument({ documentName }: { documentName: string }): Promise<void> {
    const entry = this.loaded.get(documentName)
    if (entry) {
      entry.detach()
      this.titleSearch.cancel(entry)
      this.versions.cancel(entry)
      this.compaction.cancelMeasure(entry)
      // Not awaited: the document is gone from this instance; a load meanwhile starts an entry of its own.
      const after = entry.afterUnload
      if (after) void this.compaction.compactUnloaded(entry, after.version, after.live)
    }
    this.loaded.entries.delete(documentName)
    this.faults.clear(documentName)
    this.retries.clear(documentName)
  }

  /**
   * Calls `listener` with the state vector each successful store of the document covered and its batch's
   * number, until the returned function is called. Writers use it to know their change is durable
   * without reading it back (log-append.ts).
   */
  onStored(documentName: string, listener: (vector: Map<number, number>, batch: number) => void): () => void {
    return this.append.onStored(documentName, listener)
  }

  /** The number of the last store batch taken: a store numbered above it holds every change made before. */
  batchesTaken(): number {
    return this.append.batchesTaken()
  }

  /**
   * Before a writer's edit (an agent's write, a restore or revert) is applied to a loaded document: what
   * others changed before it is stored and becomes a version of its own first (versions.ts), so the
   * write's version holds only the write. A failure leaves the boundary out, never the write.
   */
  async beforeWrite(document: Document, context: Record<string, unknown>): Promise<void> {
    const entry = this.loaded.get(document.name)
    if (!entry || this.loaded.closing) return
    const author = rawAuthorOf({ source: 'local', context })
    try {
      if (unstored(entry)) await document.saveMutex.runExclusive(() => this.append.write(document))
      await this.versions.beforeAgentWrite(document, entry, author ? rawAuthorKey(author) : '')
    } catch (error) {
      this.deps.logger.warn({ err: error, documentId: entry.documentId }, 'version before a write failed')
    }
  }

  /**
   * Stores the document's unstored changes now, under its save lock (a restore's or revert's "before"
   * version is taken of the stored content). Throws when the store fails (it is retried as any store).
   */
  async storePending(document: Document): Promise<void> {
    const entry = this.loaded.get(document.name)
    if (!entry || !unstored(entry)) return
    await document.saveMutex.runExclusive(() => this.append.write(document))
  }

  /**
   * Takes now the agent's version waiting at its bound, if one waits (versions.ts): before a version of
   * the whole stored content (a restore's or revert's "before"), which would otherwise hold it.
   */
  async settleVersions(document: Document): Promise<void> {
    if (this.loaded.get(document.name)?.agentBound && !this.loaded.closing)
      await this.compaction.runBound(document)
  }

  /** Bytes of the document's stored content (snapshot and log) as this instance last wrote or loaded it. */
  stateBytes(documentName: string): number {
    const entry = this.loaded.get(documentName)
    return entry ? entry.snapshotBytes + entry.logBytes : 0
  }

  /** Rows in the document's update log since its snapshot, as this instance knows them. */
  logRows(documentName: string): number {
    return this.loaded.get(documentName)?.logRows ?? 0
  }

  /** Rooms whose last store failed for content or a bug, with the code and reason (never text). */
  faultsByRoom(): Map<string, { code: string; reason: string; stalled: boolean }> {
    return this.faults.byRoom()
  }

  /** Documents with changes not yet stored. */
  pendingCount(): number {
    let count = 0
    for (const entry of this.loaded.entries.values()) if (unstored(entry)) count++
    return count
  }

  /**
   * The stop has begun: no compaction, version or refresh starts from now on, and one the documents'
   * worker refuses is skipped rather than run on the event loop. Called before the stop closes the
   * worker: a compaction the closing worker refused fell back to the event loop under the document's
   * lock, which the stop's store then waited for ('document not stored', exit 1, in a clean-clone run of
   * the balancer rehearsal). Skipping is safe: the log holds every store and is merged at the next load.
   */
  beginClosing(): void {
    this.loaded.closing = true
    this.writes.close()
  }

  /**
   * Admits one of the server's own writes just before it applies its first change: the function to call
   * once its direct connection is closed, or undefined once the stop has begun (the write must apply
   * nothing and say so). The stop's last store waits for the writes admitted before it (write-gate.ts).
   */
  beginWrite(): (() => void) | undefined {
    return this.writes.enter()
  }

  /**
   * Stores every loaded document that has unstored changes, retrying until all are stored or the
   * deadline passes. Returns the rooms still unstored (empty on success); see flush.ts.
   */
  async flush(deadlineMs: number): Promise<string[]> {
    const { faults, retries, titleSearch, append } = this
    const { logger } = this.deps
    const started = Date.now()
    // The writes under way first (half the deadline at most): what they apply after the last store is lost.
    this.writes.close()
    const writing = await this.writes.settled(deadlineMs / 2)
    if (writing > 0) logger.warn({ writes: writing }, 'shutdown: writes still applying at the last store')
    return flushLoaded(
      this.loaded,
      { faults, retries, titleSearch, append, logger },
      deadlineMs - (Date.now() - started),
    )
  }
}
