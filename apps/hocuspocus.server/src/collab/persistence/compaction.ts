/**
 * Compaction: merges a document's update log into a new snapshot (with the stored outline and, now and
 * then, a version) once the log holds COMPACT_AFTER_UPDATES rows or as many bytes as the snapshot (at
 * least COMPACT_MIN_LOG_BYTES), and when the document unloads. It runs after the store that made it due,
 * so no write waits for it. What is stored is merged on the documents' worker (documents/compact-stored.ts),
 * not on the event loop, and without the document's lock: stores go on, and rows they append meanwhile
 * stay in the log. When the worker cannot, the live state is merged here under the lock, as before; a
 * compaction that fails for content or a bug is done again as the state alone (no outline, title and
 * search text as they were); a failure of that too, or the database being away, leaves the log as it is
 * (nothing is lost) for the next try. Shutdown compacts nothing.
 *
 * A document of LIVE_MERGE_STRUCTS items or more is compacted while loaded by merging its stored bytes
 * alone (worker/compact.ts `mergeOnly`): decoding them there made a second copy of the live document on
 * the worker (~290 bytes of heap an item; at the item limit RSS peaked +410 MiB under the red team's
 * item attack, each compaction +100-200 MiB over the live copy). Its snapshot is then stored without an
 * outline and a version taken meanwhile without a summary (an agent's version excepted); the full
 * compaction that writes them runs once it has unloaded and its live copy is gone (`compactUnloaded`).
 */
import {
  documentStructs,
  FRAGMENT_NAME,
  liveOutlineWithTotals,
  outlineMeasureSteps,
  readPlainText,
  readTitle,
} from '@collab/doc-schema'
import type { Document } from '@hocuspocus/server'
import * as Y from 'yjs'
import { isDatabaseUnavailable } from '../../db/errors.ts'
import { diffSinceState, summarize } from '../../documents/history-diff.ts'
import { AUTOMATIC_REASONS, type VersionRequest } from '../../documents/history-store.ts'
import type { DocumentsService } from '../../documents/service.ts'
import { VERSION_INTERVAL_MS } from '../../documents/store.ts'
import type { CompactionRead } from '../../documents/worker/compact.ts'
import { MAX_FIND_TEXT_CHARS, MIN_VERSION_INTERVAL_MS } from '../../limits.ts'
import type { Logger } from '../../logger.ts'
import type { Metrics } from '../../metrics.ts'
import { runInSlices } from '../../turns.ts'
import { COMPACT_MIN_LOG_BYTES, LIVE_MERGE_STRUCTS } from '../store-policy.ts'
import type { StoreFaults } from './faults.ts'
import type { LoadedDocuments, Stored } from './loaded.ts'

/**
 * Blocks of at most this many Yjs items are measured on the event loop after a store (`outlineMeasureSteps`);
 * a dearer block is one step that cannot be sliced (a block renders whole): the red team's paragraph of
 * 10,000 marks (~30,000 items) held the loop 100-800 ms after every edit of it (load 3-11 on 2 cores),
 * others' keystrokes with it. Its section's total is measured when a read needs it, and by the
 * compaction on the documents' worker. At this many items a render is a few ms.
 */
const MEASURE_MAX_ITEMS = 2_000

/** How long the compaction after a large document's unload waits for its live copy to be collected. */
const UNLOADED_COLLECT_WAIT_MS = 30_000
const UNLOADED_COLLECT_POLL_MS = 250
/** And then for the allocator to give the collected copy's pages back, before the worker takes its own. */
const UNLOADED_SETTLE_MS = 1_500

export class Compaction {
  constructor(
    private readonly loaded: LoadedDocuments,
    private readonly faults: StoreFaults,
    private readonly deps: {
      documents: Pick<
        DocumentsService,
        'storeState' | 'compactStored' | 'newestVersionState' | 'resolveAuthors'
      >
      logger: Logger
      metrics: Metrics
      /** Several instances share the database (Redis): compaction merges what the others logged. */
      mergeWithStored?: boolean
      compactAfterUpdates: number
      /** Automatic versions are at least this far apart, counted from the newest stored one too. */
      minVersionIntervalMs?: number
      /** `measureSoon` starts at most this often per document (0: after every store). */
      measureIntervalMs?: number
      /** LIVE_MERGE_STRUCTS unless given (tests make it small). */
      liveMergeStructs?: number
    },
  ) {}

