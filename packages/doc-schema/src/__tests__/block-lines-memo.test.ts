/**
 * A read that prints a list whole keeps its text (sections/block-text-memo.ts), and an inBlock edit that
 * follows numbers the lines from it without rendering the block again. These tests check that a change to
 * the block drops what was kept: after an edit (or a change from another replica) the next edit, by the
 * numbers a fresh read prints, changes the line the read shows there, not the line the old text had there.
 * The fresh read is also taken from a replica of the document, which keeps nothing for this document's
 * block, so the edit cannot lean on that read having replaced the kept text.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { blockLines } from '../edits/block-lines.ts'
import { editBlocks, listSections, renderSection } from '../index.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { keptBlockText } from '../sections/block-text-memo.ts'
import { expectOk, loadDocument } from './fixtures.ts'

/** The lines of block 1 of the document's first section as its read shows them (after `[1] `). */
function readLines(fragment: Y.XmlFragment): string[] {
  const section = listSections(fragment)[1]!
  const text = expectOk(renderSection(fragment, section.sectionId)).text
  const start = text.indexOf('[1] ') + '[1] '.length
  const end = text.indexOf('\n\n[2] ', start)
  return text.slice(start, end < 0 ? undefined : end).split('\n')
}

const lineOf = (lines: readonly string[], text: string) => lines.findIndex((l) => l.includes(text)) + 1

/** A replica of `doc`: the same content in other Yjs elements, so reading it keeps nothing for `doc`'s. */
function replica(doc: Y.Doc): Y.XmlFragment {
  const copy = new Y.Doc()
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc))
  return copy.getXmlFragment(FRAGMENT_NAME)
}

function replaceLine(fragment: Y.XmlFragment, line: number, markdown: string) {
  const section = listSections(fragment)[1]!
  return expectOk(
    editBlocks(fragment, section.sectionId, section.rev, { inBlock: 1, removeBlocks: [line], markdown }),
  )
}

const list = () => loadDocument('Doc', '## S\n\n- alpha\n- beta\n- gamma\n- delta\n\nafter')
const block = (fragment: Y.XmlFragment) =>
  fragment.toArray().find((e) => e instanceof Y.XmlElement && e.nodeName === 'bulletList') as Y.XmlElement

