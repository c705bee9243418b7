/**
 * What the outline memo keeps for section reads (issue 30): where a section is, found from its heading
 * through an index of top-level positions instead of a walk from the start, and the read itself, kept with
 * the section's revision. Both must give exactly what is computed afresh, whatever changed in between.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { appendMarkdown } from '../edits/append-markdown.ts'
import { editBlocks } from '../edits/edit-blocks.ts'
import { newHeadingId } from '../heading-id.ts'
import { FRAGMENT_NAME, HEADING_ID_ATTR } from '../limits.ts'
import { createOutlineMemo, MAX_KEPT_READS } from '../sections/outline-memo.ts'
import { renderSection } from '../sections/render-section.ts'
import { type LocatedSection, listSections, locateSection } from '../sections/section-index.ts'
import { seededRandom } from './seeded-random.ts'

function seeded(doc: Y.Doc, parts = 8) {
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const body = Array.from(
    { length: parts },
    (_, i) =>
      `## Part ${i}\n\npara ${i} *with* [a](https://x.test) \\# marks\n\n- item ${i}\n- more\n\n### Sub ${i}\n\ntext ${i}`,
  )
  const appended = appendMarkdown(fragment, `# Title\n\nintro\n\n${body.join('\n\n')}`)
  if (appended.kind === 'error') throw new Error(appended.message)
  return fragment
}

const headingsOf = (fragment: Y.XmlFragment) =>
  fragment.toArray().filter((c): c is Y.XmlElement => c instanceof Y.XmlElement && c.nodeName === 'heading')

/**
 * The parts of a located section that say where it is, its elements by identity: each named by where it
 * is among the fragment's children now (-1: not there), so a failure prints a few numbers, not Yjs types.
 */
const whereIs = (section: LocatedSection | undefined) => {
  if (!section) return section
  const children = section.heading.parent ? (section.heading.parent as Y.XmlFragment).toArray() : []
  const at = (element: Y.XmlElement) => children.indexOf(element)
  return {
    sectionId: section.sectionId,
    level: section.level,
    heading: at(section.heading),
    headingIndex: section.headingIndex,
    blocks: section.blocks.map(at),
    blockIndexes: section.blockIndexes,
  }
}

/** One random change: typing, a heading's id or level, a block deleted or inserted anywhere, an edit. */
function change(fragment: Y.XmlFragment, rng: () => number, step: number) {
  const children = fragment.toArray().filter((c): c is Y.XmlElement => c instanceof Y.XmlElement)
  const target = children[Math.floor(rng() * children.length)]!
  const r = rng()
  if (r < 0.25) {
    let node: Y.XmlElement | Y.XmlText = target
    while (node instanceof Y.XmlElement && node.length > 0) node = node.get(0) as Y.XmlElement | Y.XmlText
    if (node instanceof Y.XmlText) node.insert(Math.floor(rng() * (node.length + 1)), rng() < 0.3 ? '*' : 'x')
  } else if (r < 0.35) {
    // A heading takes another heading's id (a duplicate: the first one counts) or a new one.
    const headings = headingsOf(fragment)
    const heading = headings[Math.floor(rng() * headings.length)]!
    const other = headings[Math.floor(rng() * headings.length)]!
    const id = rng() < 0.5 ? other.getAttribute(HEADING_ID_ATTR) : newHeadingId()
    heading.setAttribute(HEADING_ID_ATTR, id as never)
  } else if (r < 0.4) {
    const headings = headingsOf(fragment)
    headings[Math.floor(rng() * headings.length)]!.setAttribute(
      'level',
      String(1 + Math.floor(rng() * 3)) as never,
    )
  } else if (r < 0.55 && children.length > 4) {
    fragment.delete(Math.floor(rng() * fragment.length), 1)
  } else if (r < 0.7) {
    // Inserted before others: every position after it moves.
    const at = Math.floor(rng() * (fragment.length + 1))
    const block = new Y.XmlElement(rng() < 0.3 ? 'heading' : 'paragraph')
    if (block.nodeName === 'heading') {
      block.setAttribute(HEADING_ID_ATTR, newHeadingId() as never)
      block.setAttribute('level', '2' as never)
    }
    block.insert(0, [new Y.XmlText(`inserted ${step}`)])
    fragment.insert(at, [block])
  } else if (r < 0.8) {
    const appended = appendMarkdown(fragment, rng() < 0.5 ? 'tail paragraph' : `## New ${step}\n\nbody`)
    if (appended.kind === 'error') throw new Error(appended.message)
  } else {
    // An id no other heading holds (of a duplicated id, only the first heading is that id's section).
    const all = listSections(fragment)
    const once = (id: string) => all.filter((s) => s.sectionId === id).length === 1
    const sections = all.filter((s) => s.blockCount > 0 && s.sectionId !== '' && once(s.sectionId))
    const section = sections[Math.floor(rng() * sections.length)]
    if (section) {
      const edited = editBlocks(fragment, section.sectionId, section.rev, {
        removeBlocks: [1],
        markdown: `replaced ${step} _x_`,
      })
      if (edited.kind === 'error') throw new Error(edited.message)
    }
  }
}

/** A read of the same section of a fresh copy of the document: nothing kept, nothing located before. */
function freshRead(fragment: Y.XmlFragment, sectionId: string, maxChars?: number) {
  const copy = new Y.Doc()
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(fragment.doc!))
  const read = renderSection(copy.getXmlFragment(FRAGMENT_NAME), sectionId, { maxChars })
  copy.destroy()
  return read
}