  /**
   * Whether `document` is large enough that its compactions while loaded only merge its stored bytes
   * (LIVE_MERGE_STRUCTS), leaving the full one to `compactUnloaded`.
   */
  mergesOnly(document: Document): boolean {
    return documentStructs(document) >= (this.deps.liveMergeStructs ?? LIVE_MERGE_STRUCTS)
  }

  due(entry: Stored): boolean {
    return (
      entry.logRows >= this.deps.compactAfterUpdates ||
      (entry.logBytes >= COMPACT_MIN_LOG_BYTES && entry.logBytes >= entry.snapshotBytes)
    )
  }

  /** Compaction after the current store, so the write that made it due is answered first. */
  schedule(document: Document): void {
    const entry = this.loaded.get(document.name)
    if (!entry || entry.compacting || this.loaded.closing) return
    entry.compacting = true
    setTimeout(() => {
      void this.run(document)
        .catch(() => {})
        .finally(() => {
          entry.compacting = false
          this.loaded.unloadIfIdle(document)
        })
    }, 0)
  }

  /**
   * Compacts what is stored on the documents' worker (`compactStored`), without the document's lock:
   * stores go on meanwhile, and the rows they append are not merged (they stay for the next compaction).
   * When the worker cannot (its queue is full, a bug), or the database refuses what it merged, the
   * compaction runs here as before: the section totals measured in slices, then the live state merged
   * under the lock.
   */
  async run(document: Document, asked?: VersionRequest): Promise<void> {
    await this.inTurn(document, () => this.runAlone(document, asked))
  }

  /**
   * Takes the agent's version waiting at its bound (`Stored.agentBound`, versions.ts), if one still waits,
   * and nothing else; after the compaction under way.
   */
  async runBound(document: Document): Promise<void> {
    await this.inTurn(document, async () => {
      await this.takeBound(document)
    })
  }

  /**
   * One compaction of a document at a time, each after the last (the lock no longer orders them): two at
   * once would each take the version one asked for.
   */
  private async inTurn(document: Document, work: () => Promise<void>): Promise<void> {
    const previous = this.runs.get(document)
    const mine = (previous ?? Promise.resolve()).catch(() => {}).then(work)
    this.runs.set(document, mine)
    try {
      await mine
    } finally {
      if (this.runs.get(document) === mine) this.runs.delete(document)
    }
  }

  /** The compaction under way of each document, which the next one waits for. */
  private readonly runs = new WeakMap<Document, Promise<void>>()

  private async runAlone(document: Document, asked?: VersionRequest): Promise<void> {
    // Never past an agent's bound without its version: merged into the snapshot, the rows up to it could
    // no longer be told apart from what came after. A compaction that was only due ends with that merge:
    // the rows stored after the bound (the same agent's burst going on has a bound of its own by then)
    // stay for the next one. One that takes a version takes a bound set meanwhile first too.
    if ((await this.takeBound(document)) && !asked) return
    if (asked) await this.takeBound(document)
    if (await this.compactOffThread(document, asked)) return
    await this.measure(document)
    await document.saveMutex.runExclusive(() => this.compact(document, asked))
  }

