/**
 * Large states this server wrote a moment ago, so it does not read them back over the database (issue 27
 * with 24; docs/history.md "Bounds"). A restore or revert of a document nobody has open wrote its
 * "before" version (the snapshot, copied as a version), then read that snapshot again to load the
 * document for its edit, then the version again as the newest for the next version's summary, then the
 * snapshot again for the compaction after the edit: each a pass of megabytes through the pg driver on
 * the event loop, in slices (~0.1 s of CPU per MiB, measured in red-team-history's profile).
 *
 * Right by construction, not by timing: a snapshot is taken from here only when the row's version
 * (`xmin`, which every write of the row changes; read with the row's head, as every sliced read does)
 * is the one this server's write committed; a version's state never changes once taken. Entries past
 * RECENT_STATE_MS or over RECENT_STATE_BYTES in all are dropped (a drop only means a read). Only states
 * of more than one read slice are kept: smaller ones are read in one statement. Every caller gets a copy
 * of its own (they give them to the documents' worker, which detaches them).
 */
import type { PrismaClient } from '../db/generated/client.ts'

/** How long a state written is kept: the steps of one restore or revert, on a loaded machine. */
export const RECENT_STATE_MS = 30_000
/** Bytes of states kept at most, per database (the oldest go first). */
export const RECENT_STATE_BYTES = 48 * 1024 * 1024

type Entry = { state: Uint8Array; at: number }

export class RecentStates {
  /** Snapshots by document id, each with the row version its write committed. */
  private readonly snapshots = new Map<string, Entry & { rowVersion: string }>()
  /** Versions' states by version id. */
  private readonly versions = new Map<bigint, Entry>()
  private bytes = 0
  /** Prunes once the oldest entry is due, so an idle server does not hold states it will not read. */
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    /** States of at most this many bytes are not kept (read in one statement anyway). */
    private readonly minBytes: number,
    private readonly now: () => number = Date.now,
    /** How long a state is kept (RECENT_STATE_MS; a test's shorter). */
    private readonly keepMs = RECENT_STATE_MS,
  ) {}

  /**
   * A compaction's or "before" version's write, once committed: the snapshot of `documentId` is `state`
   * at row version `rowVersion`, and so is version `versionId` when one was taken.
   */
  written(documentId: string, rowVersion: string | null, state: Uint8Array, versionId?: bigint): void {
    this.drop(this.snapshots.get(documentId))
    this.snapshots.delete(documentId)
    if (state.byteLength <= this.minBytes || state.byteLength > RECENT_STATE_BYTES) return
    const entry = { state: state.slice(), at: this.now() }
    if (rowVersion !== null) this.snapshots.set(documentId, { ...entry, rowVersion })
    if (versionId !== undefined) this.versions.set(versionId, entry)
    this.bytes += entry.state.byteLength
    this.prune()
  }

  /** States held now, in bytes. */
  get heldBytes(): number {
    return this.bytes
  }

  /** A copy of the snapshot of `documentId` when this server wrote it at row version `rowVersion`. */
  snapshot(documentId: string, rowVersion: string): Uint8Array | null {
    this.prune()
    const entry = this.snapshots.get(documentId)
    return entry && entry.rowVersion === rowVersion ? entry.state.slice() : null
  }

  /** A copy of version `id`'s state when this server wrote it. */
  version(id: bigint): Uint8Array | null {
    this.prune()
    return this.versions.get(id)?.state.slice() ?? null
  }

  /** Counts an entry's bytes out when no map holds its state any more. */
  private drop(entry: Entry | undefined): void {
    if (!entry) return
    for (const other of this.versions.values()) if (other.state === entry.state) return
    for (const other of this.snapshots.values()) if (other.state === entry.state) return
    this.bytes -= entry.state.byteLength
  }

  private prune(): void {
    const oldest = this.now() - this.keepMs
    const all = [...this.snapshots.entries()].map(([key, entry]) => ({ key, entry, snapshot: true }))
    const versions = [...this.versions.entries()].map(([key, entry]) => ({ key, entry, snapshot: false }))
    const ordered = [...all, ...versions].sort((a, b) => a.entry.at - b.entry.at)
    for (const { key, entry, snapshot } of ordered) {
      if (entry.at >= oldest && this.bytes <= RECENT_STATE_BYTES) break
      if (snapshot) this.snapshots.delete(key as string)
      else this.versions.delete(key as bigint)
      this.drop(entry)
    }
    clearTimeout(this.timer)
    this.timer = undefined
    const next = Math.min(...[...this.snapshots.values(), ...this.versions.values()].map((e) => e.at))
    if (Number.isFinite(next)) {
      this.timer = setTimeout(() => this.prune(), Math.max(0, next + this.keepMs - this.now()) + 1)
      this.timer.unref?.()
    }
  }
}

const perDatabase = new WeakMap<PrismaClient, RecentStates>()

/**
 * The recent states of one database client (the services' factories share it: stored-content.ts,
 * compact-stored.ts, history-before.ts, history.ts). `minBytes`: STATE_SLICE_BYTES.
 */
export function recentStatesOf(prisma: PrismaClient, minBytes: number): RecentStates {
  let recent = perDatabase.get(prisma)
  if (!recent) {
    recent = new RecentStates(minBytes)
    perDatabase.set(prisma, recent)
  }
  return recent
}
