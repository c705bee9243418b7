import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { firstScreenHtml } from '../first-screen.ts'
import { FRAGMENT_NAME, MAX_NESTING_DEPTH } from '../limits.ts'
import { documentMarkdownPrefix } from '../markdown/document-to-markdown.ts'
import { TOO_DEEP_NODE } from '../markdown/render-depth.ts'
import { readFlat } from '../yjs/flat-read.ts'
import { concurrentEdits, expectSameBlocks } from './flat-read-support.ts'

describe('readFlat', () => {
  test("gives Yjs's blocks for states edited concurrently by three to five clients", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const { docs, updates } = concurrentEdits(seed, 3 + (seed % 3), 25)
      expectSameBlocks(Y.encodeStateAsUpdate(docs[0]!))
      // The same history never integrated: every update merged as made (deleted text still in it, items
      // never joined), as a log holds it.
      expectSameBlocks(Y.mergeUpdates(updates))
    }
  })

  test("gives Yjs's first screen, attributes and top-level entries", () => {
    let drawn = 0
    for (let seed = 200; seed <= 215; seed++) {
      const { docs, updates } = concurrentEdits(seed, 3, 25)
      for (const update of [Y.encodeStateAsUpdate(docs[0]!), Y.mergeUpdates(updates)]) {
        const flat = readFlat(update, FRAGMENT_NAME)!
        const doc = new Y.Doc()
        Y.applyUpdate(doc, update)
        const fragment = doc.getXmlFragment(FRAGMENT_NAME)
        // The top level as the fragment counts it, and each heading's attributes as getAttribute reads them.
        const items = [...flat.topLevel()]
        expect(items.reduce((sum, item) => sum + item.length, 0)).toBe(fragment.length)
        const elements = fragment.toArray()
        expect(items.map((item) => item.name)).toEqual(
          elements.map((child) => (child instanceof Y.XmlElement ? child.nodeName : null)),
        )
        items.forEach((item, i) => {
          if (!(elements[i] instanceof Y.XmlElement)) return
          for (const key of ['id', 'level', 'src', 'checked', 'absent'])
            expect(flat.attribute(item, key)).toEqual(elements[i].getAttribute(key))
        })
        // Limits that cut at a block, at the work budget inside one, and none.
        for (const limits of [
          { maxBlocks: 3, maxWork: 10_000 },
          { maxBlocks: 50, maxWork: 40 },
          { maxBlocks: 1_000, maxWork: 1_000_000 },
        ]) {
          const screen = firstScreenHtml(fragment, limits)
          expect(firstScreenHtml(flat, limits)).toEqual(screen)
          if (screen.blocks >= 2) drawn++
        }
        doc.destroy()
      }
    }
    expect(drawn).toBeGreaterThan(30) // screens of several blocks, not only refusals at the first
  })

  test("gives Yjs's bounded start of the Markdown (a whole read) at every budget", () => {
    let cut = 0
    for (let seed = 300; seed <= 330; seed++) {
      const { docs } = concurrentEdits(seed, 3, 20)
      const update = Y.encodeStateAsUpdate(docs[0]!)
      const flat = readFlat(update, FRAGMENT_NAME)!
      const doc = new Y.Doc()
      Y.applyUpdate(doc, update)
      const fragment = doc.getXmlFragment(FRAGMENT_NAME)
      for (const minChars of [1, 7, 40, 120, 400, 100_000]) {
        for (const bounded of [true, false]) {
          const ours = documentMarkdownPrefix(flat, minChars, { media: 'source' }, bounded)
          expect(ours).toEqual(documentMarkdownPrefix(fragment, minChars, { media: 'source' }, bounded))
          if (!ours.complete) cut++
        }
      }
      doc.destroy()
    }
    expect(cut).toBeGreaterThan(100)
  })

  test("a paragraph past the render's work ceiling is cut where Yjs's read cuts it", () => {
    const doc = new Y.Doc()
    const text = new Y.XmlText()
    text.applyDelta(
      Array.from({ length: 20_000 }, (_, i) => ({
        insert: String.fromCharCode(97 + (i % 26)),
        attributes: i % 2 ? { italic: {} } : { bold: {} },
      })),
    )
    const p = new Y.XmlElement('paragraph')
    p.insert(0, [text])
    doc.getXmlFragment(FRAGMENT_NAME).insert(0, [p])
    const update = Y.encodeStateAsUpdate(doc)
    const ours = documentMarkdownPrefix(readFlat(update, FRAGMENT_NAME)!, 50_000, {}, true)
    expect(ours.byWork).toBe(true)
    expect(ours).toEqual(documentMarkdownPrefix(doc.getXmlFragment(FRAGMENT_NAME), 50_000, {}, true))
  })

  test('reads states of documents that keep deleted content (gc off), and states from other clients', () => {
    for (let seed = 100; seed <= 115; seed++) {
      const { docs } = concurrentEdits(seed, 3, 20, false)
      for (const doc of docs) expectSameBlocks(Y.encodeStateAsUpdate(doc))
    }
  })

  test('cuts a string where a later insert lands inside an emoji, as Yjs does', () => {
    const a = new Y.Doc()
    a.clientID = 5
    const text = new Y.XmlText('x😀😀y')
    const p = new Y.XmlElement('paragraph')
    p.insert(0, [text])
    a.getXmlFragment(FRAGMENT_NAME).insert(0, [p])
    const b = new Y.Doc()
    b.clientID = 3
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    // Between the two halves of the first emoji, and of the second, from both sides.
    ;((b.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(2, 'Q')
    text.insert(4, 'R', { bold: true })
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b))
    const state = Y.encodeStateAsUpdate(a)
    expectSameBlocks(state)
    const [block] = [...readFlat(state, FRAGMENT_NAME)!.blocks()]
    expect(JSON.stringify(block)).toContain('\uFFFD')
  })

  test('a block nested past the ceiling is the placeholder, as the render gives it', () => {
    const doc = new Y.Doc()
    let inner = new Y.XmlElement('paragraph')
    inner.insert(0, [new Y.XmlText('deep')])
    for (let level = 0; level < MAX_NESTING_DEPTH + 2; level++) {
      const quote = new Y.XmlElement('blockquote')
      quote.insert(0, [inner])
      inner = quote
    }
    const shallow = new Y.XmlElement('paragraph')
    shallow.insert(0, [new Y.XmlText('shallow')])
    doc.getXmlFragment(FRAGMENT_NAME).insert(0, [inner, shallow])
    const state = Y.encodeStateAsUpdate(doc)
    const blocks = [...readFlat(state, FRAGMENT_NAME)!.blocks()]
    expect(blocks[0]).toBe(TOO_DEEP_NODE)
    expect(blocks[1]).toEqual({ type: 'paragraph', content: [{ type: 'text', text: 'shallow' }] })
    expectSameBlocks(state)
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    expect(documentMarkdownPrefix(readFlat(state, FRAGMENT_NAME)!, 10, {}, true)).toEqual(
      documentMarkdownPrefix(fragment, 10, {}, true),
    )
  })

  test('a read cut inside a table, and values inside an element, read as Yjs reads them', () => {
    const doc = new Y.Doc()
    const cell = (text: string) => {
      const p = new Y.XmlElement('paragraph')
      p.insert(0, [new Y.XmlText(text)])
      const c = new Y.XmlElement('tableCell')
      c.insert(0, [p])
      return c
    }
    const row = (...texts: string[]) => {
      const r = new Y.XmlElement('tableRow')
      r.insert(0, texts.map(cell))
      return r
    }
    const table = new Y.XmlElement('table')
    // Its second row longer than a read's slack (PREFIX_SLACK_CHARS), so a short read cuts inside it.
    table.insert(0, [
      row('first'),
      row(`a long cell ${'of a short row '.repeat(600)}`),
      row('b', 'c', 'd', 'e'),
    ])
    // Values (not text) inside an element: Yjs counts each as an entry of its content.
    const odd = new Y.XmlElement('paragraph')
    odd.insert(0, [new Y.XmlText('abc')])
    ;(odd as unknown as Y.Array<unknown>).insert(1, ['x', 'y'])
    doc.getXmlFragment(FRAGMENT_NAME).insert(0, [table, odd])
    const state = Y.encodeStateAsUpdate(doc)
    const flat = readFlat(state, FRAGMENT_NAME)!
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    for (const minChars of [5, 12, 60, 200, 1_000, 9_020, 9_100, 20_000]) {
      expect(documentMarkdownPrefix(flat, minChars, {}, true)).toEqual(
        documentMarkdownPrefix(fragment, minChars, {}, true),
      )
    }
    // Reads cut inside the second row (its cells then padded to the longest row's four).
    expect(documentMarkdownPrefix(flat, 200, {}, true).complete).toBe(false)
  })

  test('gives up on what it does not read as Yjs would: a gap, a missing dependency, not an update', () => {
    const { updates } = concurrentEdits(7, 3, 10)
    // The log without its first rows: what follows depends on structs not there (Yjs keeps it pending).
    expect(readFlat(Y.mergeUpdates(updates.slice(5)), FRAGMENT_NAME)).toBeNull()
    expect(readFlat(new Uint8Array([1, 2, 3]), FRAGMENT_NAME)).toBeNull()
    // A document with nothing in it reads as no blocks.
    expect([...readFlat(Y.encodeStateAsUpdate(new Y.Doc()), FRAGMENT_NAME)!.blocks()]).toEqual([])
  })
})
