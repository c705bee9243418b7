import * as Y from 'yjs'
import { isHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { finishSteps } from '../steps.ts'
import { lastListItem } from '../yjs/list-end.ts'
import { blockPlainText } from '../yjs/plain-text.ts'
import { sectionRev } from './section-rev.ts'

/** A section as located in the fragment: its heading, the blocks up to the next heading, and where they sit. */
export type LocatedSection = {
  /**
   * The heading's `toc-id`; '' when it has none or a malformed one (any co-editor can write any text there,
   * and ids are printed outside the data frame). The server repairs both (`repairHeadingIds`).
   */
  sectionId: string
  level: number
  heading: Y.XmlElement
  /** Index of the heading among the fragment's children. */
  headingIndex: number
  /** The blocks after the heading, numbered [1], [2]… in this order. */
  blocks: Y.XmlElement[]
  /** Fragment index of each block, parallel to `blocks`. */
  blockIndexes: number[]
}

export type SectionInfo = {
  sectionId: string
  level: number
  title: string
  rev: string
  blockCount: number
}

/** Every section in document order, from one `toArray()` walk of the top level (no conversion). */
export function locateSections(fragment: Y.XmlFragment): LocatedSection[] {
  return finishSteps(locateSectionsInSteps(fragment))
}

/** Top-level children located between two pauses of locateSectionsInSteps. */
export const LOCATE_STEP_CHILDREN = 1_000

/**
 * locateSections, pausing (yielding) every LOCATE_STEP_CHILDREN top-level children: in a 5 MiB document
 * the whole walk held the event loop ~10 ms in one piece after every store (the server's measuring of
 * section totals, profiled). The children are those of the fragment when the walk began; an element deleted
 * during a pause is still in the answer (callers skip deleted elements).
 */
export function* locateSectionsInSteps(fragment: Y.XmlFragment): Generator<void, LocatedSection[]> {
  const sections: LocatedSection[] = []
  let current: LocatedSection | undefined
  const children = fragment.toArray()
  for (let index = 0; index < children.length; index++) {
    if (index > 0 && index % LOCATE_STEP_CHILDREN === 0) yield
    const child = children[index]
    if (!(child instanceof Y.XmlElement)) continue
    if (child.nodeName === 'heading') {
      const id = child.getAttribute(HEADING_ID_ATTR)
      current = {
        sectionId: isHeadingId(id) ? id : '',
        level: headingLevel(child),
        heading: child,
        headingIndex: index,
        blocks: [],
        blockIndexes: [],
      }
      sections.push(current)
      continue
    }
    // Blocks before the first heading belong to no section (the schema forbids them anyway).
    current?.blocks.push(child)
    current?.blockIndexes.push(index)
  }
  return sections
}

/**
 * The last section only, found from the end: its cost follows that section, not the document (an append
 * to a 5 MiB document spent ~13 ms in locateSections for the one section it answers with). Walks Yjs's
 * item list directly: YXmlFragment keeps no search markers, so `get(i)` from the end would be quadratic.
 */
export function lastSection(fragment: Y.XmlFragment): LocatedSection | undefined {
  let item = lastListItem(fragment)
  let index = fragment.length
  const blocks: Y.XmlElement[] = []
  const blockIndexes: number[] = []
  for (; item; item = item.left) {
    if (item.deleted || !item.countable) continue
    const content = item.content.getContent()
    for (let i = content.length - 1; i >= 0; i--) {
      index--
      const child = content[i]
      if (!(child instanceof Y.XmlElement)) continue
      if (child.nodeName !== 'heading') {
        blocks.unshift(child)
        blockIndexes.unshift(index)
        continue
      }
      const id = child.getAttribute(HEADING_ID_ATTR)
      return {
        sectionId: isHeadingId(id) ? id : '',
        level: headingLevel(child),
        heading: child,
        headingIndex: index,
        blocks,
        blockIndexes,
      }
    }
  }
  return undefined
}

/** Whether the fragment holds no element (text at the top level does not count), from its first item. */
export function holdsNoElement(fragment: Y.XmlFragment): boolean {
  for (let item = fragment._start; item; item = item.right) {
    if (item.deleted || !item.countable) continue
    if (item.content.getContent().some((child) => child instanceof Y.XmlElement)) return false
  }
  return true
}

export function headingLevel(heading: Y.XmlElement): number {
  return levelOf(heading.getAttribute('level'))
}

/** A heading's level from its `level` attribute: 1 to 6, else 1. */
export function levelOf(attribute: unknown): number {
  const level = Number(attribute)
  return Number.isInteger(level) && level >= 1 && level <= 6 ? level : 1
}

export function headingTitle(heading: Y.XmlElement): string {
  return titleOf(blockPlainText(heading))
}

/** A heading's title from its plain text: its runs of white space one space, trimmed. */
export function titleOf(plainText: string): string {
  return plainText.replace(/\s+/g, ' ').trim()
}

export function describeSection(section: LocatedSection): SectionInfo {
  return {
    sectionId: section.sectionId,
    level: section.level,
    title: headingTitle(section.heading),
    rev: sectionRev(section.heading, section.blocks),
    blockCount: section.blocks.length,
  }
}

/** Every section, flat, in document order, with its rev. */
export function listSections(fragment: Y.XmlFragment): SectionInfo[] {
  return locateSections(fragment).map(describeSection)
}

/**
 * The first section with this id (a duplicated id resolves to its first heading), or undefined: what
 * `locateSections(fragment).find(…)` gives, from one walk of Yjs's item list that stops at the section's
 * end. Nothing is built for the sections before it and none after it is visited: locating every section
 * of a 60,000-block document took ~45 ms per read or edit.
 */
export function locateSection(fragment: Y.XmlFragment, sectionId: string): LocatedSection | undefined {
  const first = chapterSections(fragment, sectionId).next()
  return first.done ? undefined : first.value
}

/**
 * The section with this id (its first heading), then each section after it whose heading is deeper, in
 * document order, up to the next heading at the section's level or higher: a chapter with its subsections,
 * as `locateSections` lists them. Lazy, one walk of Yjs's item list: each section is yielded when the walk
 * reaches its end, and the walk goes no further than the caller pulls (never past the chapter's end), so
 * an early chapter of a large document is read without visiting the rest.
 */
export function* chapterSections(
  fragment: Y.XmlFragment,
  sectionId: string,
): Generator<LocatedSection, void, undefined> {
  if (!isHeadingId(sectionId)) return
  let current: LocatedSection | undefined
  let chapterLevel = 0
  let index = 0
  for (let item = fragment._start; item; item = item.right) {
    if (item.deleted || !item.countable) continue
    const at = index
    index += item.length
    // Elements are one item each (ContentType); other content (stray text) is never a block.
    const child = item.content instanceof Y.ContentType ? item.content.type : undefined
    if (!(child instanceof Y.XmlElement)) continue
    if (child.nodeName !== 'heading') {
      current?.blocks.push(child)
      current?.blockIndexes.push(at)
      continue
    }
    if (current) {
      yield current
      const level = headingLevel(child)
      if (level <= chapterLevel) return
      const id = child.getAttribute(HEADING_ID_ATTR)
      current = located(isHeadingId(id) ? id : '', level, child, at)
    } else if (child.getAttribute(HEADING_ID_ATTR) === sectionId) {
      current = located(sectionId, headingLevel(child), child, at)
      chapterLevel = current.level
    }
  }
  if (current) yield current
}

function located(sectionId: string, level: number, heading: Y.XmlElement, at: number): LocatedSection {
  return { sectionId, level, heading, headingIndex: at, blocks: [], blockIndexes: [] }
}

/** The section's summary, or undefined when no heading carries this id. */
export function findSection(fragment: Y.XmlFragment, sectionId: string): SectionInfo | undefined {
  const section = locateSection(fragment, sectionId)
  return section ? describeSection(section) : undefined
}
