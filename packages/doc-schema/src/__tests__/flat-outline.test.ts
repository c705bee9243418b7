/**
 * The outline of a stored state read flat (`readOutlineOf` over `FlatDocument.tree`) against Yjs's
 * `readOutline` of the same state: the same sections, ids, levels, titles, revs and sizes. A rev is what
 * an agent's `since_rev` names, so a flat outline that hashed one byte differently would tell agents a
 * section changed (or hide a change).
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { newHeadingId } from '../heading-id.ts'
import { FRAGMENT_NAME, MAX_NESTING_DEPTH } from '../limits.ts'
import { readPlainText, readTitle, readTitleAndTextOf } from '../read-document.ts'
import { readOutline, readOutlineOf } from '../sections/outline.ts'
import { totalKey } from '../sections/section-total.ts'
import {
  flatOutlineWithTotals,
  readOutlineWithTotals,
  type StoredOutlineNode,
} from '../sections/stored-totals.ts'
import { SUGGESTION_INSERT } from '../suggestion-marks.ts'
import { flatTopLevel, readFlat } from '../yjs/flat-read.ts'
import { concurrentEdits } from './flat-read-support.ts'

/** The flat document of a state and its top-level nodes, as the documents' worker reads them. */
function readRows(state: Uint8Array) {
  const flat = readFlat(state, FRAGMENT_NAME)
  expect(flat).not.toBeNull()
  return { tree: flat!.tree, rows: flatTopLevel(flat!) }
}

function flatOutline(state: Uint8Array) {
  const { tree, rows } = readRows(state)
  return readOutlineOf(tree, rows)
}

/** Yjs's title and plain text of a state, and the flat reading's, at `maxChars`. */
function titleAndText(state: Uint8Array, maxChars: number) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const yjs = { title: readTitle(fragment), text: readPlainText(fragment, maxChars) }
  doc.destroy()
  const { tree, rows } = readRows(state)
  return { yjs, flat: readTitleAndTextOf(tree, rows, maxChars) }
}

function yjsOutline(state: Uint8Array) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  const outline = readOutline(doc.getXmlFragment(FRAGMENT_NAME))
  doc.destroy()
  return outline
}

const heading = (level: unknown, id: unknown, text: Y.XmlText | string) => {
  const element = new Y.XmlElement('heading')
  if (level !== undefined) element.setAttribute('level', level as string)
  if (id !== undefined) element.setAttribute('id', id as string)
  element.insert(0, [typeof text === 'string' ? new Y.XmlText(text) : text])
  return element
}