  /**
   * The agent's version waiting at its bound: the log merged up to that row on the documents' worker
   * and taken as the agent's version, whatever the interval; the rows after it stay in the log, and
   * unversioned. When the worker cannot, the live state is merged under the lock as before (the version
   * then holds what came after the write too, and names its authors). The database being away leaves
   * the bound waiting, for the next compaction or write.
   */
  private async takeBound(document: Document): Promise<boolean> {
    const entry = this.loaded.get(document.name)
    const bound = entry?.agentBound
    if (!entry || !bound) return false
    entry.agentBound = null
    entry.takingBound = bound
    const asked = { reason: 'agent', minIntervalMs: 0 } as const
    try {
      if (await this.compactOffThread(document, asked, bound.upTo)) {
        // Stored after the bound, in no version yet: someone else's change, or the same agent's burst
        // going on meanwhile (whose own bound, set by its store, takes it).
        if (entry.unversioned) entry.versionReason = bound.since ? 'pause' : 'agent'
        return true
      }
      await this.measure(document)
      await document.saveMutex.runExclusive(() => this.compact(document, asked))
      return true
    } catch (error) {
      if (isDatabaseUnavailable(error)) entry.agentBound ??= bound
      throw error
    } finally {
      entry.takingBound = null
    }
  }

  /**
   * Measures in the background the sections whose total is not known (`measure`), once more after the
   * one under way when that is running: called after each store, so a section an edit changed has its total
   * again before a read asks for it (its first edit since the load renders it whole once, later edits only
   * the blocks they touched). At most once per `measureIntervalMs` (a timer takes the stores in between):
   * finding the sections to measure walks every top-level block (~9 ms per store of a 1 MiB document at
   * load 16, issue 30), and typing stores every 600 ms at most. A read in between renders only the blocks
   * not measured yet, as it would have before; a compaction measures everything first.
   */
  measureSoon(document: Document): void {
    if (this.loaded.closing) return
    if (this.measuring.has(document)) {
      this.measureAgain.add(document)
      return
    }
    const entry = this.loaded.get(document.name)
    if (!entry || entry.measureTimer) return // a timed measure is coming, and takes this store's blocks
    const wait = entry.measuredAt + (this.deps.measureIntervalMs ?? 0) - performance.now()
    if (wait > 0) {
      entry.measureTimer = setTimeout(() => {
        entry.measureTimer = null
        if (this.loaded.get(document.name) === entry) this.measureSoon(document)
      }, wait)
      return
    }
    entry.measuredAt = performance.now()
    this.measuring.add(document)
    void this.measure(document).finally(() => {
      this.measuring.delete(document)
      if (this.measureAgain.delete(document)) this.measureSoon(document)
    })
  }

  /** Documents being measured by `measureSoon`, and those stored again meanwhile. */
  private readonly measuring = new WeakSet<Document>()
  private readonly measureAgain = new WeakSet<Document>()

  /** No timed measure of this document (it unloads). */
  cancelMeasure(entry: Stored): void {
    if (entry.measureTimer) clearTimeout(entry.measureTimer)
    entry.measureTimer = null
  }

  /**
   * Renders the sections whose total the live document's outline memo does not know (`outlineMeasureSteps`:
   * after a load, those edited since the stored outline; later, the blocks an edit touched), one heading
   * or block per step, in slices of the event loop's turns (turns.ts), so the compaction's outline carries
   * every section's exact total (stored-totals.ts in doc-schema) and no read has to render a section to
   * name it; a block of more than MEASURE_MAX_ITEMS is left to the read that needs it (one step renders a
   * block whole, and cannot be sliced). Stops early, storing fewer totals, when the document closes meanwhile; a failure only leaves
   * totals out.
   */
  private async measure(document: Document): Promise<void> {
    try {
      const steps = outlineMeasureSteps(document.getXmlFragment(FRAGMENT_NAME), MEASURE_MAX_ITEMS)
      await runInSlices(steps, () => !this.loaded.closing && this.loaded.isOpen(document.name))
    } catch (error) {
      this.deps.logger.warn({ err: error, room: document.name }, 'measuring section totals failed')
    }
  }

  /**
   * What the live document changed since the newest version; null when it cannot be told (a summary never
   * fails a compaction: the version is taken without one).
   */
  private summaryOf(document: Document, newest: Uint8Array | null) {
    try {
      return summarize(diffSinceState(newest, document.getXmlFragment(FRAGMENT_NAME)))
    } catch {
      return null
    }
  }

