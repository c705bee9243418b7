/**
 * The outline of a stored state read flat (`readOutlineOf` over `FlatDocument.tree`) against Yjs's
 * `readOutline` of the same state: the same sections, ids, levels, titles, revs and sizes. A rev is what
 * an agent's `since_rev` names, so a flat outline that hashed one byte differently would tell agents a
 * section changed (or hide a change).
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { newHeadingId } from '../heading-id.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { readPlainText, readTitle, readTitleAndTextOf } from '../read-document.ts'
import { readOutline, readOutlineOf } from '../sections/outline.ts'
import { SUGGESTION_INSERT } from '../suggestion-marks.ts'
import { readFlat } from '../yjs/flat-read.ts'
import { concurrentEdits } from './flat-read-support.ts'

/** The flat document of a state and its top-level nodes, as the documents' worker reads them. */
function readRows(state: Uint8Array) {
  const flat = readFlat(state, FRAGMENT_NAME)
  expect(flat).not.toBeNull()
  const rows = (function* () {
    for (const item of flat!.topLevel()) yield item.name !== null ? item.row : -1
  })()
  return { tree: flat!.tree, rows }
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
})
