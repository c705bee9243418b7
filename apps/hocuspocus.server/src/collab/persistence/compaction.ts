/**
 * Compaction: merges a document's update log into a new snapshot (with the stored outline and, now and
 * then, a version) once the log holds COMPACT_AFTER_UPDATES rows or as many bytes as the snapshot (at
 * least COMPACT_MIN_LOG_BYTES), and when the document unloads. It runs after the store that made it due,
 * so no write waits for it. A compaction that fails for content or a bug is done again as the state
 * alone (no outline, title and search text as they were); a failure of that too, or the database being
 * away, leaves the log as it is (nothing is lost) for the next try. Shutdown compacts nothing.
 */
import { FRAGMENT_NAME, liveOutline, readPlainText, readTitle } from '@collab/doc-schema'
import type { Document } from '@hocuspocus/server'
import * as Y from 'yjs'
import { isDatabaseUnavailable } from '../../db/errors.ts'
import type { DocumentsService } from '../../documents/service.ts'
import { MAX_FIND_TEXT_CHARS } from '../../limits.ts'
import type { Logger } from '../../logger.ts'
import type { Metrics } from '../../metrics.ts'
import { COMPACT_MIN_LOG_BYTES } from '../store-policy.ts'
import type { StoreFaults } from './faults.ts'
import type { LoadedDocuments, Stored } from './loaded.ts'

export class Compaction {
  constructor(
    private readonly loaded: LoadedDocuments,
    private readonly faults: StoreFaults,
    private readonly deps: {
      documents: Pick<DocumentsService, 'storeState'>
      logger: Logger
      metrics: Metrics
      /** Several instances share the database (Redis): compaction merges what the others logged. */
      mergeWithStored?: boolean
      compactAfterUpdates: number
    },
  ) {}

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
  async compact(document: Document): Promise<void> {
    const name = document.name
    const entry = this.loaded.get(name)
    if (!entry || entry.logRows === 0 || !this.loaded.isOpen(name)) return
    // Shutdown compacts nothing (a compaction scheduled just before it would race the database's close).
    if (this.loaded.closing) return
    const { documents, logger, metrics, mergeWithStored } = this.deps
    const started = performance.now()
    const state = Y.encodeStateAsUpdate(document)
    const vector = Y.encodeStateVector(document) // the same snapshot: nothing runs between the two
    let stored: { bytes: number }
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
            // From the document's shared memo: only sections edited since the last time are re-hashed.
            outline: liveOutline(fragment),
          },
          { mergeWithStored, compact: true, keepDerived },
        )
        this.faults.clear(name)
        entry.derivedAt = Date.now()
        entry.derivedStale = false
      } catch (error) {
        if (isDatabaseUnavailable(error)) throw error
        this.faults.report(name, entry.documentId, error, 'compaction failed; compacting the state alone')
        stored = await documents.storeState(
          entry.documentId,
          { state, vector, title: '', text: '' },
          { mergeWithStored, compact: true, stateOnly: true },
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
    entry.snapshotBytes = stored.bytes
    entry.logRows = 0
    entry.logBytes = 0
    metrics.compactions.inc()
    logger.debug(
      { documentId: entry.documentId, bytes: stored.bytes, ms: Math.round(performance.now() - started) },
      'document log compacted',
    )
  }
}
