import type * as Y from 'yjs'
import { blockMarkdownPrefix } from '../markdown/block-prefix.ts'
import { yBlockForRender } from '../markdown/render-depth.ts'
import { blocksToMarkdown } from '../markdown/serialize-markdown.ts'
import { ok, type Result, refuse } from '../result.ts'
import { safeCut } from '../text-cut.ts'
import { memoSectionRev } from './outline-memo.ts'
import { locateSection } from './section-index.ts'

/** Default character budget of one section read: large enough for most sections, small for a context. */
export const DEFAULT_SECTION_CHARS = 16_000

/** Smallest budget honoured: below it a heading and the cut marker alone would not fit. */
export const MIN_SECTION_CHARS = 200

export type RenderOptions = {
  fromBlock?: number
  /**
   * Characters of block `fromBlock`'s Markdown already shown (a cut read names it): the read starts there,
   * so a block longer than the budget is read in parts, every character once. Default 0.
   */
  blockOffset?: number
  maxChars?: number
}

export type SectionRender = {
  sectionId: string
  rev: string
  /** The heading line, then `[n] markdown` per block, blocks separated by a blank line. */
  text: string
  shownChars: number
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
function headingLine(heading: Y.XmlElement, maxChars: number): string {
  const room = Math.floor(maxChars / 2)
  const line = blockMarkdownPrefix(heading, room + 1)
  if (line.complete && line.text.length <= room) return line.text
  const marker = `\n[… heading cut at ${room} characters]`
  return line.text.slice(0, safeCut(line.text, room - marker.length)) + marker
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
  if (!section) {
    return refuse(
      'section_not_found',
      `section_id: no heading has id "${sectionId}"; read the outline for ids.`,
      'section_id',
    )
  }
  const blockCount = section.blocks.length
  const fromBlock = opts.fromBlock ?? 1
  if (!Number.isInteger(fromBlock) || fromBlock < 1 || fromBlock > Math.max(1, blockCount)) {
    return refuse(
      'block_out_of_range',
      `fromBlock: ${fromBlock} is outside 1..${Math.max(1, blockCount)}; the section has ${blockCount} blocks.`,
      'fromBlock',
    )
  }
  const blockOffset = opts.blockOffset ?? 0
  if (!Number.isSafeInteger(blockOffset) || blockOffset < 0 || (blockOffset > 0 && blockCount === 0)) {
    return refuse(
      'block_offset_out_of_range',
      `blockOffset: ${blockOffset} must be a whole number ≥ 0 within block ${fromBlock}.`,
      'blockOffset',
    )
  }
  const maxChars = Math.max(MIN_SECTION_CHARS, opts.maxChars ?? DEFAULT_SECTION_CHARS)
  let text = headingLine(section.heading, maxChars)
  let lastBlock = fromBlock - 1
  let nextBlock: number | undefined
  let nextOffset: number | undefined
  let truncatedBlock: number | undefined
  for (let number = fromBlock; number <= blockCount; number++) {
    // Only as much of the block as could fit, plus one character, is rendered (from its start: a part
    // further in costs its offset too).
    const room = maxChars - text.length - 2
    const offset = number === fromBlock ? blockOffset : 0
    const label = offset > 0 ? continuedLabel(number, offset) : `[${number}] `
    const markdown = blockMarkdownPrefix(
      section.blocks[number - 1]!,
      Math.max(1, offset + room - label.length + 1),
      BLOCK_OPTIONS,
    )
    if (offset > 0 && markdown.complete && offset >= markdown.text.length) {
      return refuse(
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
    if (number === fromBlock) {
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
  const result: SectionRender = {
    sectionId: section.sectionId,
    rev: memoSectionRev(fragment, section),
    text,
    shownChars: text.length,
    blockCount,
    firstBlock: fromBlock,
    lastBlock,
  }
  if (nextBlock !== undefined) result.nextBlock = nextBlock
  if (nextOffset !== undefined) result.nextOffset = nextOffset
  if (blockOffset > 0) result.firstOffset = blockOffset
  if (truncatedBlock !== undefined) result.truncatedBlock = truncatedBlock
  return ok(result)
}
