/**
 * read_document: the whole document as Markdown, or one section with numbered blocks. Both bounded by
 * MAX_READ_CHARS (or a smaller max_chars); a cut read ends with notes naming how to read on.
 */
import {
  type ChapterRender,
  ok,
  type Refusal,
  type Result,
  refuse,
  renderChapter,
  renderSection,
  type SectionRender,
  type ShownSection,
  sectionMeasureSteps,
} from '@collab/doc-schema'
import { z } from 'zod'
import { runInSlices } from '../../../turns.ts'
import { stopIfCancelled } from '../infra/cancel.ts'
import { INLINE_SECTION_READ_ITEMS, MAX_READ_CHARS } from '../limits.ts'
import { escapeFrameContent, renderOutput } from '../render/frame.ts'
import { notes, type ShownBlocks } from '../render/notes.ts'
import { readCall, type ToolContext } from './context.ts'
import { maxCharsField, optionalSectionIdField, slugField } from './fields.ts'
import { goneRefusal, openDocument, resolveForAgent } from './open-document.ts'
import { defineTool, type KeptAnswer, type ToolAnswer } from './tool.ts'

export const readDocument = defineTool({
  name: 'read_document',
  kind: 'read',
  title: 'Read a document or one section',
  description:
    'Without section_id: the whole document as Markdown. With section_id: a `section_id` line and a ' +
    '`rev` line, then the section heading and every block after it numbered [1], [2]… (the numbers ' +
    'edit_blocks uses). With with_subsections: true, also each subsection (every deeper heading up to ' +
    'the next heading at its level or higher), each shown as its own section read, and one ' +
    '`subsection: <id>, rev: <rev>` line per further section before the frame: a chapter in one call. ' +
    `At most ${MAX_READ_CHARS} characters per call (max_chars lowers it); a section ` +
    'read stops on a block boundary and a note names the from_block that continues (a block longer ' +
    'than the budget is shown in parts: the note adds the block_offset of the next part). Call ' +
    'get_outline first: it says whether the whole document fits one read; if not, read the sections ' +
    'you need.',
  inputSchema: {
    slug: slugField(),
    section_id: optionalSectionIdField(
      'Read only this section (a heading and its blocks); ids come from get_outline.',
    ),
    with_subsections: z
      .boolean()
      .optional()
      .describe(
        'With section_id: also show its subsections (deeper headings up to the next heading at its level or higher), in one read.',
      ),
    from_section: optionalSectionIdField(
      'With with_subsections: the section to start at, the section itself or one of its subsections (a cut read names it); from_block applies to it.',
    ),
    max_chars: maxCharsField('this read'),
    from_block: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('With section_id: the first block to show (a cut read names it).'),
    block_offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'With from_block: characters of that block already read; the read shows the rest of it (a cut read names it).',
      ),
  },
  async handler(
    { slug, section_id, with_subsections, from_section, max_chars, from_block, block_offset },
    ctx,
  ) {
    if (with_subsections !== undefined && section_id === undefined) {
      return refuse(
        'invalid_input',
        'with_subsections: only works with section_id. Call get_outline for section ids, then read_document with section_id and with_subsections: true.',
        'with_subsections',
      )
    }
    if (from_section !== undefined && with_subsections !== true) {
      return refuse(
        'invalid_input',
        'from_section: only works with with_subsections: true. Call again with section_id, with_subsections: true and the from_section a note named.',
        'from_section',
      )
    }
    if (from_block !== undefined && section_id === undefined) {
      return refuse(
        'invalid_input',
        'from_block: only works with section_id. Call get_outline for section ids, then read_document with section_id and from_block.',
        'from_block',
      )
    }
    if (block_offset !== undefined && from_block === undefined) {
      return refuse(
        'invalid_input',
        'block_offset: only works with from_block. Call again with the from_block and block_offset a note named.',
        'block_offset',
      )
    }
    const cap = max_chars ?? MAX_READ_CHARS
    if (section_id === undefined) return readWhole(ctx, slug, cap)
    ctx.report?.stage('opening the document')
    const opened = await openDocument(ctx, slug)
    if (opened.kind === 'error') return opened
    const { resolved, content } = opened.value
    const source = { kind: 'document', slug, whose: resolved.access.whose } as const
    const what = with_subsections ? 'the section and its subsections' : 'the section'
    ctx.report?.stage(`rendering ${what} (at most ${cap} characters)`)
    const call = { user: ctx.principal.user.id, signal: ctx.signal }
    try {
      if (with_subsections) {
        const chapterOpts = {
          fromSection: from_section,
          fromBlock: from_block,
          blockOffset: block_offset,
          maxChars: cap,
        }
        // Dense: rendered on the documents' worker, its total measured there; else here.
        const chapter = await readPart(ctx, {
          onWorker: (dear) => ctx.reader.sections.chapter(content, section_id, chapterOpts, call, dear),
          here: (keptTotalOnly) =>
            renderChapter(content.fragment, section_id, { ...chapterOpts, keptTotalOnly }),
          measureSteps: () =>
            sectionMeasureSteps(content.fragment, section_id, true, INLINE_SECTION_READ_ITEMS),
        })
        if (chapter.kind === 'error') return withNextStep(chapter)
        return renderOutput({
          before: chapterLines(chapter.value),
          source,
          body: escapeFrameContent(chapter.value.text),
          notes: chapterNotes(section_id, chapter.value, max_chars),
        })
      }
      const sectionOpts = { fromBlock: from_block, blockOffset: block_offset, maxChars: cap }
      // An unchanged section read before is answered first, before any count; a dense one is rendered on
      // the documents' worker (its total measured there), a cheap one here.
      const keptRead = ctx.reader.sections.kept(content, section_id, sectionOpts)
      const rendered = keptRead
        ? ok(keptRead)
        : await readPart(ctx, {
            onWorker: (dear) => ctx.reader.sections.section(content, section_id, sectionOpts, call, dear),
            here: (keptTotalOnly) =>
              renderSection(content.fragment, section_id, { ...sectionOpts, keptTotalOnly }),
            measureSteps: () =>
              sectionMeasureSteps(content.fragment, section_id, false, INLINE_SECTION_READ_ITEMS),
          })
      if (rendered.kind === 'error') return withNextStep(rendered)
      const section = rendered.value
      // The whole answer is kept with the read (the same object while the section is unchanged), per
      // frame (slug as asked, whose) and max_chars, which picks the note's words.
      const key = `${slug}\n${resolved.access.whose}\n${max_chars ?? ''}`
      let answers = keptAnswers.get(section)
      const kept = answers?.get(key)
      if (kept) return kept
      const noteLines: string[] = []
      // A read is cut exactly when it names the block that continues it; it then carries the total.
      if (section.nextBlock !== undefined && section.total !== undefined) {
        noteLines.push(
          notes.nextBlock(shownOf(section), section.sectionId, section.nextBlock, section.nextOffset),
          cutNote(section, section.total, max_chars),
        )
      }
      const answer: KeptAnswer = {
        kind: 'kept',
        text: renderOutput({
          before: [`section_id: ${section.sectionId}`, `rev: ${section.rev}`],
          source,
          body: escapeFrameContent(section.text),
          notes: noteLines,
        }),
      }
      if (!answers) {
        answers = new Map()
        keptAnswers.set(section, answers)
      }
      if (answers.size < MAX_KEPT_ANSWERS) answers.set(key, answer)
      return answer
    } finally {
      content.release()
    }
  },
})

