/**
 * Where a section read (read_document with section_id) is made: kept (an unchanged section read with the
 * same options before: answered first, before any count, so a warm read costs what it did), here on the
 * event loop (cheap: INLINE_SECTION_READ_ITEMS), or on the documents' worker (dear: a section dense in
 * marks), on the live document's copy there (documents/worker/read-section.ts) or, for a cold read, on a
 * copy of its decoded content; the same text either way. A live section read made on the worker is kept
 * here as `renderSection` keeps its own, while the document has not changed since it was sent.
 */
import {
  type ChapterOptions,
  type ChapterRender,
  keepSectionRead,
  keptSectionRead,
  type Refusal,
  type RenderOptions,
  type Result,
  type SectionRender,
  sectionReadItems,
} from '@collab/doc-schema'
import type * as Y from 'yjs'
import type { DocumentsService } from '../../../documents/service.ts'
import type { SectionReadResult } from '../../../documents/worker/read-section.ts'
import { INLINE_SECTION_READ_ITEMS } from '../limits.ts'
import { stopIfCancelled } from './cancel.ts'
import type { ReadableDocument } from './readable.ts'

/** Where a section or chapter read was made: here, on the documents' worker, or kept from an earlier read. */
export type SectionReadWhere = 'inline' | 'worker' | 'kept'

export type SectionReads = {
  /** The kept read of an unchanged section with these options (counted `kept`), or undefined. */
  kept(content: ReadableDocument, sectionId: string, opts: RenderOptions): SectionRender | undefined
  /**
   * The section read made on the worker when its render is dear, or with `dear` (a cut read whose total
   * needs a block too dense to measure here) whatever it costs; undefined when it is cheap (the caller
   * renders it here and says so with `told('inline')`).
   */
  section(
    content: ReadableDocument,
    sectionId: string,
    opts: RenderOptions,
    call: { user: string; signal?: AbortSignal },
    dear?: boolean,
  ): Promise<Result<SectionRender> | undefined>
  /** The same for a chapter read (with_subsections); never kept. */
  chapter(
    content: ReadableDocument,
    sectionId: string,
    opts: ChapterOptions,
    call: { user: string; signal?: AbortSignal },
    dear?: boolean,
  ): Promise<Result<ChapterRender> | undefined>
  told(where: SectionReadWhere): void
}

export function createSectionReads(deps: {
  documents: Pick<DocumentsService, 'readSectionOf'>
  /** Told where each section or chapter read was made (the metric mcp_section_reads_total). */
  onSectionRead?: (where: SectionReadWhere) => void
}): SectionReads {
  const told = (where: SectionReadWhere) => deps.onSectionRead?.(where)
  /** The read rendered on the worker, on the document's copy there; undefined when cheap. */
  async function onWorker(
    content: ReadableDocument,
    sectionId: string,
    withSubsections: boolean,
    opts: ChapterOptions,
    call: { user: string; signal?: AbortSignal },
    dear: boolean,
  ): Promise<Refusal | { read: SectionReadResult; unchanged: boolean } | undefined> {
    const ask = { ...opts, withSubsections }
    if (
      !dear &&
      sectionReadItems(content.fragment, sectionId, ask, INLINE_SECTION_READ_ITEMS) <=
        INLINE_SECTION_READ_ITEMS
    )
      return undefined
    const doc = content.fragment.doc
    if (!doc) return undefined
    const live = content.source === 'live'
    const before = changesOf(doc)
    const read = await deps.documents.readSectionOf(
      call.user,
      doc,
      { section: { sectionId, withSubsections, opts } },
      live,
    )
    stopIfCancelled(call.signal)
    if (read.kind === 'error') return read
    told('worker')
    return { read: read.value, unchanged: live && changesOf(doc) === before }
  }
  return {
    kept(content, sectionId, opts) {
      const kept = keptSectionRead(content.fragment, sectionId, opts)
      if (kept) told('kept')
      return kept
    },
    async section(content, sectionId, opts, call, dear = false) {
      const made = await onWorker(content, sectionId, false, opts, call, dear)
      if (!made || !('read' in made)) return made
      const read = made.read as Result<SectionRender>
      // Kept for the next read only while it is the document's content as it is now.
      if (read.kind === 'ok' && made.unchanged)
        return { ...read, value: keepSectionRead(content.fragment, sectionId, opts, read.value) }
      return read
    },
    async chapter(content, sectionId, opts, call, dear = false) {
      const made = await onWorker(content, sectionId, true, opts, call, dear)
      if (!made || !('read' in made)) return made
      return made.read as Result<ChapterRender>
    },
    told,
  }
}

/** Updates applied to each document since its first section read on the worker (a change since a read). */
const changes = new WeakMap<Y.Doc, { count: number }>()

function changesOf(doc: Y.Doc): number {
  let counted = changes.get(doc)
  if (!counted) {
    const made = { count: 0 }
    doc.on('update', () => {
      made.count++
    })
    changes.set(doc, made)
    counted = made
  }
  return counted.count
}