  /**
   * The version a compaction asks for: the one asked (`asked`, when changes wait for one), or one for
   * changes older than VERSION_INTERVAL_MS (typing without pause); with the newest version's state, what
   * its summary compares against. Null: nothing to compact (the version fell within its interval and the
   * log is empty).
   */
  private async versionToTake(
    entry: Stored,
    asked: VersionRequest | undefined,
  ): Promise<{ version?: VersionRequest; base: Uint8Array | null } | null> {
    let version: VersionRequest | undefined =
      asked && entry.unversioned
        ? { minIntervalMs: this.deps.minVersionIntervalMs ?? MIN_VERSION_INTERVAL_MS, ...asked }
        : entry.unversioned && Date.now() - entry.versionAt >= VERSION_INTERVAL_MS
          ? { reason: 'interval' }
          : undefined
    if (!version) return { base: null }
    const newest = await this.deps.documents.newestVersionState(entry.documentId).catch(() => null)
    // Only automatic versions space the next one (a document created a moment ago still gets one).
    const at = newest && AUTOMATIC_REASONS.has(newest.reason) ? newest.createdAt.getTime() : 0
    if (version.minIntervalMs && Date.now() - at < version.minIntervalMs) {
      // Taken within the interval by an earlier load or another instance: these changes wait for the
      // next version (their authors stay in the snapshot's unversioned_authors).
      entry.versionAt = Math.max(entry.versionAt, at)
      version = undefined
      if (entry.logRows === 0) return null
    }
    return { version, base: newest?.state ?? null }
  }

  /**
   * Counts how the worker read a compaction's parts (`collab_document_compaction_reads_total`); a flat
   * reading that threw (and was decoded instead) is logged with its error, to be reported.
   */
  private countRead(documentId: string, done: { read?: CompactionRead; flatError?: string }): void {
    if (!done.read) return
    this.deps.metrics.compactionReads.inc({ read: done.read })
    if (done.read === 'flat_failed')
      this.deps.logger.warn(
        { documentId, err: done.flatError },
        "compaction's flat reading failed; the parts were decoded instead (a bug to report)",
      )
  }

  /**
   * The compaction on the documents' worker (documents/compact-stored.ts): what is stored is merged there,
   * the event loop passes text along. True when done (or nothing was to be done, or the snapshot changed
   * meanwhile and the log stays); false when the worker could not, or the database refused what it merged:
   * the caller compacts on the event loop instead. Throws when the database is away (the log stays).
   * `upTo`: the log merged up to that row only (an agent's bound), the title and search text left as
   * they are (the live document's are newer).
   */
  private async compactOffThread(
    document: Document,
    asked?: VersionRequest,
    upTo?: bigint,
  ): Promise<boolean> {
    const name = document.name
    const entry = this.loaded.get(name)
    if (!entry || (entry.logRows === 0 && !(asked && entry.unversioned)) || !this.loaded.isOpen(name))
      return true
    if (this.loaded.closing) return true
    const { documents, logger, metrics } = this.deps
    const started = performance.now()
    // Stores go on meanwhile: what they change is theirs to mark (a refresh due, a version waiting).
    const changedAt = entry.changedAt
    const planned = await this.versionToTake(entry, asked)
    if (!planned) return true
    // An agent's version is taken whole even so: its outline is how `changes_since` finds the version of
    // a rev that agent wrote (`since_rev`), and agents' versions are at least MIN_VERSION_INTERVAL_MS apart.
    const mergeOnly = asked?.reason !== 'agent' && this.mergesOnly(document)
    // A merge alone leaves the title and search text to their refresh from the live document.
    const refreshed = upTo === undefined && entry.derivedStale && !mergeOnly
    let done: Awaited<ReturnType<typeof documents.compactStored>>
    try {
      done = await documents.compactStored(entry.documentId, {
        maxTextChars: refreshed ? MAX_FIND_TEXT_CHARS : 0,
        version: planned.version && { request: planned.version, base: planned.base },
        changedAt,
        upTo,
        mergeOnly,
      })
    } catch (error) {
      // Refused because the server is stopping: a compaction is never needed for safety (the log holds
      // every store and is merged at the next load), and one run here would hold the document while the
      // stop stores it (a rehearsal's SIGTERM ended 'document not stored').
      if (this.loaded.closing) return true
      if (!isDatabaseUnavailable(error)) {
        logger.warn(
          { documentId: entry.documentId, err: error },
          'compaction on the worker failed; compacting here',
        )
        return false
      }
      metrics.storeFailures.inc()
      logger.warn({ documentId: entry.documentId, err: error }, 'compaction failed; the log stays')
      throw error
    }
    if (!done) return true
    // Bounded: what this instance stored after the bound is in no version yet (people's typing).
    const quiet = upTo === undefined ? entry.changedAt === changedAt : entry.lastRowId <= upTo
    if (done.versionId !== undefined) {
      entry.versionAt = Date.now()
      if (quiet) {
        entry.unversioned = false
        entry.versionReason = undefined
      }
    }
    if (refreshed && quiet) {
      entry.derivedAt = Date.now()
      entry.derivedStale = false
    }
    entry.snapshotBytes = done.bytes
    entry.logRows = Math.max(0, entry.logRows - done.mergedRows)
    entry.logBytes = Math.max(0, entry.logBytes - done.mergedBytes)
    entry.merged = mergeOnly
    this.faults.clear(name)
    metrics.compactions.inc()
    this.countRead(entry.documentId, done)
    logger.debug(
      {
        documentId: entry.documentId,
        bytes: done.bytes,
        mergeOnly,
        ms: Math.round(performance.now() - started),
      },
      'document log compacted on the worker',
    )
    return true
  }