/**
 * The whole document within `cap` characters: rendered by the reader (infra/documents.ts), on the documents'
 * worker when its render is dear, so a dense document's read holds no other client; the same text either way.
 */
async function readWhole(ctx: ToolContext, slug: string, cap: number): Promise<ToolAnswer> {
  ctx.report?.stage('opening the document')
  const resolved = await resolveForAgent(ctx, slug)
  if (resolved.kind === 'error') return resolved
  ctx.report?.stage(`rendering the document (at most ${cap} characters)`)
  const whole = await ctx.reader.readWhole(resolved.value.document.room, cap, {
    ...readCall(ctx),
    user: ctx.principal.user.id,
  })
  if (!whole) return goneRefusal(slug)
  if (whole.kind === 'error') return whole
  stopIfCancelled(ctx.signal)
  const read = whole.value
  return renderOutput({
    source: { kind: 'document', slug, whose: resolved.value.access.whose },
    body: escapeFrameContent(read.text),
    notes: !read.cut
      ? []
      : read.byWork
        ? [notes.documentCutByWork(read.text.length)]
        : [notes.documentCut(read.text.length, read.total, read.counted)],
  })
}

/**
 * A section read's answers, kept per read: the document model answers the same (frozen) read while the
 * section and the read's options are unchanged (renderSection keeps it with the section's revision), so a
 * warm read of an unchanged section frames its answer once, and over HTTP its JSON is made once too
 * (tools/answer.ts). A read made anew is a new object, and its entry goes with the old one.
 */
const keptAnswers = new WeakMap<SectionRender, Map<string, KeptAnswer>>()

/** Answers kept per read (the same section read by a few callers, or by one slug and its other forms). */
const MAX_KEPT_ANSWERS = 8

