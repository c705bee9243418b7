/**
 * When a loaded document's changes become a version (docs/history.md): after an agent's writes, once
 * people paused typing for VERSION_PAUSE_MS, and when it unloads; never two automatic versions closer than
 * MIN_VERSION_INTERVAL_MS (what comes in between waits for the next one, so an agent's burst of writes is
 * one version), except at an agent's write: what others changed before it becomes a version just before
 * it is applied (`beforeAgentWrite`), and with people in the document its own version is bounded at the
 * log row of its store (`Stored.agentBound`): taken of the log up to that row once the agent wrote
 * nothing for AGENT_VERSION_PAUSE_MS, at once when someone else's change is stored after it, and before
 * any compaction, so a burst of its writes is one version and nobody's later keystrokes are in it.
 * Compaction takes it (compaction.ts: the snapshot written, then copied as the version); a compaction
 * that runs anyway takes one when the last is older than VERSION_INTERVAL_MS.
 */
import type { Document } from '@hocuspocus/server'
import { AGENT_VERSION_PAUSE_MS, MIN_VERSION_INTERVAL_MS, VERSION_PAUSE_MS } from '../../limits.ts'
import type { Compaction } from './compaction.ts'
import type { LoadedDocuments, Stored } from './loaded.ts'

/** What a stored batch held: an agent's changes (`agent`: whose, when one agent's alone) and/or a person's. */
export type BatchKinds = { agent: boolean; person: boolean; agentKey?: string }

export class VersionPolicy {
  /** Whose write the unversioned agent changes of a document are (rawAuthorKey), set by beforeAgentWrite. */
  private readonly agentOf = new WeakMap<Stored, string>()

  constructor(
    private readonly loaded: LoadedDocuments,
    private readonly compaction: Compaction,
    private readonly timing: { minIntervalMs?: number; pauseMs?: number; agentPauseMs?: number } = {},
  ) {}

  private get minInterval(): number {
    return this.timing.minIntervalMs ?? MIN_VERSION_INTERVAL_MS
  }

  private get agentPause(): number {
    return this.timing.agentPauseMs ?? AGENT_VERSION_PAUSE_MS
  }

  /**
   * After a successful store whose batch held an agent's and/or a person's changes; `rowId`: the log row
   * it appended.
   */
  afterStore(document: Document, entry: Stored, kinds: BatchKinds, rowId: bigint): void {
    if (!kinds.agent && !kinds.person) return
    entry.unversioned = true
    // The agent whose changes alone the batch holds, if one's.
    const soleAgent = kinds.person ? undefined : kinds.agentKey
    // While a bound's version is being taken, someone else's change stored after it is not of its burst.
    const taking = entry.takingBound
    if (taking && soleAgent !== taking.author) taking.since = true
    const bound = entry.agentBound
    if (bound) {
      this.cancel(entry)
      if (!bound.since && soleAgent === bound.author) {
        // The same agent's burst goes on: its version now reaches this write, and waits for its pause.
        bound.upTo = rowId
        this.scheduleBound(document, entry, this.agentPause)
      } else {
        // Someone else's change follows the agent's: the agent's version now, of the log up to its write.
        bound.since = true
        this.scheduleBound(document, entry, 0)
      }
      return
    }
    if (kinds.agent) {
      entry.versionReason = 'agent'
      if (document.connections.size > 0) {
        this.cancel(entry)
        if (soleAgent) {
          // With people in the document: bounded at this store's row, so their next keystrokes are never
          // in it, however late it is taken.
          entry.agentBound = { upTo: rowId, author: soleAgent, since: false }
          this.scheduleBound(document, entry, this.agentPause)
        } else this.schedule(document, entry, 0, { minIntervalMs: 0 }) // one batch: at once, as it is
      } else if (!entry.versionTimer)
        this.schedule(document, entry, Math.max(0, entry.versionAt + this.minInterval - Date.now()))
      // Else it does not wait for a pause, only for the interval (a burst of writes to a document nobody
      // has open is one).
      return
    }
    entry.versionReason ??= 'pause'
    if (entry.versionReason === 'agent' && entry.versionTimer) return
    // Each store of people's typing pushes the pause back.
    this.cancel(entry)
    this.schedulePause(document, entry)
  }

  /** People's changes become a version after their pause, and no sooner than the interval allows. */
  private schedulePause(document: Document, entry: Stored): void {
    const earliest = entry.versionAt + this.minInterval
    this.schedule(document, entry, Math.max(this.timing.pauseMs ?? VERSION_PAUSE_MS, earliest - Date.now()))
  }

  /**
   * Before an agent's write (`author`: its rawAuthorKey) is applied, its document's pending changes
   * stored: unless they are all that same agent's (a burst), what is not yet in a version becomes one now,
   * whatever the interval, so the agent's version holds only its writes and the version before holds
   * what came before them. An agent's version waiting at its bound (or being taken) is taken first,
   * unless this is the same agent's burst with nothing stored after it: until it is in, what was stored
   * after it could not be told from the burst.
   */
  async beforeAgentWrite(document: Document, entry: Stored, author: string): Promise<void> {
    const bound = entry.agentBound
    const waiting = bound ?? entry.takingBound
    const goesOn = waiting && !waiting.since && waiting.author === author
    if (waiting && !goesOn && !this.loaded.closing) {
      if (bound) this.cancel(entry)
      await this.compaction.runBound(document)
    }
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
        .finally(() => this.loaded.unloadIfIdle(document))
    }, wait)
    entry.versionTimer.unref?.()
  }

  /**
   * The agent's version waiting at its bound, after `wait` ms; then what was stored after the bound (a
   * person's typing) waits for a version of its own, as typing does.
   */
  private scheduleBound(document: Document, entry: Stored, wait: number): void {
    if (this.loaded.closing) return
    entry.versionTimer = setTimeout(() => {
      entry.versionTimer = null
      if (!this.loaded.isOpen(document.name) || this.loaded.get(document.name) !== entry) return
      void this.compaction
        .runBound(document)
        .catch(() => {})
        .finally(() => this.loaded.unloadIfIdle(document))
        .then(() => {
          if (!entry.unversioned || entry.agentBound || entry.versionTimer || this.loaded.closing) return
          if (this.loaded.get(document.name) !== entry) return
          entry.versionReason ??= 'pause'
          this.schedulePause(document, entry)
        })
    }, wait)
    entry.versionTimer.unref?.()
  }

  /** No timed version of this document (it unloads, or shutdown). */
  cancel(entry: Stored): void {
    if (entry.versionTimer) clearTimeout(entry.versionTimer)
    entry.versionTimer = null
  }
}
