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

export type RenderOptions = { fromBlock?: number; maxChars?: number }

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
  const maxChars = Math.max(MIN_SECTION_CHARS, opts.maxChars ?? DEFAULT_SECTION_CHARS)
  let text = headingLine(section.heading, maxChars)
  let lastBlock = fromBlock - 1
  let nextBlock: number | undefined
  let truncatedBlock: number | undefined
  for (let number = fromBlock; number <= blockCount; number++) {
    // Only as much of the block as could fit, plus one character, is rendered.
    const room = maxChars - text.length - 2
    const label = `[${number}] `
    const markdown = blockMarkdownPrefix(
      section.blocks[number - 1]!,
      Math.max(1, room - label.length + 1),
      BLOCK_OPTIONS,
    )
    const piece = numbered(number, markdown.text)
    if (markdown.complete && piece.length <= room) {
      text = `${text}\n\n${piece}`
      lastBlock = number
      continue
    }
    if (number === fromBlock) {
      // Not even one block fits: show its start so the read still makes progress.
      const marker = `\n[… block ${number} cut at ${maxChars} characters]`
      const cut = safeCut(piece, Math.max(0, room - marker.length))
      text = `${text}\n\n${piece.slice(0, cut)}${marker}`
      truncatedBlock = number
      lastBlock = number
      nextBlock = number < blockCount ? number + 1 : undefined
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
  if (truncatedBlock !== undefined) result.truncatedBlock = truncatedBlock
  return ok(result)
}
