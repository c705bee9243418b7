/**
 * Live-or-stored document access. Reads use the document Hocuspocus holds in memory when it is loaded
 * (so they see what editors typed a moment ago), and otherwise decode the stored state into a throwaway
 * Y.Doc: a cold read never loads the document into Hocuspocus, so nothing is kept or stored on unload.
 */
import {
  documentMarkdownPrefix,
  FRAGMENT_NAME,
  liveOutline,
  type MarkdownPrefix,
  type OutlineNode,
  ok,
  type Result,
  readOutline,
} from '@collab/doc-schema'
import type { Hocuspocus } from '@hocuspocus/server'
import * as Y from 'yjs'
import type { SectionChange } from '../../../documents/history-diff.ts'
import type { DocumentsService } from '../../../documents/service.ts'
import { applyStored } from '../../../documents/stored-parts.ts'
import type { ReadInput } from '../../../documents/worker/read.ts'
import { INLINE_READ_BYTES, INLINE_READ_STRUCTS, MAX_KEPT_WHOLE_READS } from '../limits.ts'
import { WHOLE_READ_OPTIONS, type WholeRead, wholeReadChars, wholeReadOf } from '../render/whole-read.ts'
import { stopIfCancelled } from './cancel.ts'
import type { ReadableDocument } from './readable.ts'
import { createSectionReads, type SectionReads, type SectionReadWhere } from './section-reads.ts'

export type { ReadableDocument } from './readable.ts'

export type DocumentReader = {
  /**
   * The document's content, or null when it has no stored row any more (deleted meanwhile). With
   * `call.signal`: a caller gone while the stored state loaded stops here (CallCancelled) before it is
   * decoded; `call.beforeDecode` is the test seam awaited just before that check.
   */
  open(
    room: string,
    call?: { signal?: AbortSignal; beforeDecode?: () => Promise<void> },
  ): Promise<ReadableDocument | null>
  /**
   * Only the outline (equal to `readOutline` of the content): the live document's memo, kept current as
   * it changes (only edited sections are re-hashed); else the outline the store step saved with the state
   * (no state read or decoded) when it holds section sizes; else by decoding the state. Null when the
   * document is gone.
   */
  openOutline(room: string): Promise<OutlineNode[] | null>
  /**
   * The whole read of the document within `max` characters (render/whole-read.ts), the same text as
   * `readWholeDocument` of its content, for `call.user`. Small content is rendered here; larger content
   * (INLINE_READ_STRUCTS, INLINE_READ_BYTES) on the documents' worker with the user's share, so no other
   * client waits for it (a refusal when the user's earlier whole read is still rendering); the answer of
   * an unchanged document is kept (per live document and revision, or per stored content). Null when the
   * document is gone.
   */
  readWhole(
    room: string,
    max: number,
    call: { user: string; signal?: AbortSignal; beforeDecode?: () => Promise<void> },
  ): Promise<Result<WholeRead> | null>
  /**
   * What changed in the document since the version whose state is `since` (history-diff.ts
   * `diffSinceState`), for `call.user`: compared here when both are small, else on the documents' worker
   * with the user's share (documents/service.ts `changesSince`). `since` may be transferred to the worker
   * (empty after). Null when the document is gone.
   */
  changesSince(
    room: string,
    since: Uint8Array | null,
    call: { user: string; signal?: AbortSignal; beforeDecode?: () => Promise<void> },
  ): Promise<Result<SectionChange[]> | null>
  /** Section and chapter reads: kept, made here, or on the documents' worker when dear (section-reads.ts). */
  sections: SectionReads
}

/** Where a whole read was made: here, on the documents' worker, or kept from an earlier read. */
export type WholeReadWhere = 'inline' | 'worker' | 'kept'

