import type * as Y from 'yjs'
import { DEFAULT_SECTION_CHARS, MIN_SECTION_CHARS } from '../limits.ts'
import { blockMarkdownPrefix, type RenderWork, renderWork } from '../markdown/block-prefix.ts'
import { yBlockForRender } from '../markdown/render-depth.ts'
import { blocksToMarkdown } from '../markdown/serialize-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { safeCut } from '../text-cut.ts'
import { memoSectionRev } from './outline-memo.ts'
import { chapterSections, type LocatedSection, locateSection } from './section-index.ts'

export type RenderOptions = {
  fromBlock?: number
  /**
   * Characters of block `fromBlock`'s Markdown already shown (a cut read names it): the read starts there,
   * so a block longer than the budget is read in parts, every character once. Default 0.
   */
  blockOffset?: number
  maxChars?: number
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

export type SectionRender = ShownSection & {
  /** The heading line, then `[n] markdown` per block, blocks separated by a blank line. */
  text: string
  shownChars: number
}

/** How section reads show media: as readable placeholders. */
const BLOCK_OPTIONS = { media: 'placeholder' } as const

/** Markdown of one block, as numbered section reads show it (media as readable placeholders). */
export function blockMarkdown(block: Y.XmlElement): string {
  return blocksToMarkdown([yBlockForRender(block)], BLOCK_OPTIONS)
}

function numbered(number: number, markdown: string): string {
  return markdown === '' ? `[${number}]` : `[${number}] ${markdown}`
}

/** The label of a block shown from `offset` (> 0) of its Markdown: the rest of a block an earlier read cut. */
const continuedLabel = (number: number, offset: number) => `[${number}, from character ${offset}] `

/** The line that ends a cut block: where its next part starts (the `blockOffset` that continues it). */
const cutMarker = (number: number, end: number) =>
  `\n[… block ${number} cut at character ${end} of its Markdown]`

/**
 * The heading's Markdown line. A heading is text an editor chose, so it can be longer than the budget:
 * past half of it, only its start is shown, ending with a line that says so.
 */
function headingLine(heading: Y.XmlElement, maxChars: number, work: RenderWork): string {
  const room = Math.floor(maxChars / 2)
  const line = blockMarkdownPrefix(heading, room + 1, {}, work)
  if (line.complete && line.text.length <= room) return line.text
  const marker = `\n[… heading cut at ${room} characters]`
  return line.text.slice(0, safeCut(line.text, room - marker.length)) + marker
}

/** Where a read starts and its budget, from its options; a start outside a section of `blockCount` blocks is refused. */
function readStart(
  blockCount: number,
  opts: RenderOptions,
): Result<{ fromBlock: number; blockOffset: number; maxChars: number }> {
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
type BlockWalk = {
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
function walkBlocks(
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

const sectionNotFound = (sectionId: string) =>
  refuseFor(
    'section_not_found',
    `section_id: no heading has id "${sectionId}"; read the outline for ids.`,
    'section_id',
  )

/** The shown part of one section: its id, rev, and the blocks the walk showed (SectionRender's fields). */
function shownPart(
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

/**
 * Renders a section's numbered blocks from `fromBlock` (default 1), stopping on a block boundary. Blocks
 * are rendered one at a time and the walk stops at the first that does not fit, so a read costs what it
 * shows (plus that one block), not the section: no total size is computed. The rev comes from the
 * fragment's outline memo, so an unchanged section is not hashed again.
 */
export function renderSection(
  fragment: Y.XmlFragment,
  sectionId: string,
  opts: RenderOptions = {},
): Result<SectionRender> {
  const section = locateSection(fragment, sectionId)
  if (!section) return sectionNotFound(sectionId)
  const start = readStart(section.blocks.length, opts)
  if (start.kind === 'error') return start
  const { fromBlock, blockOffset, maxChars } = start.value
  const work = renderWork()
  const heading = headingLine(section.heading, maxChars, work)
  const walk = walkBlocks(section.blocks, heading, fromBlock, blockOffset, maxChars, true, work)
  if (walk.kind === 'error') return walk
  const { text } = walk.value
  return ok({
    ...shownPart(fragment, section, walk.value, fromBlock, blockOffset),
    text,
    shownChars: text.length,
  })
}

export type ChapterOptions = RenderOptions & {
  /**
   * The section to start at: the chapter's own (default) or one of its subsections, as a cut chapter read
   * names it; `fromBlock` and `blockOffset` apply to it.
   */
  fromSection?: string
}

/** Where the next read of a cut chapter starts. */
export type ChapterNext = {
  /** The section to pass as `fromSection`; '' when it has no id of its own (none, or an earlier one's). */
  sectionId: string
  fromBlock: number
  /** Characters of block `fromBlock` already shown, when this read cut it. */
  blockOffset?: number
}

export type ChapterRender = {
  /**
   * Each section shown, as a section read shows it (its heading line, then its own blocks numbered from
   * [1]), sections separated by a blank line.
   */
  text: string
  shownChars: number
  /** The sections shown, in the text's order; the first is `fromSection`. */
  sections: ShownSection[]
  /** Absent when the read reached the chapter's end. */
  next?: ChapterNext
  /** True when the read stopped at MAX_RENDER_WORK (its markup), not at its character budget. */
  byWork?: boolean
}

/**
 * Renders a section with its subsections (every later section whose heading is deeper, up to the next
 * heading at its level or higher) within one budget: from `fromSection` (default the section itself), each
 * section as `renderSection` shows it. The first section shown continues as a section read does (a block
 * longer than the budget is shown in part); a later section is shown only when its heading and at least
 * its first block fit whole, and the read stops on a block boundary inside it. Sections are found by one
 * lazy walk (`chapterSections`), pulled only while the budget lasts, and only sections shown are hashed.
 */
export function renderChapter(
  fragment: Y.XmlFragment,
  sectionId: string,
  opts: ChapterOptions = {},
): Result<ChapterRender> {
  const walk = chapterSections(fragment, sectionId)
  const chapter = walk.next()
  if (chapter.done) return sectionNotFound(sectionId)
  // Ids already met in the chapter: a later heading that repeats one cannot be named as fromSection.
  const seen = new Set([sectionId])
  let first = chapter.value
  const fromSection = opts.fromSection ?? sectionId
  // '' is no id: an id-less heading is never a start.
  while (first.sectionId !== fromSection || fromSection === '') {
    const later = walk.next()
    if (later.done) {
      return refuseFor(
        'section_not_in_chapter',
        `fromSection: "${fromSection}" is neither section "${sectionId}" nor one of its subsections; pass the fromSection a note of this chapter's reads named, or read that section with its own section_id.`,
        'fromSection',
      )
    }
    first = later.value
    if (first.sectionId !== '' && first.sectionId !== fromSection) seen.add(first.sectionId)
  }
  const start = readStart(first.blocks.length, opts)
  if (start.kind === 'error') return start
  const { fromBlock, blockOffset, maxChars } = start.value
  const work = renderWork()
  const firstWalk = walkBlocks(
    first.blocks,
    headingLine(first.heading, maxChars, work),
    fromBlock,
    blockOffset,
    maxChars,
    true,
    work,
  )
  if (firstWalk.kind === 'error') return firstWalk
  let { text } = firstWalk.value
  const sections = [shownPart(fragment, first, firstWalk.value, fromBlock, blockOffset)]
  let next: ChapterNext | undefined
  if (firstWalk.value.nextBlock !== undefined) {
    next = { sectionId: fromSection, fromBlock: firstWalk.value.nextBlock }
    if (firstWalk.value.nextOffset !== undefined) next.blockOffset = firstWalk.value.nextOffset
  }
  seen.add(fromSection)
  let byWork = firstWalk.value.byWork === true
  while (next === undefined) {
    const later = walk.next()
    if (later.done) break
    const section = later.value
    const named = section.sectionId !== '' && !seen.has(section.sectionId)
    seen.add(section.sectionId)
    const stopBefore = () => ({ sectionId: named ? section.sectionId : '', fromBlock: 1 })
    const room = maxChars - text.length - 2
    const heading = blockMarkdownPrefix(section.heading, room + 1, {}, work)
    if (!heading.complete || heading.text.length > room) {
      next = stopBefore()
      if (heading.byWork) byWork = true
      break
    }
    // A later section's walk cannot fail: it starts at its first block, from the block's start.
    const blocksWalk = walkBlocks(section.blocks, `${text}\n\n${heading.text}`, 1, 0, maxChars, false, work)
    if (blocksWalk.kind === 'error') return blocksWalk
    const shown = blocksWalk.value
    if (section.blocks.length > 0 && shown.lastBlock === 0) {
      // Its heading alone would be shown: the next read starts with the whole section instead.
      next = stopBefore()
      if (shown.byWork) byWork = true
      break
    }
    text = shown.text
    sections.push(shownPart(fragment, section, shown, 1, 0))
    if (shown.nextBlock !== undefined) next = { ...stopBefore(), fromBlock: shown.nextBlock }
    if (shown.byWork) byWork = true
  }
  const result: ChapterRender = { text, shownChars: text.length, sections }
  if (next !== undefined) result.next = next
  if (next !== undefined && byWork) result.byWork = true
  return ok(result)
}
