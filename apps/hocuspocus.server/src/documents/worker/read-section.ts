/**
 * A section read (read_document with section_id, with or without its subsections) rendered on the
 * documents' worker, on the copy of the live document that whole reads keep there (read.ts
 * renderLivePrefix), or on a copy of a cold read's decoded content: the same `renderSection` or
 * `renderChapter` the event loop runs, on the same content, so the same text, rev, notes' blocks and total.
 * Taken for reads whose render is dear (modules/mcp/infra/section-reads.ts decides): a section of one
 * paragraph of 10,000 marks held the event loop ~900 ms for its first read (its total measured too) and
 * ~150-260 ms for a read of 2,000 characters (load ~13 on 2 cores). The total is measured here at once
 * (never `keptTotalOnly`) and kept by the copy's outline memo for its next reads.
 */
import {
  type ChapterOptions,
  type ChapterRender,
  type Result,
  renderChapter,
  renderSection,
  type SectionRender,
} from '@collab/doc-schema'
import type * as Y from 'yjs'

/** Which read to render: the section's, or with `withSubsections` its chapter's (`opts.fromSection` then applies). */
export type SectionJob = { sectionId: string; withSubsections: boolean; opts: ChapterOptions }

/** What a job asks of a copy instead of a whole read's prefix. */
export type SectionAsk = { section: SectionJob }

/** A section read, a chapter read, or the document model's refusal (the section went meanwhile). */
export type SectionReadResult = Result<SectionRender> | Result<ChapterRender>

/** The read `job` asks for, rendered on `fragment` (a copy here), its total measured at once. */
export function renderSectionJob(fragment: Y.XmlFragment, job: SectionJob): SectionReadResult {
  const opts: ChapterOptions = { ...job.opts, keptTotalOnly: false }
  if (job.withSubsections) return renderChapter(fragment, job.sectionId, opts)
  return renderSection(fragment, job.sectionId, opts)
}
