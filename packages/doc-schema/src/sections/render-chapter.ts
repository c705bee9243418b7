import type * as Y from 'yjs'
import { blockMarkdownPrefix, renderWork } from '../markdown/block-prefix.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { memoSectionTotal } from './live-memo.ts'
import { chapterSections, type LocatedSection } from './section-index.ts'
import {
  type RenderOptions,
  readStart,
  type ShownSection,
  sectionNotFound,
  shownPart,
  walkBlocks,
  walkFirstSection,
} from './section-walk.ts'

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
  /** The character budget that applied: `maxChars`, raised to MIN_SECTION_CHARS (default DEFAULT_SECTION_CHARS). */
  budget: number
  /**
   * With `next` (a cut read): the exact length of the whole chapter read whole, from the chapter's own
   * heading (whatever `fromSection`): each section's total (kept per revision), joined by blank lines.
   */
  total?: number
  /** A cut read with `keptTotalOnly` of a chapter not all measured yet: no `total`. */
  totalUnknown?: boolean
}

/**
 * Renders a section with its subsections (every later section whose heading is deeper, up to the next
 * heading at its level or higher) within one budget: from `fromSection` (default the section itself), each
 * section as `renderSection` shows it. The first section shown continues as a section read does (a block
 * longer than the budget is shown in part); a later section is shown only when its heading and at least
 * its first block fit whole, and the read stops on a block boundary inside it. Sections are found by one
 * lazy walk (`chapterSections`), pulled only while the budget lasts; a cut read walks on to the chapter's
 * end for its total, each section's kept with its revision (a section not yet measured is hashed to find
 * it, and measured once: see `keptTotalOnly`).
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
  /** Every section of the chapter pulled from the walk, in order: a cut read's total sums them all. */
  const located: LocatedSection[] = [first]
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
    located.push(first)
    if (first.sectionId !== '' && first.sectionId !== fromSection) seen.add(first.sectionId)
  }
  const start = readStart(first.blocks.length, opts)
  if (start.kind === 'error') return start
  const { fromBlock, blockOffset, maxChars } = start.value
  const work = renderWork()
  const firstWalk = walkFirstSection(first, start.value, work)
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
    located.push(section)
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
  const result: ChapterRender = { text, shownChars: text.length, sections, budget: maxChars }
  if (next !== undefined) {
    result.next = next
    if (byWork) result.byWork = true
    const total = chapterTotal(fragment, located, walk, opts.keptTotalOnly === true)
    if (total === undefined) result.totalUnknown = true
    else result.total = total
  }
  return ok(result)
}

/**
 * The chapter read whole: the sections pulled so far and the rest of the walk, joined by blank lines;
 * undefined with `keptOnly` when a section's total is not kept.
 */
function chapterTotal(
  fragment: Y.XmlFragment,
  located: readonly LocatedSection[],
  rest: Iterable<LocatedSection>,
  keptOnly: boolean,
): number | undefined {
  let total = -2
  for (const section of [...located, ...rest]) {
    const one = memoSectionTotal(fragment, section, keptOnly)
    if (one === undefined) return undefined
    total += 2 + one
  }
  return total
}
