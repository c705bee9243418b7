import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { firstScreenHtml } from '../first-screen.ts'
import { FRAGMENT_NAME, MAX_NESTING_DEPTH } from '../limits.ts'
import { documentMarkdownPrefix, documentToMarkdown } from '../markdown/document-to-markdown.ts'
import { TOO_DEEP_NODE, yBlockForRender } from '../markdown/render-depth.ts'
import { readFlat } from '../yjs/flat-read.ts'
import { topLevelElements } from '../yjs/read-y.ts'
import { type Rng, seededRandom } from './seeded-random.ts'

/** Strings with characters of every UTF-8 width and emoji (two UTF-16 units each, which inserts may split). */
const WORDS = ['a', 'bc ', 'déjà ', '中文', '😀', 'x😀y', '\u{10348}', 'end.', ' ', '**']
const MARKS = ['bold', 'italic', 'code', 'link--abc=', 'highlight']

const pick = <T>(random: Rng, list: readonly T[]) => list[Math.floor(random() * list.length)]!

/** The XmlTexts and elements under `fragment`, deleted ones left out (Yjs walks only what is there). */
function partsOf(fragment: Y.XmlFragment | Y.XmlElement) {
  const texts: Y.XmlText[] = []
  const elements: Y.XmlElement[] = []
  const stack: Array<Y.XmlFragment | Y.XmlElement> = [fragment]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    for (const child of node.toArray()) {
      if (child instanceof Y.XmlText) texts.push(child)
      else if (child instanceof Y.XmlElement) {
        elements.push(child)
        stack.push(child)
      }
    }
  }
  return { texts, elements }
}

/** A block of a kind documents hold: a paragraph, a heading, a list of items, a quote of paragraphs. */
function randomBlock(random: Rng): Y.XmlElement {
  const kind = random()
  const paragraph = () => {
    const p = new Y.XmlElement('paragraph')
    p.insert(0, [new Y.XmlText(pick(random, WORDS))])
    return p
  }
  if (kind < 0.4) return paragraph()
  if (kind < 0.6) {
    const heading = new Y.XmlElement('heading')
    heading.setAttribute('level', (1 + Math.floor(random() * 3)) as unknown as string)
    heading.setAttribute('id', `h${Math.floor(random() * 1000)}`)
    heading.insert(0, [new Y.XmlText(pick(random, WORDS))])
    return heading
  }
  if (kind < 0.8) {
    const list = new Y.XmlElement(random() < 0.5 ? 'bulletList' : 'orderedList')
    const items = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
      const item = new Y.XmlElement('listItem')
      item.insert(0, [paragraph()])
      return item
    })
    list.insert(0, items)
    return list
  }
  if (kind < 0.9) {
    const quote = new Y.XmlElement('blockquote')
    quote.insert(0, [paragraph(), paragraph()])
    return quote
  }
  // A table whose rows differ in length (a cut read pads the last kept row to the longest).
  const table = new Y.XmlElement('table')
  const rows = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
    const row = new Y.XmlElement('tableRow')
    const cells = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
      const cell = new Y.XmlElement('tableCell')
      cell.insert(0, [paragraph()])
      return cell
    })
    row.insert(0, cells)
    return row
  })
  table.insert(0, rows)
  return table
}

