import type * as Y from 'yjs'
import { renderWork } from '../markdown/block-prefix.ts'
import { ok, type Result } from '../result.ts'
import { observersCaughtUp } from './block-text-memo.ts'
import {
  memoKeepRead,
  memoKeptRead,
  memoLocateSection,
  memoMeasureSteps,
  memoSectionTotal,
} from './live-memo.ts'
import { chapterSections, type LocatedSection } from './section-index.ts'
import {
  type RenderOptions,
  readStart,
  type ShownSection,
  sectionNotFound,
  shownPart,
  walkFirstSection,
} from './section-walk.ts'

export {
  type ChapterNext,
  type ChapterOptions,
  type ChapterRender,
  renderChapter,
} from './render-chapter.ts'
export { blockMarkdown, flatBlockMarkdown, type RenderOptions, type ShownSection } from './section-walk.ts'

/**
 * Renders one section, or one section with its subsections (render-chapter.ts), within a character budget:
 * the numbered blocks a read shows, where the next read starts, and, when the read is cut, the section's
 * total (the exact length of the section read whole, kept per revision: section-total.ts).
 */

export type SectionRender = ShownSection & {
  /** The heading line, then `[n] markdown` per block, blocks separated by a blank line. */
  text: string
  shownChars: number
  /** The character budget that applied: `maxChars`, raised to MIN_SECTION_CHARS (default DEFAULT_SECTION_CHARS). */
  budget: number
  /**
   * With `nextBlock` (a cut read): the exact length of the whole section read whole, from its heading
   * (whatever `fromBlock`), measured once per revision of the section.
   */
  total?: number
  /** A cut read with `keptTotalOnly` whose section is not measured yet: no `total`. */
  totalUnknown?: boolean
}

/**
 * Renders a section's numbered blocks from `fromBlock` (default 1), stopping on a block boundary. Blocks
 * are rendered one at a time and the walk stops at the first that does not fit, so a read costs what it
 * shows (plus that one block), not the section. The rev and, for a cut read, the total come from the
 * fragment's outline memo, so an unchanged section is neither hashed nor measured again, and while the
 * fragment is unchanged the memo keeps where the section is. The memo also keeps the read itself with the
 * section's revision (MAX_KEPT_READ_CHARS): a read of an unchanged section, with the same options, is the
 * same frozen object again, which callers must not change (they may key what they derive from it on it).
 * Call it outside a transaction: the memo learns of changes when one ends.
 */
export function renderSection(
  fragment: Y.XmlFragment,
  sectionId: string,
  opts: RenderOptions = {},
): Result<SectionRender> {
  const section = memoLocateSection(fragment, sectionId)
  if (!section) return sectionNotFound(sectionId)
  const start = readStart(section.blocks.length, opts)
  if (start.kind === 'error') return start
  const { fromBlock, blockOffset, maxChars } = start.value
  // A read of an unchanged section is answered with the same (frozen) object as before: the memo keeps
  // it with the section's revision. Not inside a transaction, where the memo may not know of a change.
  const keep = observersCaughtUp(fragment)
  const key = readKey(fromBlock, blockOffset, maxChars)
  const kept = keep ? memoKeptRead<SectionRender>(fragment, section, key) : undefined
  if (kept) return ok(kept)
  const walk = walkFirstSection(section, start.value, renderWork())
  if (walk.kind === 'error') return walk
  const { text } = walk.value
  const read: SectionRender = {
    ...shownPart(fragment, section, walk.value, fromBlock, blockOffset),
    text,
    shownChars: text.length,
    budget: maxChars,
  }
  if (read.nextBlock !== undefined) {
    const total = memoSectionTotal(fragment, section, opts.keptTotalOnly === true)
    if (total === undefined) read.totalUnknown = true
    else read.total = total
  }
  // Kept once complete: a read still waiting for its total is read again after measuring.
  if (keep && !read.totalUnknown) memoKeepRead(fragment, section, key, Object.freeze(read), text.length)
  return ok(read)
}

/**
 * The read `renderSection` would answer from its memo (an unchanged section read with the same options
 * before), without rendering anything: undefined when there is none, or when the read would be refused.
 * A caller that renders elsewhere (the documents' worker) asks this first, so a warm read costs what it
 * costs `renderSection`. Outside a transaction.
 */
export function keptSectionRead(
  fragment: Y.XmlFragment,
  sectionId: string,
  opts: RenderOptions = {},
): SectionRender | undefined {
  const kept = keptReadKey(fragment, sectionId, opts)
  return kept && memoKeptRead<SectionRender>(fragment, kept.section, kept.key)
}

/**
 * Keeps `read`, made elsewhere from this fragment's content as it is now (`renderSection` of a copy of it on
 * the documents' worker), as `renderSection` keeps its own: the next read of the unchanged section with
 * the same options answers it (the same object, frozen here). A read still waiting for its total is not
 * kept. Outside a transaction, and only while the fragment has not changed since the copy was taken.
 */
export function keepSectionRead(
  fragment: Y.XmlFragment,
  sectionId: string,
  opts: RenderOptions,
  read: SectionRender,
): SectionRender {
  const frozen = Object.freeze(read)
  const kept = read.totalUnknown ? undefined : keptReadKey(fragment, sectionId, opts)
  if (kept) memoKeepRead(fragment, kept.section, kept.key, frozen, read.text.length)
  return frozen
}

/** Where `renderSection` keeps a read with these options: its section and key; undefined if none. */
function keptReadKey(
  fragment: Y.XmlFragment,
  sectionId: string,
  opts: RenderOptions,
): { section: LocatedSection; key: string } | undefined {
  if (!observersCaughtUp(fragment)) return undefined
  const section = memoLocateSection(fragment, sectionId)
  if (!section) return undefined
  const start = readStart(section.blocks.length, opts)
  if (start.kind === 'error') return undefined
  const { fromBlock, blockOffset, maxChars } = start.value
  return { section, key: readKey(fromBlock, blockOffset, maxChars) }
}

/** The memo's key of a read's options. */
function readKey(fromBlock: number, blockOffset: number, maxChars: number): string {
  return `${fromBlock}\n${blockOffset}\n${maxChars}`
}

/**
 * Measures what a cut read of this section (with `withSubsections`, of its chapter) needs for its total and
 * has not measured yet, one heading or block per step, so a caller can pause between steps (a large
 * section is measured without holding the thread for all of it). The sections are located at the start;
 * an element deleted meanwhile is skipped, and a read after the last step measures what changed since.
 * With `maxItems`, a block of more than that many Yjs items is left out (one step would render it whole):
 * the total then stays unknown, for a caller that measures it elsewhere (the documents' worker).
 */
export function* sectionMeasureSteps(
  fragment: Y.XmlFragment,
  sectionId: string,
  withSubsections = false,
  maxItems?: number,
): Generator<void, void, undefined> {
  const sections = withSubsections
    ? [...chapterSections(fragment, sectionId)]
    : [memoLocateSection(fragment, sectionId)].filter((section) => section !== undefined)
  for (const section of sections) yield* memoMeasureSteps(fragment, section, maxItems)
}