export function createDocumentReader(deps: {
  hocuspocus: Pick<Hocuspocus, 'documents'>
  documents: Pick<
    DocumentsService,
    | 'loadStored'
    | 'loadForLoad'
    | 'loadOutline'
    | 'readPrefixOf'
    | 'readLivePrefixOf'
    | 'storedRevision'
    | 'readSectionOf'
    | 'changesSince'
  >
  /** Told where each whole read was made (the metric mcp_whole_reads_total). */
  onWholeRead?: (where: WholeReadWhere) => void
  /** Told where each section or chapter read was made (the metric mcp_section_reads_total). */
  onSectionRead?: (where: SectionReadWhere) => void
}): DocumentReader {
  const kept = new KeptWholeReads()
  const told = (where: WholeReadWhere, read: WholeRead): Result<WholeRead> => {
    deps.onWholeRead?.(where)
    return ok(read)
  }
  /**
   * The whole read rendered on the worker for `user` (from stored content, or on the live document's copy
   * there), then handed to `keep`.
   */
  async function onWorker(
    user: string,
    content: { stored: ReadInput['stored'] } | { live: Y.Doc },
    max: number,
    keep: (read: WholeRead) => void,
  ): Promise<Result<WholeRead>> {
    const minChars = wholeReadChars(max)
    const asked = { minChars, opts: WHOLE_READ_OPTIONS }
    const prefix =
      'live' in content
        ? await deps.documents.readLivePrefixOf(user, content.live, asked)
        : await deps.documents.readPrefixOf(user, { stored: content.stored, ...asked })
    if (prefix.kind === 'error') return prefix
    const read = wholeReadOf(prefix.value, max)
    keep(read)
    return told('worker', read)
  }
  const reader: DocumentReader = {
    sections: createSectionReads(deps),
    async open(room, call = {}) {
      const { signal } = call
      stopIfCancelled(signal)
      const live = deps.hocuspocus.documents.get(room)
      if (live) {
        return { fragment: live.getXmlFragment(FRAGMENT_NAME), source: 'live', release() {} }
      }
      const stored = await deps.documents.loadStored(room)
      if (!stored) return null
      // Decoding a large state is the costly step of a cold read: not for a caller that went away.
      await call.beforeDecode?.()
      stopIfCancelled(signal)
      const doc = new Y.Doc()
      applyStored(doc, stored)
      return { fragment: doc.getXmlFragment(FRAGMENT_NAME), source: 'stored', release: () => doc.destroy() }
    },

    async readWhole(room, max, call) {
      const { signal, user } = call
      stopIfCancelled(signal)
      const live = deps.hocuspocus.documents.get(room)
      if (live) {
        const fragment = live.getXmlFragment(FRAGMENT_NAME)
        if (structCount(live) <= INLINE_READ_STRUCTS) return told('inline', readInline(fragment, max))
        const rev = kept.revisionOf(live)
        const known = kept.live(live, rev, max)
        if (known) return told('kept', known)
        // Rendered on the document's copy on the worker, sent only what changed since its last read: the
        // whole state encoded here for each read held the loop ~1/10 of the render.
        return onWorker(user, { live }, max, (read) => kept.keepLive(live, rev, max, read))
      }
      // A read kept for the stored content as it is now needs only that content's revision (no bytes read).
      const revision = await deps.documents.storedRevision(room)
      if (!revision) return null
      const known = kept.stored(room, revision.revision, max)
      if (known) return told('kept', known)
      // A snapshot larger than one slice comes read in slices (sliced-read.ts) and is applied on the
      // worker: read whole, its text was parsed and decoded here in one piece.
      const loaded = await deps.documents.loadForLoad(room)
      if (!loaded) return null
      await call.beforeDecode?.()
      stopIfCancelled(signal)
      const bytes = (loaded.snapshot?.byteLength ?? loaded.snapshotBytes ?? 0) + loaded.updateBytes
      if (bytes <= INLINE_READ_BYTES && !loaded.slicedSnapshot) {
        const doc = new Y.Doc()
        try {
          applyStored(doc, loaded)
          return told('inline', readInline(doc.getXmlFragment(FRAGMENT_NAME), max))
        } finally {
          doc.destroy()
        }
      }
      const stored = { snapshot: loaded.slicedSnapshot ?? loaded.snapshot, updates: loaded.updates }
      // Kept under the revision read before loading: if the content moved on meanwhile, that revision
      // never comes back (times and log ids only grow), so the read is never served for other content.
      return onWorker(user, { stored }, max, (read) => kept.keepStored(room, revision.revision, max, read))
    },

    async changesSince(room, since, call) {
      const { signal, user } = call
      stopIfCancelled(signal)
      return deps.documents.changesSince(user, room, since, deps.hocuspocus.documents.get(room), async () => {
        await call.beforeDecode?.()
        stopIfCancelled(signal)
      })
    },

    async openOutline(room) {
      const live = deps.hocuspocus.documents.get(room)
      // The memo shared with the store step (one per live fragment, dropped with the document).
      if (live) return liveOutline(live.getXmlFragment(FRAGMENT_NAME))
      const stored = await deps.documents.loadOutline(room)
      if (!stored) return null
      if (stored.outline && hasSizes(stored.outline)) return stored.outline
      // Stored before outlines were, or before they held sizes: decode it.
      const content = await reader.open(room)
      if (!content) return null
      try {
        return readOutline(content.fragment)
      } finally {
        content.release()
      }
    },
  }
  return reader
}

