/**
 * A cut section or chapter read names its total: the exact length of the section (or chapter) read whole
 * (docs.plus issue #380's note). Over real Markdown files from node_modules (READMEs and CHANGELOGs, read in
 * place), each section is read whole to learn its length, then cut at many budgets and from later pages:
 * every cut read must name that length. Edits must change the total as they change the whole read, and a
 * total must be measured once per revision, not rendered again for every read. Totals stored beside the
 * outline (an import's, a compaction's) must be the same exact lengths, and a copy decoded from storage
 * that adopts them must name them without rendering anything to measure.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import * as Y from 'yjs'
import {
  adoptRevs,
  adoptTotals,
  FRAGMENT_NAME,
  forgetKeptTotals,
  importedDocumentUpdate,
  importMarkdown,
  listSections,
  liveOutline,
  liveOutlineWithTotals,
  locateSections,
  measuredElements,
  outlineMeasureSteps,
  readOutlineWithTotals,
  renderChapter,
  renderSection,
  type StoredOutlineNode,
  sectionMeasureSteps,
  storedRevs,
  storedTotals,
} from '../index.ts'
import { chapterSections, headingTitle } from '../sections/section-index.ts'
import { CORPUS_PACKAGES } from './corpus-files.ts'
import { cloneDocument, expectOk, loadDocument, RealFiles } from './fixtures.ts'

const BUDGETS = [200, 257, 400, 613, 1_000, 1_777, 3_000, 5_000, 10_000, 30_000]

/** A budget no section here reaches: the read shows the section whole. */
const WHOLE = Number.MAX_SAFE_INTEGER

/** The length of a section read whole, by reading it whole (never cut, by characters or by markup). */
function wholeSection(fragment: Y.XmlFragment, sectionId: string): number {
  const read = expectOk(renderSection(fragment, sectionId, { maxChars: WHOLE }))
  expect(read.nextBlock).toBeUndefined()
  expect(read.total).toBeUndefined()
  return read.text.length
}

function wholeChapter(fragment: Y.XmlFragment, sectionId: string): number {
  const read = expectOk(renderChapter(fragment, sectionId, { maxChars: WHOLE }))
  expect(read.next).toBeUndefined()
  return read.text.length
}

/** A Markdown file imported as a new document, as its fragment. */
function loadFile(path: string): Y.XmlFragment {
  const imported = expectOk(importMarkdown(readFileSync(path, 'utf8'), { fallbackTitle: 'File' }))
  const doc = new Y.Doc()
  Y.applyUpdate(doc, expectOk(importedDocumentUpdate(imported)))
  return doc.getXmlFragment(FRAGMENT_NAME)
}

describe('a cut read names the exact total of the section read whole', () => {
  const files = new RealFiles(CORPUS_PACKAGES)

  test('the corpus holds at least 20 real files', () => {
    expect(files.paths.length).toBeGreaterThanOrEqual(20)
  })

  test('every section of every real file, cut at ten budgets and on every later page at one', () => {
    let cutReads = 0
    for (const path of files.paths) {
      const fragment = loadFile(path)
      for (const { sectionId } of listSections(fragment)) {
        if (sectionId === '') continue
        const whole = wholeSection(fragment, sectionId)
        for (const maxChars of BUDGETS) {
          const read = expectOk(renderSection(fragment, sectionId, { maxChars }))
          expect(read.budget).toBe(maxChars)
          if (read.nextBlock === undefined) {
            expect(read.text.length).toBe(whole)
            continue
          }
          cutReads++
          expect(read.total, `${path} ${sectionId} at ${maxChars}`).toBe(whole)
        }
        // Every page of a paged read names the same total, whichever block it starts from.
        let next = expectOk(renderSection(fragment, sectionId, { maxChars: 257 }))
        while (next.nextBlock !== undefined) {
          expect(next.total).toBe(whole)
          next = expectOk(
            renderSection(fragment, sectionId, {
              maxChars: 257,
              fromBlock: next.nextBlock,
              blockOffset: next.nextOffset,
            }),
          )
        }
      }
    }
    expect(cutReads).toBeGreaterThan(500)
  })

  test('every chapter of every real file, cut at ten budgets, names the chapter read whole', () => {
    let cutReads = 0
    for (const path of files.paths) {
      const fragment = loadFile(path)
      for (const { sectionId } of listSections(fragment)) {
        if (sectionId === '' || [...chapterSections(fragment, sectionId)].length < 2) continue
        const whole = wholeChapter(fragment, sectionId)
        for (const maxChars of BUDGETS) {
          const read = expectOk(renderChapter(fragment, sectionId, { maxChars }))
          if (read.next === undefined) continue
          cutReads++
          expect(read.total, `${path} ${sectionId} at ${maxChars}`).toBe(whole)
        }
      }
    }
    expect(cutReads).toBeGreaterThan(50)
  })
})