describe('a stored state read flat gives Yjs’s outline, title and text', () => {
  test('random concurrent histories (ids, levels and attributes overwritten and removed, marks, embeds, deletions)', () => {
    let sections = 0
    for (let seed = 1; seed <= 40; seed++) {
      const { docs } = concurrentEdits(seed, 3 + (seed % 3), 12)
      // Valid ids on some headings, so sections carry ids as well as ''.
      const fragment = docs[0]!.getXmlFragment(FRAGMENT_NAME)
      for (const child of fragment.toArray())
        if (child instanceof Y.XmlElement && child.nodeName === 'heading' && seed % 2 === 0)
          child.setAttribute('id', newHeadingId())
      const state = Y.encodeStateAsUpdate(docs[0]!)
      const expected = yjsOutline(state)
      expect(flatOutline(state)).toEqual(expected)
      const stack = [...expected]
      for (let node = stack.pop(); node; node = stack.pop()) {
        sections++
        stack.push(...node.children)
      }
    }
    // The histories held sections to compare, not empty outlines.
    expect(sections).toBeGreaterThan(60)
  })

  test('titles and sizes: suggestions, hard breaks, media, embeds inside marked runs, formats that change nothing, odd levels', () => {
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const proposed = new Y.XmlText()
    proposed.insert(0, 'Plan ')
    proposed.insert(5, 'draft ', { [SUGGESTION_INSERT]: { by: 'agent', at: 1 } })
    proposed.insert(11, 'B', {})
    const broken = new Y.XmlText()
    broken.insert(0, 'two  lines')
    const marked = new Y.XmlText()
    marked.insert(0, 'see the link here', { link: { href: 'https://example.com' } })
    marked.insertEmbed(4, { image: 'x.png' }, { link: { href: 'https://example.com' } })
    // A format over text that has it already: Yjs's delta packs there anyway.
    marked.format(0, 3, { bold: {} })
    marked.format(0, 3, { bold: {} })
    const breakHeading = heading(2, newHeadingId(), broken)
    breakHeading.insert(1, [new Y.XmlElement('hardBreak'), new Y.XmlText('after')])
    const image = new Y.XmlElement('image')
    image.setAttribute('alt', 'a diagram')
    image.setAttribute('src', 'd.png')
    const list = new Y.XmlElement('bulletList')
    const item = new Y.XmlElement('listItem')
    const inner = new Y.XmlElement('paragraph')
    inner.insert(0, [marked])
    item.insert(0, [inner])
    list.insert(0, [item])
    const orphan = new Y.XmlElement('paragraph')
    orphan.insert(0, [new Y.XmlText('before any heading')])
    fragment.insert(0, [
      orphan,
      heading(1, newHeadingId(), proposed),
      image,
      breakHeading,
      list,
      heading('3', 'not-an-id', '  spaced\ttitle  '),
      heading(9, newHeadingId(), 'level out of range'),
      heading(undefined, undefined, 'no attributes'),
      new Y.XmlElement('horizontalRule'),
    ])
    fragment.insert(fragment.length, [new Y.XmlText('stray top-level text')])
    const state = Y.encodeStateAsUpdate(doc)
    const expected = yjsOutline(state)
    expect(expected.map((n) => n.title)).toContain('Plan B')
    expect(flatOutline(state)).toEqual(expected)
  })

  test('titles and plain text, whole and cut at every few characters (the search text’s prefix)', () => {
    let compared = 0
    for (let seed = 41; seed <= 60; seed++) {
      const { docs } = concurrentEdits(seed, 3, 10)
      const state = Y.encodeStateAsUpdate(docs[0]!)
      const whole = titleAndText(state, Number.POSITIVE_INFINITY)
      expect(whole.flat).toEqual(whole.yjs)
      for (let max = 0; max <= whole.yjs.text.length + 2; max += 7) {
        const cut = titleAndText(state, max)
        expect(cut.flat).toEqual(cut.yjs)
        compared++
      }
    }
    expect(compared).toBeGreaterThan(100)
  })

  test('section totals: each rendered as a read renders it (long lists in parts, blocks nested too deep), or adopted', () => {
    const withTotals = (state: Uint8Array, adopted = new Map<string, number>()) => {
      const doc = new Y.Doc()
      Y.applyUpdate(doc, state)
      const yjs = readOutlineWithTotals(doc.getXmlFragment(FRAGMENT_NAME))
      doc.destroy()
      return { yjs, flat: flatOutlineWithTotals(readFlat(state, FRAGMENT_NAME)!, adopted) }
    }
    for (let seed = 61; seed <= 80; seed++) {
      const { docs } = concurrentEdits(seed, 3, 15)
      const { yjs, flat } = withTotals(Y.encodeStateAsUpdate(docs[0]!))
      expect(flat).toEqual(yjs)
    }
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const item = (text: string) => {
      const element = new Y.XmlElement('listItem')
      const paragraph = new Y.XmlElement('paragraph')
      paragraph.insert(0, [new Y.XmlText(text)])
      element.insert(0, [paragraph])
      return element
    }
    const ordered = new Y.XmlElement('orderedList')
    ordered.setAttribute('start', 7 as unknown as string)
    ordered.insert(
      0,
      Array.from({ length: 2_500 }, (_, i) => item(`item ${i} *star*`)),
    )
    const bullets = new Y.XmlElement('bulletList')
    bullets.insert(
      0,
      Array.from({ length: 1_200 }, (_, i) => item(`- ${i}`)),
    )
    let deep = new Y.XmlElement('paragraph')
    deep.insert(0, [new Y.XmlText('at the bottom')])
    for (let level = 0; level <= MAX_NESTING_DEPTH + 2; level++) {
      const quote = new Y.XmlElement('blockquote')
      quote.insert(0, [deep])
      deep = quote
    }
    fragment.insert(0, [
      heading(1, newHeadingId(), 'Lists'),
      ordered,
      bullets,
      heading(2, newHeadingId(), 'Deep'),
      deep,
    ])
    const state = Y.encodeStateAsUpdate(doc)
    const { yjs, flat } = withTotals(state)
    expect(flat).toEqual(yjs)
    const [lists] = flat as StoredOutlineNode[]
    expect(lists!.total).toBeGreaterThan(2_500 * 10)
    // A total stored for a section's rev and block count is taken as it is, not rendered again.
    const adopted = new Map([[totalKey(lists!.rev, 2), 123]])
    expect(withTotals(state, adopted).flat[0]!.total).toBe(123)
    const otherRev = new Map([[totalKey(`${lists!.rev.slice(1)}x`, 2), 123]])
    expect(withTotals(state, otherRev).flat[0]!.total).toBe(lists!.total)
  })
})
