/**
 * When a loaded document's changes become a version (docs/history.md): right after an agent's write, once
 * people paused typing for VERSION_PAUSE_MS, and when it unloads; never two automatic versions closer than
 * MIN_VERSION_INTERVAL_MS (what comes in between waits for the next one, so an agent's burst of writes is
 * one version), except at an agent's write: what others changed before it becomes a version just before
 * it is applied (`beforeAgentWrite`), and with people in the document its own version is taken as soon as
 * it is stored, so neither holds the other's changes. Compaction takes it (compaction.ts: the snapshot
 * written, then copied as the version); a compaction that runs anyway takes one when the last is older
 * than VERSION_INTERVAL_MS.
 */
import type { Document } from '@hocuspocus/server'
import { MIN_VERSION_INTERVAL_MS, VERSION_PAUSE_MS } from '../../limits.ts'
import type { Compaction } from './compaction.ts'
import type { LoadedDocuments, Stored } from './loaded.ts'

export class VersionPolicy {
  /** Whose write the unversioned agent changes of a document are (rawAuthorKey), set by beforeAgentWrite. */
  private readonly agentOf = new WeakMap<Stored, string>()

  constructor(
    private readonly loaded: LoadedDocuments,
    private readonly compaction: Compaction,
    private readonly timing: { minIntervalMs?: number; pauseMs?: number } = {},
  ) {}

  private get minInterval(): number {
    return this.timing.minIntervalMs ?? MIN_VERSION_INTERVAL_MS
  }

  /** After a successful store whose batch held an agent's and/or a person's changes. */
  afterStore(document: Document, entry: Stored, kinds: { agent: boolean; person: boolean }): void {
    if (!kinds.agent && !kinds.person) return
    entry.unversioned = true
    const earliest = entry.versionAt + this.minInterval
    if (kinds.agent) {
      entry.versionReason = 'agent'
      // With people in the document, at once, so their next keystrokes are not in it; else it does not
      // wait for a pause, only for the interval (a burst of writes to a document nobody has open is one).
      if (document.connections.size > 0) {
        this.cancel(entry)
        this.schedule(document, entry, 0, { minIntervalMs: 0 })
      } else if (!entry.versionTimer) this.schedule(document, entry, Math.max(0, earliest - Date.now()))
      return
    }
    entry.versionReason ??= 'pause'
    if (entry.versionReason === 'agent' && entry.versionTimer) return
    // Each store of people's typing pushes the pause back.
    this.cancel(entry)
    this.schedule(document, entry, Math.max(this.timing.pauseMs ?? VERSION_PAUSE_MS, earliest - Date.now()))
  }

  /**
   * Before an agent's write (`author`: its rawAuthorKey) is applied, its document's pending changes
   * stored: unless they are all that same agent's (a burst), what is not yet in a version becomes one now,
   * whatever the interval, so the agent's version holds only its writes and the version before holds
   * what came before them.
   */
  async beforeAgentWrite(document: Document, entry: Stored, author: string): Promise<void> {
    const burst = entry.versionReason === 'agent' && this.agentOf.get(entry) === author
    this.agentOf.set(entry, author)
    if (!entry.unversioned || burst || this.loaded.closing) return
    this.cancel(entry)
    const asked = { reason: entry.versionReason ?? 'pause', minIntervalMs: 0 } as const
    const versionAt = entry.versionAt
    await this.compaction.run(document, asked)
    // The compaction on the documents' worker gives up, writing nothing, when the snapshot changed under
    // it three times; then this version would be missing and the write's version would hold these
    // changes too (seen on a loaded machine). The compaction under the document's lock cannot be overtaken.
    if (entry.versionAt === versionAt && entry.unversioned && !this.loaded.closing)
      await document.saveMutex.runExclusive(() => this.compaction.compact(document, asked))
  }

  /** Whether a version may be taken now (the interval since this instance's last one has passed). */
  allowed(entry: Stored): boolean {
    return Date.now() >= entry.versionAt + this.minInterval
  }

  private schedule(
    document: Document,
    entry: Stored,
    wait: number,
    spacing: { minIntervalMs?: number } = {},
  ): void {
    if (this.loaded.closing) return
    entry.versionTimer = setTimeout(() => {
      entry.versionTimer = null
      if (!this.loaded.isOpen(document.name) || this.loaded.get(document.name) !== entry) return
      if (!entry.unversioned) return
      void this.compaction
        .run(document, { reason: entry.versionReason ?? 'pause', ...spacing })
        .catch(() => {})
    }, wait)
    entry.versionTimer.unref?.()
  }

  /** No timed version of this document (it unloads, or shutdown). */
  cancel(entry: Stored): void {
    if (entry.versionTimer) clearTimeout(entry.versionTimer)
    entry.versionTimer = null
  }
}