describe('the total follows the section revision', () => {
  const markdown = Array.from(
    { length: 40 },
    (_, i) => `Paragraph ${i} with *marks*, \`code\` and [a link](https://example.com/${i}).`,
  )
  const setUp = () => {
    const { doc, fragment } = loadDocument('Doc', `## Long\n\n${markdown.join('\n\n')}\n\n## Next\n\nafter`)
    const sectionId = listSections(fragment)[1]!.sectionId
    return { doc, fragment, sectionId }
  }
  const cutTotal = (fragment: Y.XmlFragment, sectionId: string) =>
    expectOk(renderSection(fragment, sectionId, { maxChars: 300 })).total

  test('typing in a block, inserting, deleting and restyling blocks: the total is the new whole read', () => {
    const { doc, fragment, sectionId } = setUp()
    expect(cutTotal(fragment, sectionId)).toBe(wholeSection(fragment, sectionId))
    const section = () => locateSections(fragment).find((s) => s.sectionId === sectionId)!
    const edits: Array<() => void> = [
      () => (section().blocks[5]!.get(0) as Y.XmlText).insert(3, 'typed * with a star'),
      () => (section().blocks[7]!.get(0) as Y.XmlText).format(0, 9, { bold: true }),
      () => {
        const paragraph = new Y.XmlElement('paragraph')
        paragraph.insert(0, [new Y.XmlText('a new block')])
        fragment.insert(section().headingIndex + 3, [paragraph])
      },
      () => fragment.delete(section().blockIndexes[10]!, 2),
      () => section().heading.setAttribute('level', 4 as never),
      () => (section().heading.get(0) as Y.XmlText).insert(0, 'Renamed '),
    ]
    for (const edit of edits) {
      doc.transact(edit)
      expect(cutTotal(fragment, sectionId)).toBe(wholeSection(fragment, sectionId))
    }
  })

  test('an edit re-measures only the block it touched; the other blocks are not rendered again', () => {
    // Measured here, block by block (not found by rev: an earlier test measured the same content).
    forgetKeptTotals()
    const { doc, fragment, sectionId } = setUp()
    cutTotal(fragment, sectionId)
    const { blocks } = locateSections(fragment).find((s) => s.sectionId === sectionId)!
    doc.transact(() => (blocks[20]!.get(0) as Y.XmlText).insert(0, 'edited '))
    const expected = wholeSection(cloneDocument(doc).fragment, sectionId)
    // The store step's outline walk hashes the changed section for its new rev (that opens every block).
    liveOutline(fragment)
    // Past the budget only block 21 changed: the other blocks' lengths must be the ones measured before.
    blocks.forEach((block, index) => {
      if (index < 10 || index === 20) return
      block.toArray = () => {
        throw new Error(`block ${index + 1} was rendered again`)
      }
    })
    expect(cutTotal(fragment, sectionId)).toBe(expected)
  })

  test('keptTotalOnly: an unmeasured section says so; measured step by step, its reads name the total', () => {
    forgetKeptTotals()
    const { doc, fragment, sectionId } = setUp()
    const opts = { maxChars: 300, keptTotalOnly: true }
    const before = expectOk(renderSection(fragment, sectionId, opts))
    expect(before.nextBlock).toBeDefined()
    expect(before.total).toBeUndefined()
    expect(before.totalUnknown).toBe(true)
    const chapterBefore = expectOk(renderChapter(fragment, sectionId, opts))
    expect(chapterBefore.totalUnknown).toBe(true)
    // One step per heading and block, each measured once.
    expect([...sectionMeasureSteps(fragment, sectionId)]).toHaveLength(1 + markdown.length)
    expect([...sectionMeasureSteps(fragment, sectionId, true)]).toHaveLength(0)
    const after = expectOk(renderSection(fragment, sectionId, opts))
    expect(after.totalUnknown).toBeUndefined()
    expect(after.total).toBe(wholeSection(fragment, sectionId))
    expect(after.text).toBe(before.text)
    expect(expectOk(renderChapter(fragment, sectionId, opts)).total).toBe(wholeChapter(fragment, sectionId))
    // An edit leaves one block to measure; the others stay measured.
    const { blocks } = locateSections(fragment).find((s) => s.sectionId === sectionId)!
    doc.transact(() => (blocks[30]!.get(0) as Y.XmlText).insert(0, 'edited '))
    expect(expectOk(renderSection(fragment, sectionId, opts)).totalUnknown).toBe(true)
    expect([...sectionMeasureSteps(fragment, sectionId)]).toHaveLength(1)
    expect(expectOk(renderSection(fragment, sectionId, opts)).total).toBe(wholeSection(fragment, sectionId))
  })

  test('a cut read of an unchanged document walks neither to the section nor over its blocks again', () => {
    const { doc, fragment, sectionId } = setUp()
    const first = expectOk(renderSection(fragment, sectionId, { maxChars: 300 }))
    const start = Object.getOwnPropertyDescriptor(fragment, '_start')!
    Object.defineProperty(fragment, '_start', {
      configurable: true,
      get() {
        throw new Error('the section was located again')
      },
    })
    try {
      expect(expectOk(renderSection(fragment, sectionId, { maxChars: 300 }))).toEqual(first)
    } finally {
      Object.defineProperty(fragment, '_start', start)
    }
    // A change is seen at once: the next read locates the section again.
    const { blocks } = locateSections(fragment).find((s) => s.sectionId === sectionId)!
    doc.transact(() => (blocks[0]!.get(0) as Y.XmlText).insert(0, 'changed '))
    const after = expectOk(renderSection(fragment, sectionId, { maxChars: 300 }))
    expect(after.text).toContain('[1] changed Paragraph 0')
    expect(after.rev).not.toBe(first.rev)
    expect(after.total).toBe(wholeSection(fragment, sectionId))
  })

  test('a fresh copy of a measured revision (a cold read) names the same total', () => {
    const { doc, fragment, sectionId } = setUp()
    const total = cutTotal(fragment, sectionId)
    const copy = cloneDocument(doc).fragment
    expect(cutTotal(copy, sectionId)).toBe(total)
    expect(total).toBe(wholeSection(copy, sectionId))
  })
})