  /**
   * The full compaction of a large document (`mergesOnly`) once it has unloaded, on the documents'
   * worker: the log merged, the outline, title and search text written, and the version its people's
   * changes wait for taken with its summary. It starts once the live copy is collected (`live`, up to
   * UNLOADED_COLLECT_WAIT_MS), so the copy it decodes there never stands beside it: Hocuspocus's
   * destroyed document stayed reachable 1-12 s after the unload (RSS +330-390 MiB at the item limit when
   * this ran at once, the same as the compaction before the unload); and UNLOADED_SETTLE_MS later, once
   * the allocator has given the copy's pages back (at the item limit the worker started ~85 MB higher
   * without it). Asking for a full collection to hurry it was tried: that held the event loop with the
   * heap at its largest (others' keystrokes p99 20-26 -> 56-114 ms). The caller checks that there is
   * something to do (rows in the log, a version, or a snapshot merged alone). A failure leaves what is
   * stored as it is (the log stays, the outline is made at the next compaction); the document may be open
   * again meanwhile, and whichever writes first wins (compact-stored.ts reads again and merges).
   */
  compactUnloaded(entry: Stored, asked: VersionRequest | undefined, live: WeakRef<object>): Promise<void> {
    const { documentId, changedAt, derivedStale } = entry
    // The entry is not held past the plan: it holds the live document (its `detach`).
    return this.versionToTake(entry, asked)
      .catch(() => null)
      .then((planned) =>
        this.compactCold(live, documentId, {
          maxTextChars: derivedStale ? MAX_FIND_TEXT_CHARS : 0,
          version: planned?.version && { request: planned.version, base: planned.base },
          changedAt,
        }),
      )
  }

  private async compactCold(
    live: WeakRef<object>,
    documentId: string,
    request: Parameters<DocumentsService['compactStored']>[1],
  ): Promise<void> {
    const { documents, logger, metrics } = this.deps
    const waitUntil = performance.now() + UNLOADED_COLLECT_WAIT_MS
    while (live.deref() && performance.now() < waitUntil && !this.loaded.closing)
      await Bun.sleep(UNLOADED_COLLECT_POLL_MS)
    if (this.loaded.closing) return
    await Bun.sleep(UNLOADED_SETTLE_MS)
    if (this.loaded.closing) return
    const started = performance.now()
    try {
      const done = await documents.compactStored(documentId, request)
      if (!done) return
      metrics.compactions.inc()
      this.countRead(documentId, done)
      logger.debug(
        { documentId, bytes: done.bytes, ms: Math.round(performance.now() - started) },
        'document compacted after it unloaded',
      )
    } catch (error) {
      if (this.loaded.closing) return
      if (isDatabaseUnavailable(error)) metrics.storeFailures.inc()
      logger.warn(
        { documentId, err: error },
        'compaction after unload failed; the log stays, the outline is made at the next compaction',
      )
    }
  }

