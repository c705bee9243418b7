/**
 * A store: the Yjs updates made since the last store, merged into one, appended to the document's update
 * log: one row of a few bytes to a few KiB, whatever the document's size. Then, when due, the title and
 * search text (title-search.ts) and compaction (compaction.ts, after this store). A failed append puts its
 * updates back in the queue, in order, for the retry; writers waiting for their change to be durable are
 * told when a store covered it.
 */
import { mergeInOrder } from '@collab/doc-schema'
import type { Document } from '@hocuspocus/server'
import * as Y from 'yjs'
import { isDatabaseUnavailable } from '../../db/errors.ts'
import { type RawAuthor, rawAuthorKey } from '../../documents/history-authors.ts'
import type { DocumentsService } from '../../documents/service.ts'
import type { Logger } from '../../logger.ts'
import type { Metrics } from '../../metrics.ts'
import type { Compaction } from './compaction.ts'
import type { StoreFaults } from './faults.ts'
import type { LoadedDocuments } from './loaded.ts'
import type { TitleSearchRefresh } from './title-search.ts'
import type { BatchKinds, VersionPolicy } from './versions.ts'

export class LogAppend {
  private readonly storedListeners = new Map<
    string,
    Set<(vector: Map<number, number>, batch: number) => void>
  >()
  /** Batches taken so far, all documents together: each store's batch is numbered in order. */
  private batches = 0

  constructor(
    private readonly loaded: LoadedDocuments,
    private readonly parts: {
      faults: StoreFaults
      titleSearch: TitleSearchRefresh
      compaction: Compaction
      versions: VersionPolicy
    },
    private readonly deps: {
      documents: Pick<DocumentsService, 'appendUpdate' | 'resolveAuthors'>
      logger: Logger
      metrics: Metrics
    },
  ) {}

  /**
   * Calls `listener` with the state vector each successful store of the document covered and its batch's
   * number (batchesTaken), until the returned function is called. Writers use it to know their change is
   * durable without reading it back: a store whose batch was taken after their change holds all of it,
   * deletions included, which a state vector does not show.
   */
  onStored(documentName: string, listener: (vector: Map<number, number>, batch: number) => void): () => void {
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

  /**
   * The number of the last store batch taken (0: none yet). Updates are queued synchronously, so a store
   * whose batch is numbered above this value read now holds every update made before now.
   */
  batchesTaken(): number {
    return this.batches
  }

  /**
   * One store: the queued updates, merged into one, appended to the log. Then, when due, the title and
   * search text (at once after a quiet period, else by a timer) and compaction (after this store).
   */
  async write(document: Document): Promise<void> {
    const { faults, titleSearch, compaction, versions } = this.parts
    const { documents, logger, metrics } = this.deps
    const name = document.name
    const entry = this.loaded.get(name)
    if (!entry) return // never loaded by us (or already unloaded): nothing of ours to store
    // Hocuspocus also stores on disconnect when nothing changed: nothing is written then, unless the
    // title and search text are behind and due (a refresh the database was away for, say).
    if (entry.pending.length === 0) {
      if (entry.derivedStale && titleSearch.due(entry)) await titleSearch.refresh(document, entry)
      return
    }
    const started = performance.now()
    const batch = entry.pending
    const authors = entry.authors
    entry.pending = []
    entry.authors = new Map()
    entry.writing = true
    const batchNumber = ++this.batches
    const vector = Y.encodeStateVector(document) // covers the batch: updates are queued synchronously
    let update: Uint8Array
    let rowId: bigint
    try {
      // The live document's own updates, in order: their struct bytes laid end to end (Yjs's
      // mergeUpdates read every struct into objects: ~2 ms for 200 keystrokes, ~10 ms under load).
      update = mergeInOrder(batch)
      // The batch's authors (not one per update: several people's keystrokes are one append).
      rowId = await documents.appendUpdate(
        entry.documentId,
        update,
        await documents.resolveAuthors(authors.values()),
      )
    } catch (error) {
      entry.pending = batch.concat(entry.pending) // stays queued, in order, for the retry
      for (const [key, author] of entry.authors) authors.set(key, author)
      entry.authors = authors
      entry.writing = false
      metrics.storeFailures.inc()
      if (isDatabaseUnavailable(error))
        logger.error(
          { documentId: entry.documentId, err: error },
          'document store failed; kept in memory, will retry',
        )
      else faults.report(name, entry.documentId, error, 'document store failed')
      throw error
    }
    entry.writing = false
    entry.changedAt = new Date()
    if (rowId > entry.lastRowId) entry.lastRowId = rowId
    entry.logRows++
    entry.logBytes += update.byteLength
    entry.derivedStale = true
    faults.clear(name, 'content')
    const listeners = this.storedListeners.get(name)
    if (listeners?.size) {
      const covered = Y.decodeStateVector(vector)
      for (const listener of listeners) listener(covered, batchNumber)
    }
    metrics.stores.inc()
    metrics.storeLatency.observe({}, (performance.now() - started) / 1000)
    logger.debug({ documentId: entry.documentId, bytes: update.byteLength }, 'document stored')
    // Versions first, before anything is awaited: from here the batch counts as stored, so it must count
    // as unversioned too. A writer arriving while the title and search refresh runs (persistence-
    // extension.ts beforeWrite) then finds it and takes the version before its write; marked after the
    // refresh, the batch looked versioned in that window and the person's typing went into the agent's
    // version (history-boundaries.test, "while the store that holds it is still refreshing").
    versions.afterStore(document, entry, kindsOf(authors.values()), rowId)
    await titleSearch.afterStore(document, entry)
    if (compaction.due(entry)) compaction.schedule(document)
  }
}

/** Whether a batch holds an agent's changes (whose, when one agent's alone) and whether it holds a person's. */
function kindsOf(authors: Iterable<RawAuthor>): BatchKinds {
  const kinds: BatchKinds = { agent: false, person: false }
  const agents = new Set<string>()
  for (const author of authors) {
    kinds[author.kind === 'agent' ? 'agent' : 'person'] = true
    if (author.kind === 'agent') agents.add(rawAuthorKey(author))
  }
  if (agents.size === 1) kinds.agentKey = [...agents][0]
  return kinds
}