describe('section reads through the outline memo', () => {
  test('locate finds what locateSection finds, for every id, after each of many random changes', () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const rng = seededRandom(seed)
      const doc = new Y.Doc()
      const fragment = seeded(doc)
      const memo = createOutlineMemo(fragment)
      // Another replica of the document: some changes are made there and arrive as one update.
      const replica = new Y.Doc()
      Y.applyUpdate(replica, Y.encodeStateAsUpdate(doc))
      for (let step = 0; step < 120; step++) {
        const how = rng()
        if (how < 0.2) {
          // Several changes in one transaction: one event on the fragment for all of them.
          doc.transact(() => {
            for (let i = 0; i < 3; i++) change(fragment, rng, step)
          })
        } else if (how < 0.35) {
          Y.applyUpdate(replica, Y.encodeStateAsUpdate(doc, Y.encodeStateVector(replica)))
          const before = Y.encodeStateVector(replica)
          change(replica.getXmlFragment(FRAGMENT_NAME), rng, step)
          Y.applyUpdate(doc, Y.encodeStateAsUpdate(replica, before))
        } else change(fragment, rng, step)
        // Sometimes several changes between reads, sometimes an outline between them.
        if (rng() < 0.3) continue
        if (rng() < 0.3) memo.outline()
        const ids = headingsOf(fragment).map((h) => String(h.getAttribute(HEADING_ID_ATTR)))
        for (const id of [...ids, newHeadingId(), 'not an id']) {
          expect(whereIs(memo.locate(id))).toEqual(whereIs(locateSection(fragment, id)))
        }
      }
      memo.destroy()
      replica.destroy()
      doc.destroy()
    }
  })

  test('a read equals a fresh read of the same document after each of many random changes', () => {
    for (const seed of [11, 12]) {
      const rng = seededRandom(seed)
      const doc = new Y.Doc()
      const fragment = seeded(doc, 4)
      for (let step = 0; step < 50; step++) {
        change(fragment, rng, step)
        const ids = headingsOf(fragment).map((h) => String(h.getAttribute(HEADING_ID_ATTR)))
        for (const id of ids) {
          // A small budget too: cut reads, with their totals.
          for (const maxChars of [undefined, 200]) {
            const read = renderSection(fragment, id, { maxChars })
            expect(renderSection(fragment, id, { maxChars })).toEqual(read)
            expect(read).toEqual(freshRead(fragment, id, maxChars))
          }
        }
      }
      doc.destroy()
    }
  })

  test('a read of an unchanged section is the kept one; a change to one of its blocks, or from another replica, is read anew', () => {
    const doc = new Y.Doc()
    const fragment = seeded(doc)
    // The title's section, then Part 0, Sub 0, Part 1…
    const [, part1, , part2] = listSections(fragment)
    const first = renderSection(fragment, part1!.sectionId)
    if (first.kind !== 'ok') throw new Error(first.message)
    // Kept: the same object, frozen; a change in another section keeps it.
    expect(renderSection(fragment, part1!.sectionId)).toEqual(first)
    expect((renderSection(fragment, part1!.sectionId) as typeof first).value).toBe(first.value)
    expect(Object.isFrozen(first.value)).toBe(true)
    const other = locateSection(fragment, part2!.sectionId)!
    ;(other.blocks[0]!.get(0) as Y.XmlText).insert(0, 'elsewhere ')
    const afterOther = renderSection(fragment, part1!.sectionId)
    expect(afterOther.kind === 'ok' && afterOther.value).toBe(first.value)

    // Typing into the section's own block: read anew, and the text shows it.
    const section = locateSection(fragment, part1!.sectionId)!
    ;(section.blocks[0]!.get(0) as Y.XmlText).insert(0, 'typed ')
    const typed = renderSection(fragment, part1!.sectionId)
    if (typed.kind !== 'ok') throw new Error(typed.message)
    expect(typed.value).not.toBe(first.value)
    expect(typed.value.text).toContain('[1] typed para 0')
    expect(typed.value.rev).not.toBe(first.value.rev)

    // A change from another replica, applied as an update.
    const remote = new Y.Doc()
    Y.applyUpdate(remote, Y.encodeStateAsUpdate(doc))
    const remoteSection = locateSection(remote.getXmlFragment(FRAGMENT_NAME), part1!.sectionId)!
    ;(remoteSection.blocks[0]!.get(0) as Y.XmlText).insert(0, 'remote ')
    const before = renderSection(fragment, part1!.sectionId)
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(remote, Y.encodeStateVector(doc)))
    const after = renderSection(fragment, part1!.sectionId)
    if (before.kind !== 'ok' || after.kind !== 'ok') throw new Error('not read')
    expect(after.value).not.toBe(before.value)
    expect(after.value.text).toContain('[1] remote typed para 0')
    remote.destroy()
    doc.destroy()
  })

  test(`a document keeps at most MAX_KEPT_READS (${MAX_KEPT_READS}) reads: the oldest is rendered again, equal`, () => {
    const doc = new Y.Doc()
    const fragment = seeded(doc, MAX_KEPT_READS)
    const ids = listSections(fragment)
      .map((s) => s.sectionId)
      .filter((id) => id !== '')
    expect(ids.length).toBeGreaterThan(MAX_KEPT_READS)
    const first = renderSection(fragment, ids[0]!)
    for (const id of ids.slice(1)) renderSection(fragment, id)
    const again = renderSection(fragment, ids[0]!)
    if (first.kind !== 'ok' || again.kind !== 'ok') throw new Error('not read')
    expect(again.value).not.toBe(first.value)
    expect(again.value).toEqual(first.value)
    const last = renderSection(fragment, ids.at(-1)!)
    expect(last.kind === 'ok' && renderSection(fragment, ids.at(-1)!)).toEqual(last)
    doc.destroy()
  })
})
