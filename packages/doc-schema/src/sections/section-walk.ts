/**
 * The parts section reads and chapter reads share: where a read starts and its budget, the heading line, and
 * the walk over one section's numbered blocks within the budget (render-section.ts, render-chapter.ts).
 */
import type * as Y from 'yjs'
import { DEFAULT_SECTION_CHARS, MIN_SECTION_CHARS } from '../limits.ts'
import { blockMarkdownPrefix, type RenderWork } from '../markdown/block-prefix.ts'
import { TOO_DEEP_NODE, yBlockForRender } from '../markdown/render-depth.ts'
import { blocksToMarkdown } from '../markdown/serialize-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { safeCut } from '../text-cut.ts'
import type { FlatDocument, FlatItem } from '../yjs/flat-read.ts'
import { keepBlockText } from './block-text-memo.ts'
import { memoSectionRev } from './live-memo.ts'
import type { LocatedSection } from './section-index.ts'
import { BLOCK_OPTIONS, HEADING_OPTIONS } from './section-total.ts'

export type RenderOptions = {
  fromBlock?: number
  /**
   * Characters of block `fromBlock`'s Markdown already shown (a cut read names it): the read starts there,
   * so a block longer than the budget is read in parts, every character once. Default 0.
   */
  blockOffset?: number
  maxChars?: number
  /**
   * A cut read names its total only when it is kept (measured before, `section-total.ts`), rendering
   * nothing to measure it; without it the read says `totalUnknown`, and the caller measures the section
   * with `sectionMeasureSteps` (pausing between steps as it likes), then reads again. Default false: a cut
   * read measures what is not kept, at once.
   */
  keptTotalOnly?: boolean
}

/** Which part of one section a read showed, and where the next read of it starts. */
export type ShownSection = {
  sectionId: string
  rev: string
  blockCount: number
  /** The first block shown (`fromBlock`). */
  firstBlock: number
  /** The last block shown, whole or cut; `firstBlock - 1` when the section has no blocks. */
  lastBlock: number
  /** First block not shown whole: pass it as `fromBlock` to read on. Absent when the read reached the end. */
  nextBlock?: number
  /**
   * With `nextBlock` naming the block this read cut: the characters of its Markdown shown so far (this
   * read and the earlier parts); pass it as `blockOffset` with `fromBlock: nextBlock` for the rest.
   */
  nextOffset?: number
  /** The first block was shown from this character of its Markdown (`blockOffset` > 0). */
  firstOffset?: number
  /** A single block longer than the budget is shown cut (never inside a surrogate pair); this names it. */
  truncatedBlock?: number
  /**
   * True when the read stopped because it had spent MAX_RENDER_WORK (markup, not characters): the block
   * `nextBlock` names was cut or left out for that, though the character budget had room.
   */
  byWork?: boolean
}

/** Markdown of one block, as numbered section reads show it (media as readable placeholders). */
export function blockMarkdown(block: Y.XmlElement): string {
  return blocksToMarkdown([yBlockForRender(block)], BLOCK_OPTIONS)
}

/** `blockMarkdown` of a top-level element of a state read flat (yjs/flat-read.ts). */
export function flatBlockMarkdown(flat: FlatDocument, item: FlatItem): string {
  return blocksToMarkdown(
    [flat.blockSource.tooDeep(item.row) ? TOO_DEEP_NODE : flat.json(item)],
    BLOCK_OPTIONS,
  )
}

export function numbered(number: number, markdown: string): string {
  return markdown === '' ? `[${number}]` : `[${number}] ${markdown}`
}

/** The label of a block shown from `offset` (> 0) of its Markdown: the rest of a block an earlier read cut. */
export const continuedLabel = (number: number, offset: number) => `[${number}, from character ${offset}] `

/** The line that ends a cut block: where its next part starts (the `blockOffset` that continues it). */
export const cutMarker = (number: number, end: number) =>
  `\n[… block ${number} cut at character ${end} of its Markdown]`

/**
 * The heading's Markdown line. A heading is text an editor chose, so it can be longer than the budget:
 * past half of it, only its start is shown, ending with a line that says so.
 */
function headingLine(heading: Y.XmlElement, maxChars: number, work: RenderWork): string {
  const room = Math.floor(maxChars / 2)
  const line = blockMarkdownPrefix(heading, room + 1, HEADING_OPTIONS, work)
  if (line.complete && line.text.length <= room) return line.text
  const marker = `\n[… heading cut at ${room} characters]`
  return line.text.slice(0, safeCut(line.text, room - marker.length)) + marker
}

/** Where a read starts in its first section, and its budget (readStart). */
export type ReadStart = { fromBlock: number; blockOffset: number; maxChars: number }

/** Where a read starts and its budget, from its options; a start outside a section of `blockCount` blocks is refused. */
export function readStart(blockCount: number, opts: RenderOptions): Result<ReadStart> {
  const fromBlock = opts.fromBlock ?? 1
  const blockOffset = opts.blockOffset ?? 0
  if (!Number.isInteger(fromBlock) || fromBlock < 1 || fromBlock > Math.max(1, blockCount)) {
    return refuseFor(
      'block_out_of_range',
      `fromBlock: ${fromBlock} is outside 1..${Math.max(1, blockCount)}; the section has ${blockCount} blocks.`,
      'fromBlock',
    )
  }
  if (!Number.isSafeInteger(blockOffset) || blockOffset < 0 || (blockOffset > 0 && blockCount === 0)) {
    return refuseFor(
      'block_offset_out_of_range',
      `blockOffset: ${blockOffset} must be a whole number ≥ 0 within block ${fromBlock}.`,
      'blockOffset',
    )
  }
  return ok({
    fromBlock,
    blockOffset,
    maxChars: Math.max(MIN_SECTION_CHARS, opts.maxChars ?? DEFAULT_SECTION_CHARS),
  })
}