/** Whether every node of a stored outline has its size (an outline stored before sizes were counted has none). */
function hasSizes(roots: readonly OutlineNode[]): boolean {
  const stack = [...roots]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (!Number.isSafeInteger(node.size) || node.size < 0) return false
    if (Array.isArray(node.children)) stack.push(...node.children)
  }
  return true
}

/** The whole read rendered here (small content: a round trip through the worker would cost more). */
function readInline(fragment: Y.XmlFragment, max: number): WholeRead {
  const prefix: MarkdownPrefix = documentMarkdownPrefix(
    fragment,
    wholeReadChars(max),
    WHOLE_READ_OPTIONS,
    true,
  )
  return wholeReadOf(prefix, max)
}

/**
 * The structs a document holds (items, deleted ones and format marks included): what its render and its
 * encoding cost grows with, counted without walking them (one length per client).
 */
function structCount(doc: Y.Doc): number {
  let count = 0
  for (const structs of doc.store.clients.values()) count += structs.length
  return count
}

/**
 * Whole reads kept per document while its content is at one revision, by the read's budget: the newest
 * MAX_KEPT_WHOLE_READS documents (oldest first in the map), a document's reads dropped when its revision
 * moves on.
 */
class KeptByRevision<K, R> {
  private readonly entries = new Map<K, { revision: R; reads: Map<number, WholeRead> }>()

  get(key: K, revision: R, max: number): WholeRead | undefined {
    const entry = this.entries.get(key)
    return entry?.revision === revision ? entry.reads.get(max) : undefined
  }

  keep(key: K, revision: R, max: number, read: WholeRead): void {
    let entry = this.entries.get(key)
    if (entry?.revision !== revision) {
      entry = { revision, reads: new Map() }
      this.entries.delete(key)
      this.entries.set(key, entry)
      while (this.entries.size > MAX_KEPT_WHOLE_READS)
        this.entries.delete(this.entries.keys().next().value as K)
    }
    entry.reads.set(max, read)
  }

  drop(key: K): void {
    this.entries.delete(key)
  }
}

/**
 * Whole reads kept for documents that have not changed since (repeat reads of an unchanged document are
 * what a caller who wants to hold the server sends): per live document (its revision counted from its
 * updates) and per stored content (by its revision: the snapshot's write time and size, the log's ids).
 */
class KeptWholeReads {
  private readonly revisions = new WeakMap<Y.Doc, { rev: number }>()
  /** A live document's entry goes when it is destroyed (unloaded). */
  private readonly liveReads = new KeptByRevision<Y.Doc, number>()
  private readonly storedReads = new KeptByRevision<string, string>()

  /** The live document's revision: counted from its first whole read on, one more per update. */
  revisionOf(doc: Y.Doc): number {
    let revision = this.revisions.get(doc)
    if (!revision) {
      const counted = { rev: 0 }
      doc.on('update', () => {
        counted.rev++
      })
      doc.on('destroy', () => this.liveReads.drop(doc))
      this.revisions.set(doc, counted)
      revision = counted
    }
    return revision.rev
  }

  live(doc: Y.Doc, rev: number, max: number): WholeRead | undefined {
    return this.liveReads.get(doc, rev, max)
  }

  keepLive(doc: Y.Doc, rev: number, max: number, read: WholeRead): void {
    // Changed while it rendered: the read is right for what it showed, not for the document now.
    if (this.revisions.get(doc)?.rev !== rev) return
    this.liveReads.keep(doc, rev, max, read)
  }

  stored(room: string, revision: string, max: number): WholeRead | undefined {
    return this.storedReads.get(room, revision, max)
  }

  keepStored(room: string, revision: string, max: number, read: WholeRead): void {
    this.storedReads.keep(room, revision, max, read)
  }
}
