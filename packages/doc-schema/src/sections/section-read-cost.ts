/**
 * What a section read would cost to render, told before rendering it: a render's work grows with the Yjs
 * items it walks (each run of text and each format mark), not with the characters it shows (a paragraph of
 * 10,000 one-letter runs alternating bold and italic is ~10,000 characters and ~30,000 items, ~150-300 ms
 * of a loaded event loop for one read). The count walks the items of the blocks the read would show, from
 * its first block, and stops as soon as their characters pass the read's budget (the render stops there
 * too) or the count passes `limit` (the caller's answer is then "dear"): it costs at most `limit` steps.
 */
import * as Y from 'yjs'
import { memoLocateSection } from './live-memo.ts'
import { chapterSections, type LocatedSection } from './section-index.ts'
import { type RenderOptions, readStart } from './section-walk.ts'

/** A section read, or with `fromSection` (or `withSubsections`) a chapter read, as the cost counts it. */
export type SectionReadAsk = RenderOptions & { withSubsections?: boolean; fromSection?: string }

/**
 * The Yjs items (runs, format marks, embeds, elements; deleted ones too, which a render steps over) of the
 * blocks the read would render, counted until `limit` is passed (the answer is then `limit + 1`) or the
 * characters seen pass the read's budget. A read the document model refuses (no such section, a block out
 * of range) counts 0: rendering it costs nothing. Call it outside a transaction (the outline memo).
 */
export function sectionReadItems(
  fragment: Y.XmlFragment,
  sectionId: string,
  ask: SectionReadAsk,
  limit: number,
): number {
  const sections = readSections(fragment, sectionId, ask)
  const first = sections.next()
  if (first.done) return 0
  const start = readStart(first.value.blocks.length, ask)
  if (start.kind === 'error') return 0
  const { fromBlock, blockOffset, maxChars } = start.value
  const count = { items: 0, chars: 0, limit, budget: maxChars + blockOffset }
  if (!countBlocks([first.value.heading, ...first.value.blocks.slice(fromBlock - 1)], count)) {
    return count.items
  }
  if (!ask.withSubsections) return count.items
  for (const section of sections) {
    if (!countBlocks([section.heading, ...section.blocks], count)) break
  }
  return count.items
}

type Count = { items: number; chars: number; limit: number; budget: number }

/**
 * The sections a read renders, its first the one it starts at: the section itself, or the chapter's
 * sections from `fromSection` on.
 */
function* readSections(
  fragment: Y.XmlFragment,
  sectionId: string,
  ask: SectionReadAsk,
): Generator<LocatedSection, void, undefined> {
  if (!ask.withSubsections) {
    const section = memoLocateSection(fragment, sectionId)
    if (section) yield section
    return
  }
  const from = ask.fromSection ?? sectionId
  let started = false
  for (const section of chapterSections(fragment, sectionId)) {
    if (!started && section.sectionId !== from) continue
    started = true
    yield section
  }
}

/** An element or a text, walked by its list of items only. */
type Walked = { _start: Y.Item | null }

/** Counts the items of `blocks` into `count`; false once the count or the characters are past theirs. */
function countBlocks(blocks: readonly Y.XmlElement[], count: Count): boolean {
  const stack: Walked[] = [...blocks].reverse()
  for (let type = stack.pop(); type !== undefined; type = stack.pop()) {
    const children: Walked[] = []
    for (let item = type._start; item; item = item.right) {
      if (++count.items > count.limit) return false
      if (item.deleted) continue
      const content = item.content
      if (content instanceof Y.ContentString) {
        count.chars += content.getLength()
        if (count.chars > count.budget) return false
      } else if (content instanceof Y.ContentType) children.push(content.type)
    }
    stack.push(...children.reverse())
  }
  return true
}