/**
 * The lines before a chapter read's frame: `section_id` and `rev` of the first section shown, then one
 * `subsection:` line per further section, in the frame's order. Ids were checked by the document model
 * (isHeadingId), so none can carry a newline or a frame bracket; a heading without one shows `(none)`.
 */
function chapterLines({ sections }: ChapterRender): string[] {
  const [first, ...rest] = sections
  return [
    `section_id: ${first!.sectionId}`,
    `rev: ${first!.rev}`,
    ...rest.map(
      ({ sectionId, rev }) => `subsection: ${sectionId === '' ? '(none)' : sectionId}, rev: ${rev}`,
    ),
  ]
}

/**
 * A section or chapter read not kept: on the documents' worker when its render is dear (`onWorker` answers
 * undefined when it is cheap), else here; a cut read whose total is not measured yet measures it without
 * holding the thread (a block too dense for one step is left out) and reads again, and one still without
 * its total is read on the worker, which measures it there.
 */
async function readPart<R extends { totalUnknown?: boolean }>(
  ctx: ToolContext,
  part: {
    onWorker(dear: boolean): Promise<Result<R> | undefined>
    here(keptTotalOnly: boolean): Result<R>
    measureSteps(): Iterator<void>
  },
): Promise<Result<R>> {
  const onWorker = await part.onWorker(false)
  if (onWorker) return onWorker
  let read = part.here(true)
  if (read.kind === 'ok' && read.value.totalUnknown) {
    await measureInSlices(part.measureSteps(), ctx)
    read = part.here(true)
    if (read.kind === 'ok' && read.value.totalUnknown) return (await part.onWorker(true)) ?? part.here(false)
  }
  ctx.reader.sections.told('inline')
  return read
}

/**
 * Runs the measuring steps of a section or chapter (`sectionMeasureSteps`: one heading or block each) in
 * slices of the event loop's turns (turns.ts; measuring renders each block once, ~2–5 µs a character,
 * seconds for a section of megabytes), so other callers are answered meanwhile; a call cancelled meanwhile
 * stops there. One block is one step: a single block of megabytes is measured at once.
 */
async function measureInSlices(steps: Iterator<void>, ctx: ToolContext): Promise<void> {
  ctx.report?.stage('measuring the section once for its total (kept for later reads)')
  await runInSlices(steps, () => stopIfCancelled(ctx.signal))
}

/** Which blocks of one section a read showed, as the next-page note names them. */
function shownOf(part: ShownSection): ShownBlocks {
  return {
    first: part.firstBlock,
    last: part.lastBlock,
    count: part.blockCount,
    lastCut: part.truncatedBlock !== undefined,
    firstContinued: part.firstOffset !== undefined,
  }
}

/**
 * The truncation note of a cut section or chapter read (#380's texts): of `total`, the budget that applied
 * when the caller lowered it, the full budget otherwise, or what was shown when the markup stopped it first.
 */
function cutNote(
  read: { byWork?: boolean; budget: number; shownChars: number },
  total: number,
  maxChars: number | undefined,
): string {
  if (read.byWork) return notes.cutByWork(read.shownChars, total)
  return maxChars !== undefined && maxChars < MAX_READ_CHARS
    ? notes.cutByMaxChars(read.budget, total)
    : notes.cutAtCeiling(total)
}

/** A cut chapter read's notes: what this one showed and where the next read starts, then the total. */
function chapterNotes(sectionId: string, chapter: ChapterRender, maxChars: number | undefined): string[] {
  const { next, total } = chapter
  if (next === undefined || total === undefined) return []
  const parts = chapter.sections.map((part) => ({ ...shownOf(part), sectionId: part.sectionId }))
  return [
    next.sectionId === ''
      ? notes.chapterStopsAtUnnamed(parts)
      : notes.nextChapterPart(parts, sectionId, {
          fromSection: next.sectionId,
          fromBlock: next.fromBlock,
          blockOffset: next.blockOffset,
        }),
    cutNote(chapter, total, maxChars),
  ]
}

/** The document model's refusals of a section read, with this tool's next step. */
function withNextStep(refusal: Refusal): Refusal {
  if (refusal.reason === 'block_out_of_range') {
    return {
      ...refusal,
      message: `${refusal.message} Call again with from_block in that range, or without it.`,
    }
  }
  if (refusal.reason === 'block_offset_out_of_range') {
    return {
      ...refusal,
      message: `${refusal.message} Call again with the block_offset a note named, or without it.`,
    }
  }
  if (refusal.reason === 'section_not_found') {
    return { ...refusal, message: `${refusal.message} Call get_outline for the current section ids.` }
  }
  return refusal
}
