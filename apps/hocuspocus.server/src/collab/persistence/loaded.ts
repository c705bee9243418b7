/**
 * What the pieces of the persistence extension share: the documents this instance loaded, what it knows
 * of each one's stored content and unstored updates, and whether shutdown began.
 */
import type { Document, Hocuspocus } from '@hocuspocus/server'
import { type RawAuthor, rawAuthorKey, rawAuthorOf } from '../../documents/history-authors.ts'
import type { VersionReason, VersionRequest } from '../../documents/history-store.ts'
import type { StoredParts } from '../../documents/stored-parts.ts'

/** An agent's version waiting at the log row of its last store (versions.ts). */
export type AgentBound = { upTo: bigint; author: string; since: boolean }

/** What this instance knows of a loaded document's stored content, and its unstored updates. */
export type Stored = {
  documentId: string
  /** Updates made since the last store took its batch, in order (every origin, peers' included). */
  pending: Uint8Array[]
  /** Who made the `pending` updates: one entry per principal, whatever the number of updates. */
  authors: Map<string, RawAuthor>
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
  /** How long the last refresh of the title and search text took (ms): its walk, its database write. */
  derivedCostMs: { walk: number; database: number }
  compacting: boolean
  /**
   * The snapshot this instance last wrote is a merge of bytes alone (compaction.ts `mergesOnly`): no
   * outline, deleted text not collected; the full compaction after the unload writes them.
   */
  merged: boolean
  /** Set as a large document unloads: it is compacted after, with this version (persistence-extension.ts). */
  afterUnload: { version: VersionRequest | undefined; live: WeakRef<object> } | null
  /** When section totals were last measured after a store (performance.now()), and the timer of the next. */
  measuredAt: number
  measureTimer: ReturnType<typeof setTimeout> | null
  /** Stored changes not yet in a version taken by this instance, and the version they wait for. */
  unversioned: boolean
  versionReason: VersionReason | undefined
  /** When this instance last took a version of it (0: not since load), and the timer of the next one. */
  versionAt: number
  versionTimer: ReturnType<typeof setTimeout> | null
  /** The id of this instance's newest row in the document's log (0n before its first store). */
  lastRowId: bigint
  /**
   * An agent's version waiting while people are connected (versions.ts): of the log up to `upTo`, the
   * row of that agent's last store, so what others store after it is never in it; `since`: a store not of
   * that agent's burst landed after it (the version is then due at once).
   */
  agentBound: AgentBound | null
  /** The bound whose version is being taken (compaction.ts `takeBound`): cleared above, not yet in. */
  takingBound: AgentBound | null
  detach(): void
}

export class LoadedDocuments {
  readonly entries = new Map<string, Stored>()
  /** The Hocuspocus instance (set when it configures its extensions). */
  instance: Hocuspocus | undefined
  /** Set by flush(): shutdown stores what is pending and compacts nothing. */
  closing = false

  /**
   * Starts keeping a document just loaded from `loaded`. Every later change, from any origin, is queued
   * for the next store: registered before any other hook can change the document (heading ids repaired
   * at load included), and called synchronously with each transaction, so a batch and the state vector
   * taken with it always agree.
   */
  track(name: string, document: Document, loaded: StoredParts & { snapshotBytes?: number }): Stored {
    const queue = (update: Uint8Array, origin: unknown) => {
      const entry = this.entries.get(name)
      if (!entry) return
      entry.pending.push(update)
      // Attribution: a map set per transaction (the app is named when the batch is stored).
      const author = rawAuthorOf(origin)
      if (author) entry.authors.set(rawAuthorKey(author), author)
    }
    document.on('update', queue)
    const entry: Stored = {
      documentId: loaded.documentId,
      pending: [],
      authors: new Map(),
      writing: false,
      snapshotBytes: loaded.snapshot?.byteLength ?? loaded.snapshotBytes ?? 0,
      logRows: loaded.updates.length,
      logBytes: loaded.updateBytes,
      changedAt: undefined,
      derivedAt: 0,
      derivedStale: false,
      merged: false,
      afterUnload: null,
      derivedTimer: null,
      derivedCostMs: { walk: 0, database: 0 },
      compacting: false,
      measuredAt: Number.NEGATIVE_INFINITY,
      measureTimer: null,
      unversioned: false,
      versionReason: undefined,
      versionAt: 0,
      versionTimer: null,
      lastRowId: 0n,
      agentBound: null,
      takingBound: null,
      detach: () => document.off('update', queue),
    }
    this.entries.set(name, entry)
    return entry
  }

  get(name: string): Stored | undefined {
    return this.entries.get(name)
  }

  /** Whether Hocuspocus still holds the document (it was not unloaded meanwhile). */
  isOpen(name: string): boolean {
    return this.instance?.documents.has(name) ?? false
  }

  /**
   * After work this extension did under the document's save lock (a title and search refresh, a
   * compaction, a version): unloads it if nobody has it open. Hocuspocus tries to unload only when the
   * last connection closes and after its own debounced store, and gives up for good when the save lock is
   * held at that moment: a capacity run left 100 of the 400 documents its editors had typed into loaded
   * with no connection, for as long as it watched (PGlite). Also called when the last connection leaves
   * (persistence-extension.ts `onDisconnect`). `unloadDocument` checks again (connections, a store
   * pending or running, the lock) and runs our unload hooks.
   */
  unloadIfIdle(document: Document): void {
    setTimeout(() => {
      const instance = this.instance
      if (!instance || this.closing || instance.documents.get(document.name) !== document) return
      if (document.getConnectionsCount() > 0) return
      // Held now (by any work, ours or a store): asked again once it is released.
      if (document.saveMutex.isLocked()) {
        void document.saveMutex.waitForUnlock().then(() => this.unloadIfIdle(document))
        return
      }
      void instance.unloadDocument(document).catch(() => {})
    }, 0)
  }
}

/** The document has changes not yet stored: queued, or in a batch being written. */
export function unstored(entry: Stored): boolean {
  return entry.pending.length > 0 || entry.writing
}
