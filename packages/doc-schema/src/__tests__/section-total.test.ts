/**
 * A cut section or chapter read names its total: the exact length of the section (or chapter) read whole
 * (docs.plus issue #380's note). Over real Markdown files from node_modules (READMEs and CHANGELOGs, read in
 * place), each section is read whole to learn its length, then cut at many budgets and from later pages:
 * every cut read must name that length. Edits must change the total as they change the whole read, and a
 * total must be measured once per revision, not rendered again for every read.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import * as Y from 'yjs'
import { importedDocumentUpdate } from '../create-document.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { importMarkdown } from '../markdown/import-markdown.ts'
import { liveOutline } from '../sections/outline-memo.ts'
import { renderChapter, renderSection, sectionMeasureSteps } from '../sections/render-section.ts'
import { chapterSections, listSections, locateSections } from '../sections/section-index.ts'
import { forgetKeptTotals } from '../sections/section-total.ts'
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