/** What a walk over one section's blocks appended, and where it stopped (see SectionRender). */
export type BlockWalk = {
  text: string
  lastBlock: number
  nextBlock?: number
  nextOffset?: number
  truncatedBlock?: number
  byWork?: boolean
}

/**
 * Appends a section's numbered blocks from `fromBlock` (from `blockOffset` into it) to `text`, within
 * `maxChars` for the whole text, stopping on a block boundary. Blocks are rendered one at a time and the
 * walk stops at the first that does not fit, so a read costs what it shows (plus that one block). With
 * `mayCut` (the first section of a read), a first block that does not fit is shown in part, so every read
 * progresses; without it (a later section of a chapter read), the walk stops before it.
 */
export function walkBlocks(
  blocks: readonly Y.XmlElement[],
  text: string,
  fromBlock: number,
  blockOffset: number,
  maxChars: number,
  mayCut: boolean,
  work: RenderWork,
): Result<BlockWalk> {
  const blockCount = blocks.length
  let lastBlock = fromBlock - 1
  let nextBlock: number | undefined
  let nextOffset: number | undefined
  let truncatedBlock: number | undefined
  let byWork = false
  for (let number = fromBlock; number <= blockCount; number++) {
    // Only as much of the block as could fit, plus one character, is rendered (from its start: a part
    // further in costs its offset too).
    const room = maxChars - text.length - 2
    const offset = number === fromBlock ? blockOffset : 0
    const label = offset > 0 ? continuedLabel(number, offset) : `[${number}] `
    // The part before `offset` (shown by earlier reads) renders without spending the read's work, so a
    // block cut for its markup is read on in parts like a block cut for its length.
    const markdown = blockMarkdownPrefix(
      blocks[number - 1]!,
      Math.max(1, offset + room - label.length + 1),
      BLOCK_OPTIONS,
      work,
      offset,
    )
    if (markdown.byWork) byWork = true
    // What is rendered of a list or table (whole, or exactly its start): an inBlock edit that follows
    // numbers its lines from this text.
    keepBlockText(blocks[number - 1]!, markdown.text, markdown.complete)
    if (offset > 0 && markdown.complete && offset >= markdown.text.length) {
      return refuseFor(
        'block_offset_out_of_range',
        `blockOffset: ${offset} is past the end of block ${number} (${markdown.text.length} characters of Markdown).`,
        'blockOffset',
      )
    }
    const rest = markdown.text.slice(safeCut(markdown.text, offset))
    const piece = offset > 0 ? label + rest : numbered(number, rest)
    if (markdown.complete && piece.length <= room) {
      text = `${text}\n\n${piece}`
      lastBlock = number
      continue
    }
    if (number === fromBlock && mayCut) {
      // Not even the rest of one block fits: show its next part, and where the part after it starts.
      const start = safeCut(markdown.text, offset)
      const widest = cutMarker(number, start + rest.length).length
      let cut = safeCut(rest, Math.max(0, room - label.length - widest))
      // Always progress, even when a long heading leaves little room: at least one code point.
      if (cut === 0) cut = Math.min(rest.length, rest.codePointAt(0)! > 0xffff ? 2 : 1)
      if (markdown.complete && cut >= rest.length) {
        // That one code point was all that was left: the block ends here, whole.
        text = `${text}\n\n${piece}`
        lastBlock = number
        if (number < blockCount) nextBlock = number + 1
        break
      }
      text = `${text}\n\n${label}${rest.slice(0, cut)}${cutMarker(number, start + cut)}`
      truncatedBlock = number
      lastBlock = number
      nextBlock = number
      nextOffset = start + cut
    } else nextBlock = number
    break
  }
  const walk: BlockWalk = { text, lastBlock }
  if (nextBlock !== undefined) walk.nextBlock = nextBlock
  if (nextOffset !== undefined) walk.nextOffset = nextOffset
  if (truncatedBlock !== undefined) walk.truncatedBlock = truncatedBlock
  if (byWork && nextBlock !== undefined) walk.byWork = true
  return ok(walk)
}

/**
 * The walk of a read's first section (a section read's only one): its heading line, then its numbered
 * blocks from where the read starts; a first block that does not fit is shown in part, so every read
 * progresses.
 */
export function walkFirstSection(
  section: LocatedSection,
  start: ReadStart,
  work: RenderWork,
): Result<BlockWalk> {
  const { fromBlock, blockOffset, maxChars } = start
  const heading = headingLine(section.heading, maxChars, work)
  return walkBlocks(section.blocks, heading, fromBlock, blockOffset, maxChars, true, work)
}

export const sectionNotFound = (sectionId: string) =>
  refuseFor(
    'section_not_found',
    `section_id: no heading has id "${sectionId}"; read the outline for ids.`,
    'section_id',
  )

/** The shown part of one section: its id, rev, and the blocks the walk showed (SectionRender's fields). */
export function shownPart(
  fragment: Y.XmlFragment,
  section: LocatedSection,
  walk: BlockWalk,
  fromBlock: number,
  blockOffset: number,
): ShownSection {
  const part: ShownSection = {
    sectionId: section.sectionId,
    rev: memoSectionRev(fragment, section),
    blockCount: section.blocks.length,
    firstBlock: fromBlock,
    lastBlock: walk.lastBlock,
  }
  if (walk.nextBlock !== undefined) part.nextBlock = walk.nextBlock
  if (walk.nextOffset !== undefined) part.nextOffset = walk.nextOffset
  if (blockOffset > 0) part.firstOffset = blockOffset
  if (walk.truncatedBlock !== undefined) part.truncatedBlock = walk.truncatedBlock
  if (walk.byWork) part.byWork = true
  return part
}