/** One random change by `doc`: inserts (often at the same places, so concurrent ones conflict), deletions, marks, attributes. */
function randomChange(doc: Y.Doc, random: Rng): void {
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const roll = random()
  const { texts, elements } = partsOf(fragment)
  if (fragment.length === 0 || roll < 0.12) {
    const at =
      random() < 0.5 ? (random() < 0.5 ? 0 : fragment.length) : Math.floor(random() * (fragment.length + 1))
    fragment.insert(at, [randomBlock(random)])
    return
  }
  const text = texts.length > 0 ? pick(random, texts) : undefined
  if (roll < 0.5 && text) {
    const at = random() < 0.4 ? (random() < 0.5 ? 0 : text.length) : Math.floor(random() * (text.length + 1))
    const attributes =
      random() < 0.3 ? { [pick(random, MARKS)]: random() < 0.5 ? true : { href: pick(random, WORDS) } } : {}
    text.insert(at, pick(random, WORDS), attributes)
  } else if (roll < 0.62 && text && text.length > 0) {
    const at = Math.floor(random() * text.length)
    text.delete(at, Math.min(text.length - at, 1 + Math.floor(random() * 5)))
  } else if (roll < 0.72 && text && text.length > 1) {
    const at = Math.floor(random() * (text.length - 1))
    text.format(at, 1 + Math.floor(random() * (text.length - at - 1)), {
      [pick(random, MARKS)]: random() < 0.6 ? (random() < 0.5 ? true : { color: pick(random, WORDS) }) : null,
    })
  } else if (roll < 0.75 && text) {
    text.insertEmbed(Math.floor(random() * (text.length + 1)), { image: pick(random, WORDS) })
  } else if (roll < 0.83 && elements.length > 0) {
    const element = pick(random, elements)
    if (random() < 0.2) element.removeAttribute('id')
    else
      element.setAttribute(
        pick(random, ['id', 'level', 'src', 'checked']),
        pick(random, [1, 'x', null, true, { a: [1, 'b'] }, 2.5]) as string,
      )
  } else if (roll < 0.9 && fragment.length > 1) {
    const at = Math.floor(random() * fragment.length)
    fragment.delete(at, Math.min(1 + Math.floor(random() * 2), fragment.length - at))
  } else if (roll < 0.95 && elements.length > 0) {
    // Inside a block: an element added to or taken from a list or a quote.
    const element = pick(random, elements)
    if (element.length > 1 && random() < 0.5) element.delete(Math.floor(random() * element.length), 1)
    else if (element.nodeName !== 'paragraph' && element.nodeName !== 'heading') {
      const p = new Y.XmlElement('paragraph')
      p.insert(0, [new Y.XmlText(pick(random, WORDS))])
      element.insert(Math.floor(random() * (element.length + 1)), [p])
    }
  } else {
    doc.getMap('meta').set(pick(random, WORDS), Math.floor(random() * 100))
  }
}

/**
 * `clients` documents editing concurrently: each round every client makes a few changes from what it has,
 * then some pairs exchange what they lack, so inserts at the same place meet. Returns the documents (all
 * synced at the end) and every update made, in the order made.
 */
function concurrentEdits(seed: number, clients: number, rounds: number, gc = true) {
  const random = seededRandom(seed)
  const docs = Array.from({ length: clients }, (_, i) => {
    const doc = new Y.Doc({ gc })
    doc.clientID = 1 + i * 7 + (seed % 5) // small ids, so their order decides ties often
    return doc
  })
  const updates: Uint8Array[] = []
  for (const doc of docs)
    doc.on('update', (update: Uint8Array, origin: unknown) => origin !== 'sync' && updates.push(update))
  const exchange = (a: Y.Doc, b: Y.Doc) => {
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)), 'sync')
    Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)), 'sync')
  }
  for (let round = 0; round < rounds; round++) {
    for (const doc of docs) for (let k = 1 + Math.floor(random() * 3); k > 0; k--) randomChange(doc, random)
    for (let k = 0; k < clients; k++) if (random() < 0.6) exchange(pick(random, docs), pick(random, docs))
  }
  for (const a of docs) for (const b of docs) if (a !== b) exchange(a, b)
  return { docs, updates }
}

/** Yjs's blocks of a state, as the export reads them. */
function yjsBlocks(update: Uint8Array) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update)
  const blocks = topLevelElements(doc.getXmlFragment(FRAGMENT_NAME)).map(yBlockForRender)
  doc.destroy()
  return blocks
}

function expectSameBlocks(update: Uint8Array): void {
  const flat = readFlat(update, FRAGMENT_NAME)
  expect(flat).not.toBeNull()
  const ours = [...flat!.blocks()]
  const yjs = yjsBlocks(update)
  expect(ours).toEqual(yjs)
  // Attributes and marks in the same order too.
  expect(JSON.stringify(ours)).toBe(JSON.stringify(yjs))
  expect(documentToMarkdown({ type: 'doc', content: ours })).toBe(
    documentToMarkdown({ type: 'doc', content: yjs }),
  )
}

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