/** The outline's nodes in document order. */
const flat = (roots: readonly StoredOutlineNode[]): StoredOutlineNode[] =>
  roots.flatMap((node) => [node, ...flat(node.children)])

/** A fresh copy of `fragment`'s document, as a cold read or a load decodes stored content. */
const decoded = (fragment: Y.XmlFragment) => cloneDocument(fragment.doc!).fragment

describe('totals stored beside the outline', () => {
  const files = new RealFiles(CORPUS_PACKAGES)

  test('an import stores every section of every real file with the total of the section read whole; a decoded copy that adopts them renders nothing to name them', () => {
    let cutReads = 0
    for (const path of files.paths) {
      const fragment = loadFile(path)
      // Stored as jsonb: what a load reads back is the outline's JSON.
      const stored = JSON.parse(JSON.stringify(readOutlineWithTotals(fragment))) as StoredOutlineNode[]
      const sections = listSections(fragment)
      expect(flat(stored).map((node) => node.sectionId)).toEqual(sections.map((s) => s.sectionId))
      const wholes = sections.map(({ sectionId }) =>
        sectionId === '' ? 0 : wholeSection(fragment, sectionId),
      )
      flat(stored).forEach((node, i) => {
        expect(node.blocks).toBe(sections[i]!.blockCount)
        if (node.sectionId !== '') expect(node.total, `${path} ${node.sectionId}`).toBe(wholes[i]!)
      })
      // Nothing kept in the process: the copy has only what it adopted.
      forgetKeptTotals()
      const copy = decoded(fragment)
      adoptTotals(copy, storedTotals(stored))
      const before = measuredElements()
      sections.forEach(({ sectionId }, i) => {
        if (sectionId === '') return
        const read = expectOk(renderSection(copy, sectionId, { maxChars: 200, keptTotalOnly: true }))
        expect(read.totalUnknown).toBeUndefined()
        if (read.nextBlock === undefined) return
        cutReads++
        expect(read.total, `${path} ${sectionId}`).toBe(wholes[i]!)
      })
      expect(measuredElements() - before).toBe(0)
    }
    expect(cutReads).toBeGreaterThan(200)
  })

  test("the live outline's totals: none before measuring, every section's whole read after; an edit leaves only its section to measure again", () => {
    forgetKeptTotals()
    const markdown = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} with *marks* and \`code\`.`)
    const { doc, fragment } = loadDocument(
      'Doc',
      `## One\n\n${markdown.join('\n\n')}\n\n## Two\n\n${markdown.slice(0, 5).join('\n\n')}\n\n### Three\n\nlast`,
    )
    const wholes = () =>
      listSections(fragment).map(({ sectionId }) =>
        sectionId === '' ? 0 : wholeSection(fragment, sectionId),
      )
    expect(flat(liveOutlineWithTotals(fragment)).every((node) => node.total === undefined)).toBe(true)
    const elements = listSections(fragment).reduce((sum, s) => sum + 1 + s.blockCount, 0)
    expect([...outlineMeasureSteps(fragment)].filter(Boolean)).toHaveLength(elements)
    expect(flat(liveOutlineWithTotals(fragment)).map((node) => node.total)).toEqual(wholes())
    // The memo's outline is copied, never given the totals.
    expect(flat(liveOutline(fragment)).every((node) => !('total' in node))).toBe(true)

    const two = locateSections(fragment)[2]!
    doc.transact(() => (two.blocks[1]!.get(0) as Y.XmlText).insert(0, 'a *starred* edit '))
    const edited = flat(liveOutlineWithTotals(fragment))
    expect(edited.map((node) => node.total === undefined)).toEqual([false, false, true, false])
    expect([...outlineMeasureSteps(fragment)].filter(Boolean)).toHaveLength(1)
    expect(flat(liveOutlineWithTotals(fragment)).map((node) => node.total)).toEqual(wholes())
  })

  test('every section whose total is only checked is a pause point of its own (telling it known may hash it)', () => {
    forgetKeptTotals()
    const parts = Array.from({ length: 12 }, (_, i) => `## Part ${i}\n\nText of part ${i}.`)
    const { fragment } = loadDocument('Doc', parts.join('\n\n'))
    const sections = locateSections(fragment).length
    // Measured once (every element a step that measured), then nothing left to measure: one pause a section.
    expect([...outlineMeasureSteps(fragment)].filter(Boolean).length).toBeGreaterThan(sections)
    expect([...outlineMeasureSteps(fragment)]).toEqual(Array.from({ length: sections }, () => false))
  })

  test("a stored total is not used for an edited section: the copy's edited section is measured, and exact", () => {
    const { doc, fragment } = loadDocument(
      'Doc',
      `## Long\n\n${Array.from({ length: 40 }, (_, i) => `Block ${i} with _emphasis_.`).join('\n\n')}`,
    )
    const stored = storedTotals(readOutlineWithTotals(fragment))
    const copy = cloneDocument(doc)
    adoptTotals(copy.fragment, stored)
    const long = locateSections(copy.fragment)[1]!
    // The same block count, a new rev: the stored total must not be named.
    copy.doc.transact(() => (long.blocks[3]!.get(0) as Y.XmlText).insert(0, 'longer '))
    forgetKeptTotals()
    const read = expectOk(
      renderSection(copy.fragment, long.sectionId, { maxChars: 200, keptTotalOnly: true }),
    )
    expect(read.totalUnknown).toBe(true)
    const measured = expectOk(renderSection(copy.fragment, long.sectionId, { maxChars: 200 }))
    expect(measured.total).toBe(wholeSection(copy.fragment, long.sectionId))
    expect(measured.total).toBe(wholeSection(fragment, long.sectionId) + 'longer '.length)
  })

  test("a copy that adopts the stored outline's revs names them without hashing; after a change, only the changed section is hashed", () => {
    const { doc, fragment } = loadDocument(
      'Doc',
      `## Long\n\n${Array.from({ length: 40 }, (_, i) => `Block ${i} with _emphasis_.`).join('\n\n')}\n\n## Short\n\nlast`,
    )
    const outline = readOutlineWithTotals(fragment)
    const located = locateSections(fragment)
    const long = located.find((section) => headingTitle(section.heading) === 'Long')
    const short = located.find((section) => headingTitle(section.heading) === 'Short')
    const node = (id: string) => flat(outline).find((n) => n.sectionId === id)!
    const hashed = { long: node(long!.sectionId).rev, short: node(short!.sectionId).rev }
    // A rev no hash of this content gives: a read naming it took it from the adopted outline.
    const revs = storedRevs(outline)
    revs.set(long!.sectionId, { ...revs.get(long!.sectionId)!, rev: 'fromoutline1' })
    const totals = new Map([[`fromoutline1/${long!.blocks.length}`, node(long!.sectionId).total!]])
    const copy = cloneDocument(doc)
    adoptTotals(copy.fragment, totals)
    adoptRevs(copy.fragment, revs)
    forgetKeptTotals()
    const before = measuredElements()
    const read = expectOk(
      renderSection(copy.fragment, long!.sectionId, { maxChars: 200, keptTotalOnly: true }),
    )
    expect(read.rev).toBe('fromoutline1')
    expect(read.total).toBe(wholeSection(fragment, long!.sectionId))
    expect(measuredElements() - before).toBe(0)
    const revOf = (id: string) => flat(liveOutline(copy.fragment)).find((n) => n.sectionId === id)!.rev
    expect([revOf(long!.sectionId), revOf(short!.sectionId)]).toEqual(['fromoutline1', hashed.short])
    // A block count other than the stored one: not the section the outline described, hashed.
    const other = cloneDocument(doc)
    adoptRevs(other.fragment, new Map([[long!.sectionId, { rev: 'fromoutline1', size: 1, blocks: 3 }]]))
    expect(expectOk(renderSection(other.fragment, long!.sectionId, { maxChars: 200 })).rev).toBe(hashed.long)
    // A change drops the adopted rev of the section it lands in only (adopted-revs.test.ts has the rest):
    // a section it did not touch and nobody read yet keeps its adopted rev, the changed one is hashed.
    const changed = cloneDocument(doc)
    adoptRevs(changed.fragment, revs)
    const shortCopy = locateSections(changed.fragment).find(
      (section) => section.sectionId === short!.sectionId,
    )!
    changed.doc.transact(() => (shortCopy.blocks[0]!.get(0) as Y.XmlText).insert(0, 'edited '))
    expect(expectOk(renderSection(changed.fragment, long!.sectionId, { maxChars: 200 })).rev).toBe(
      'fromoutline1',
    )
    const editedShort = expectOk(renderSection(changed.fragment, short!.sectionId, { maxChars: 200 })).rev
    expect(editedShort).not.toBe(hashed.short)
    expect(editedShort).not.toBe(revs.get(short!.sectionId)!.rev)
    // An edit of a section read by its adopted rev hashes it again.
    const longCopy = locateSections(copy.fragment).find((section) => section.sectionId === long!.sectionId)!
    copy.doc.transact(() => (longCopy.blocks[0]!.get(0) as Y.XmlText).insert(0, 'edited '))
    const edited = expectOk(renderSection(copy.fragment, long!.sectionId, { maxChars: 200 })).rev
    expect(edited).not.toBe('fromoutline1')
    expect(edited).not.toBe(hashed.long)
  })
})
