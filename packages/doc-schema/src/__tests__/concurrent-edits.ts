/**
 * Random concurrent documents: several clients editing from what each has, exchanging now and then, so
 * inserts at the same places meet (every content kind the schema's documents hold, deletions, marks,
 * attributes, a map beside the fragment). For comparing what reads or writes states without Yjs with
 * Yjs: doc-schema's flat-read tests, and the server's compaction on the documents' worker
 * (`@collab/doc-schema/test-histories`).
 */
import * as Y from 'yjs'
import { FRAGMENT_NAME } from '../limits.ts'
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
export function concurrentEdits(seed: number, clients: number, rounds: number, gc = true) {
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