  /**
   * Merges the log into a new snapshot with its title, search text and outline, in one transaction.
   * Content the database refuses (or a bug in what is derived) makes it the state alone; a failure of
   * that too, or the database being away, leaves the log as it is (nothing is lost) for the next try.
   */
  async compact(document: Document, asked?: VersionRequest): Promise<void> {
    const name = document.name
    const entry = this.loaded.get(name)
    // A version asked for is taken even when the log was merged since (its changes are in the snapshot).
    const wanted = asked && entry?.unversioned
    if (!entry || (entry.logRows === 0 && !wanted) || !this.loaded.isOpen(name)) return
    // Shutdown compacts nothing (a compaction scheduled just before it would race the database's close).
    if (this.loaded.closing) return
    const { documents, logger, metrics, mergeWithStored } = this.deps
    const started = performance.now()
    const planned = await this.versionToTake(entry, asked)
    if (!planned) return
    const { version } = planned
    if (version) version.summary = this.summaryOf(document, planned.base)
    // Changes not yet stored are in the state: their authors are this version's too.
    const pendingAuthors = version ? await documents.resolveAuthors(entry.authors.values()) : []
    const state = Y.encodeStateAsUpdate(document)
    const vector = Y.encodeStateVector(document) // the same snapshot: nothing runs between the two
    let stored: { bytes: number; versionId?: bigint }
    try {
      try {
        const fragment = document.getXmlFragment(FRAGMENT_NAME)
        // Title and search text only when a refresh is still due: otherwise they are current, and
        // reading up to a million characters for them would be wasted.
        const keepDerived = !entry.derivedStale
        stored = await documents.storeState(
          entry.documentId,
          {
            state,
            vector,
            title: keepDerived ? '' : readTitle(fragment),
            text: keepDerived ? '' : readPlainText(fragment, MAX_FIND_TEXT_CHARS),
            changedAt: entry.changedAt,
            // From the document's shared memo: only sections edited since the last time are re-hashed,
            // and each section's total is the memo's (measured by `run` before the lock).
            outline: liveOutlineWithTotals(fragment),
            authors: pendingAuthors,
          },
          { mergeWithStored, compact: true, keepDerived, version },
        )
        this.faults.clear(name)
        entry.derivedAt = Date.now()
        entry.derivedStale = false
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error
        this.faults.report(name, entry.documentId, error, 'compaction failed; compacting the state alone')
        stored = await documents.storeState(
          entry.documentId,
          { state, vector, title: '', text: '', authors: pendingAuthors },
          // The fallback keeps the version but not its summary (content-derived, like the outline).
          { mergeWithStored, compact: true, stateOnly: true, version: version && { reason: version.reason } },
        )
      }
    } catch (error) {
      metrics.storeFailures.inc()
      if (isDatabaseUnavailable(error))
        logger.warn({ documentId: entry.documentId, err: error }, 'compaction failed; the log stays')
      else
        this.faults.log(
          name,
          entry.documentId,
          error,
          'compaction failed, even as the state alone; the log stays',
        )
      throw error
    }
    if (stored.versionId !== undefined) {
      entry.versionAt = Date.now()
      entry.unversioned = false
      entry.versionReason = undefined
    }
    entry.snapshotBytes = stored.bytes
    entry.logRows = 0
    entry.logBytes = 0
    entry.merged = false
    metrics.compactions.inc()
    logger.debug(
      { documentId: entry.documentId, bytes: stored.bytes, ms: Math.round(performance.now() - started) },
      'document log compacted',
    )
  }
}