describe("a list's kept text and lines go with a change to the list", () => {
  test('an edit that moves the lines: the next edit, by a fresh read, changes the line read there', () => {
    const { doc, fragment } = list()
    const before = readLines(fragment)
    expect(keptBlockText(block(fragment))).toEqual({ text: before.join('\n'), complete: true })
    // An item inserted above beta moves beta, gamma and delta one line down.
    const section = listSections(fragment)[1]!
    expectOk(
      editBlocks(fragment, section.sectionId, section.rev, {
        inBlock: 1,
        afterBlock: lineOf(before, 'alpha'),
        markdown: '- inserted',
      }),
    )
    expect(keptBlockText(block(fragment))).toBeUndefined()
    const fresh = readLines(replica(doc))
    const gamma = lineOf(fresh, 'gamma')
    expect(gamma).toBe(lineOf(before, 'gamma') + 1)
    replaceLine(fragment, gamma, '- GAMMA')
    const expected = [...fresh]
    expected[gamma - 1] = '- GAMMA'
    expect(readLines(fragment)).toEqual(expected)
  })

  test('two edits in a row by the reads between them, on the same document', () => {
    const { fragment } = list()
    const first = readLines(fragment)
    replaceLine(fragment, lineOf(first, 'beta'), '- beta\n- beta two')
    const second = readLines(fragment)
    expect(second).toEqual(['- alpha', '- beta', '- beta two', '- gamma', '- delta'])
    replaceLine(fragment, lineOf(second, 'delta'), '- DELTA')
    expect(readLines(fragment)).toEqual(['- alpha', '- beta', '- beta two', '- gamma', '- DELTA'])
  })

  test('a change from another replica drops the kept lines too', () => {
    const { doc, fragment } = list()
    const before = readLines(fragment)
    // The lines are kept now (the edit's numbering of the read's text).
    replaceLine(fragment, lineOf(before, 'alpha'), '- alpha')
    readLines(fragment)
    expect(keptBlockText(block(fragment))).toBeDefined()
    // Another replica removes alpha; its update reaches this document.
    const other = new Y.Doc()
    Y.applyUpdate(other, Y.encodeStateAsUpdate(doc))
    const otherList = block(other.getXmlFragment(FRAGMENT_NAME))
    otherList.delete(0, 1)
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other, Y.encodeStateVector(doc)))
    expect(keptBlockText(block(fragment))).toBeUndefined()
    const fresh = readLines(replica(doc))
    expect(fresh).toEqual(['- beta', '- gamma', '- delta'])
    replaceLine(fragment, lineOf(fresh, 'gamma'), '- GAMMA')
    expect(readLines(fragment)).toEqual(['- beta', '- GAMMA', '- delta'])
  })

  test("a cut read keeps the list's start: an edit by its numbers, then one by a fresh read after it", () => {
    const items = Array.from({ length: 600 }, (_, i) => `- item ${i + 1} of a long list of words`)
    const { doc, fragment } = loadDocument('Doc', `## S\n\n${items.join('\n')}\n\nafter`)
    const section = listSections(fragment)[1]!
    const read = expectOk(renderSection(fragment, section.sectionId))
    expect(read.nextBlock).toBe(1)
    const kept = keptBlockText(block(fragment))
    expect(kept?.complete).toBe(false)
    const lines = kept!.text.split('\n')
    expect(read.text).toContain(lines.slice(0, 50).join('\n'))
    replaceLine(fragment, lineOf(lines, 'item 40 of'), '- item 40 edited')
    expect(keptBlockText(block(fragment))).toBeUndefined()
    // Item 10 removed in a replica reaches this document: item 41 moves up a line.
    const other = new Y.Doc()
    Y.applyUpdate(other, Y.encodeStateAsUpdate(doc))
    block(other.getXmlFragment(FRAGMENT_NAME)).delete(9, 1)
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other, Y.encodeStateVector(doc)))
    const fresh = readLines(replica(doc))
    const at = lineOf(fresh, 'item 41 of')
    expect(at).toBe(lineOf(lines, 'item 41 of') - 1)
    replaceLine(fragment, at, '- item 41 edited')
    expect(readLines(fragment).slice(37, 41)).toEqual([
      '- item 39 of a long list of words',
      '- item 40 edited',
      '- item 41 edited',
      '- item 42 of a long list of words',
    ])
  })

  test('inside a transaction, as the server edits: a change earlier in it is seen by the numbers and the rev', () => {
    const { doc, fragment } = list()
    const before = readLines(fragment)
    const section = listSections(fragment)[1]!
    doc.transact(() => {
      block(fragment).delete(0, 1)
      // The read's rev is stale now, though no observer has run yet.
      const stale = editBlocks(fragment, section.sectionId, section.rev, {
        inBlock: 1,
        removeBlocks: [lineOf(before, 'gamma')],
        markdown: '- GAMMA',
      })
      expect(stale.kind === 'error' && stale.reason).toBe('stale_rev')
      const read = blockLines(block(fragment), 1)
      expect(read.kind === 'ok' && read.value.lines).toEqual(['- beta', '- gamma', '- delta'])
    })
    // And an edit in a transaction of its own, by a read's numbers, changes the line read.
    const fresh = readLines(fragment)
    const id = listSections(fragment)[1]!
    doc.transact(() => {
      expectOk(
        editBlocks(fragment, id.sectionId, id.rev, {
          inBlock: 1,
          removeBlocks: [lineOf(fresh, 'gamma')],
          markdown: '- GAMMA',
        }),
      )
    })
    expect(readLines(fragment)).toEqual(['- beta', '- GAMMA', '- delta'])
  })
})
