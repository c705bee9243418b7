import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { FRAGMENT_NAME } from '../limits.ts'
import { diffAppended, mergeAppended, mergeInOrder, mergeWithVector } from '../yjs/append-merge.ts'
import { countUpdateWork } from '../yjs/update-work.ts'
import { seededRandom } from './yjs-builders.ts'

type Rng = () => number

/** Strings with characters of every UTF-8 width, an emoji (two UTF-16 units) among them. */
const WORDS = ['a', 'bc ', 'déjà ', '中文', '😀', 'x😀y', '\u{10348}', 'end.']

/** One random change by `doc`, of the kinds a document and its side types hold. */
function randomChange(doc: Y.Doc, random: Rng): void {
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!
  const roll = random()
  if (fragment.length === 0 || roll < 0.12) {
    const element = new Y.XmlElement(pick(['paragraph', 'heading']))
    element.setAttribute('level', String(Math.floor(random() * 3) + 1))
    element.insert(0, [new Y.XmlText(pick(WORDS))])
    fragment.insert(Math.floor(random() * (fragment.length + 1)), [element])
    return
  }
  const element = fragment.get(Math.floor(random() * fragment.length)) as Y.XmlElement
  const text = element.get(0) as Y.XmlText | undefined
  if (roll < 0.55 && text) {
    // Anywhere, also inside an emoji's pair (Yjs then stores a replacement character).
    text.insert(Math.floor(random() * (text.length + 1)), pick(WORDS), random() < 0.3 ? { bold: true } : {})
  } else if (roll < 0.7 && text && text.length > 0) {
    const at = Math.floor(random() * text.length)
    text.delete(at, Math.min(text.length - at, 1 + Math.floor(random() * 4)))
  } else if (roll < 0.78 && text && text.length > 1) {
    const at = Math.floor(random() * (text.length - 1))
    text.format(at, 1 + Math.floor(random() * (text.length - at - 1)), {
      italic: random() < 0.5 ? true : null,
    })
  } else if (roll < 0.82 && text) {
    text.insertEmbed(Math.floor(random() * (text.length + 1)), { image: pick(WORDS) })
  } else if (roll < 0.88) {
    element.setAttribute('id', pick(WORDS))
  } else if (roll < 0.92 && fragment.length > 1) {
    fragment.delete(Math.floor(random() * fragment.length), 1)
  } else if (roll < 0.93) {
    doc.getMap('meta').set(pick(WORDS), { at: Math.floor(random() * 1e6), list: [1.5, null, true, 'x'] })
  } else if (roll < 0.96) {
    // Several values in one item: a struct of as many ticks, which a diff may cut.
    doc.getArray('list').push([Math.floor(random() * 100), pick(WORDS), { nested: [pick(WORDS)] }, null])
  } else {
    doc.getArray('files').push([new Uint8Array([1, 2, Math.floor(random() * 255)])])
  }
}

/** What a document holds, for comparing two decodings. */
function contentOf(update: Uint8Array) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update)
  return {
    fragment: doc.getXmlFragment(FRAGMENT_NAME).toString(),
    meta: doc.getMap('meta').toJSON(),
    files: doc.getArray('files').toJSON(),
    list: doc.getArray('list').toJSON(),
    snapshot: doc,
  }
}

function expectSameAsYjs(parts: Uint8Array[]): void {
  const merged = mergeAppended(parts)
  expect(merged).not.toBeNull()
  const ours = contentOf(merged!.update)
  const yjs = contentOf(Y.mergeUpdates(parts))
  expect(ours.fragment).toBe(yjs.fragment)
  expect(ours.meta).toEqual(yjs.meta)
  expect(ours.files).toEqual(yjs.files)
  expect(ours.list).toEqual(yjs.list)
  // Same state vector and delete set: the same document to Yjs.
  expect(Y.equalSnapshots(Y.snapshot(ours.snapshot), Y.snapshot(yjs.snapshot))).toBe(true)
  expect(Y.decodeStateVector(merged!.vector)).toEqual(
    Y.decodeStateVector(Y.encodeStateVectorFromUpdate(Y.mergeUpdates(parts))),
  )
  // Nothing pending: every struct was placed.
  expect(ours.snapshot.store.pendingStructs).toBeNull()
}

/**
 * Three clients editing through a server document, whose updates are logged as a store would (each row
 * the merge of a batch), with a snapshot taken part way: `[snapshot, ...rows]`.
 */
function loggedDocument(seed: number, before: number, after: number) {
  const random = seededRandom(seed)
  const server = new Y.Doc()
  const clients = [new Y.Doc(), new Y.Doc(), new Y.Doc()]
  const logged: Uint8Array[] = []
  let snapshot: Uint8Array | null = null
  server.on('update', (update: Uint8Array) => {
    if (snapshot) logged.push(update)
  })
  for (let step = 0; step < before + after; step++) {
    if (step === before) snapshot = Y.encodeStateAsUpdate(server)
    const client = clients[Math.floor(random() * clients.length)]!
    Y.applyUpdate(client, Y.encodeStateAsUpdate(server, Y.encodeStateVector(client)))
    const vector = Y.encodeStateVector(client)
    randomChange(client, random)
    Y.applyUpdate(server, Y.encodeStateAsUpdate(client, vector))
  }
  const rows: Uint8Array[] = []
  for (let i = 0; i < logged.length; ) {
    const size = 1 + Math.floor(random() * 6)
    rows.push(Y.mergeUpdates(logged.slice(i, i + size)))
    i += size
  }
  return { server, parts: [snapshot!, ...rows] }
}

describe('mergeAppended', () => {
  test('equals Yjs mergeUpdates for a snapshot and the rows logged after it, over random edits', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const { server, parts } = loggedDocument(seed, 150, 250)
      expectSameAsYjs(parts)
      // And the server's own document.
      const merged = contentOf(mergeAppended(parts)!.update)
      expect(merged.fragment).toBe(server.getXmlFragment(FRAGMENT_NAME).toString())
      expect(Y.equalSnapshots(Y.snapshot(merged.snapshot), Y.snapshot(server))).toBe(true)
    }
  })

  test('counts string lengths in UTF-16 units, as the clocks do (emoji, split pairs, 4-byte characters)', () => {
    const doc = new Y.Doc()
    const text = doc.getText('t')
    text.insert(0, '😀😀\u{10348}é中')
    const snapshot = Y.encodeStateAsUpdate(doc)
    const vector = Y.encodeStateVector(doc)
    text.insert(1, 'z') // inside the first emoji's pair
    text.insert(text.length, 'tail')
    const parts = [snapshot, Y.encodeStateAsUpdate(doc, vector)]
    expectSameAsYjs(parts)
    expect(Y.decodeStateVector(mergeAppended(parts)!.vector)).toEqual(
      Y.decodeStateVector(Y.encodeStateVector(doc)),
    )
  })

  test('mergeWithVector: one part kept as it is, its vector read from its bytes; else as Yjs merges', () => {
    const { parts } = loggedDocument(5, 60, 90)
    const whole = Y.mergeUpdates(parts)
    const one = mergeWithVector([whole])
    expect(one.update).toBe(whole)
    expect(Y.decodeStateVector(one.vector)).toEqual(Y.decodeStateVector(Y.encodeStateVectorFromUpdate(whole)))
    const many = mergeWithVector(parts)
    expect(Y.decodeStateVector(many.vector)).toEqual(
      Y.decodeStateVector(Y.encodeStateVectorFromUpdate(whole)),
    )
    // Parts that do not continue each other (a Skip): Yjs merges them, and reads the vector.
    const skipped = mergeWithVector([Y.mergeUpdates([parts[0]!, parts[parts.length - 1]!])])
    expect(Y.decodeStateVector(skipped.vector)).toEqual(
      Y.decodeStateVector(Y.encodeStateVectorFromUpdate(skipped.update)),
    )
  })

  test('drops a row that repeats structs already merged, whole', () => {
    const { parts } = loggedDocument(99, 50, 80)
    const repeated = [...parts.slice(0, 4), parts[2]!, parts[3]!, ...parts.slice(4)]
    expectSameAsYjs(repeated)
  })

  test('gives up on a gap, a partial overlap, a Skip and bytes that are not an update', () => {
    const doc = new Y.Doc()
    const text = doc.getText('t')
    text.insert(0, 'one')
    const snapshot = Y.encodeStateAsUpdate(doc)
    const first = Y.encodeStateVector(doc)
    text.insert(0, 'two')
    const atSecond = Y.encodeStateAsUpdate(doc)
    const second = Y.encodeStateVector(doc)
    text.insert(0, 'three')
    const firstToSecond = Y.diffUpdate(atSecond, first) // clocks 3..6
    const afterFirst = Y.encodeStateAsUpdate(doc, first) // 3..11
    const afterSecond = Y.encodeStateAsUpdate(doc, second) // 6..11
    const fromFour = Y.encodeStateAsUpdate(doc, Y.encodeStateVector(new Map([[doc.clientID, 4]]))) // 4..11
    expectSameAsYjs([snapshot, firstToSecond, afterSecond])
    expectSameAsYjs([snapshot, afterFirst, afterSecond]) // the second repeats the first's end, whole
    expect(mergeAppended([snapshot, afterSecond])).toBeNull() // 3..6 missing
    expect(mergeAppended([snapshot, firstToSecond, fromFour])).toBeNull() // 4..6 twice, then more
    // A Skip: Yjs's merge of parts with a gap between them.
    expect(mergeAppended([Y.mergeUpdates([snapshot, afterSecond])])).toBeNull()
    expect(mergeAppended([snapshot, new Uint8Array([5, 1, 2])])).toBeNull()
    expect(mergeAppended([snapshot, new Uint8Array([...afterFirst, 0])])).toBeNull()
  })

  test('a string that is not UTF-8 is not read (a decoder would replace its bytes)', () => {
    const doc = new Y.Doc()
    doc.getText('t').insert(0, 'ab')
    const update = Y.encodeStateAsUpdate(doc)
    const at = update.indexOf(0x61) // the string's first byte, 'a'
    const broken = update.slice()
    broken[at] = 0xff
    expect(mergeAppended([broken])).toBeNull()
    // The count of structs (the editor boundary's) never needed the string's units, and still reads it.
    expect(countUpdateWork(broken, null, 10)?.inserted).toBe(1)
  })

  test("a live document's own updates always continue each other, also when remote ones wait for theirs", () => {
    const random = seededRandom(7)
    const server = new Y.Doc()
    const own: Uint8Array[] = []
    server.on('update', (update: Uint8Array) => own.push(update))
    const clients = [new Y.Doc(), new Y.Doc(), new Y.Doc()]
    const held: Uint8Array[] = []
    let waited = 0
    for (let step = 0; step < 300; step++) {
      const client = clients[Math.floor(random() * clients.length)]!
      // Each client sees the others' changes only now and then: their updates cross in flight.
      if (random() < 0.3) for (const other of clients) Y.applyUpdate(client, Y.encodeStateAsUpdate(other))
      const vector = Y.encodeStateVector(client)
      randomChange(client, random)
      held.push(Y.encodeStateAsUpdate(client, vector))
      // The server gets them late and out of order: some wait in Yjs's pending structs for others.
      if (random() < 0.4) {
        const order = held.splice(0).sort(() => random() - 0.5)
        for (const update of order) {
          Y.applyUpdate(server, update)
          if (server.store.pendingStructs) waited++
        }
      }
    }
    for (const update of held) Y.applyUpdate(server, update)
    expect(waited).toBeGreaterThan(0) // the case this is about happened
    expect(server.store.pendingStructs).toBeNull()
    expect(mergeAppended(own)).not.toBeNull()
    expectSameAsYjs(own)
    const merged = contentOf(mergeInOrder(own))
    expect(merged.fragment).toBe(server.getXmlFragment(FRAGMENT_NAME).toString())
    expect(Y.equalSnapshots(Y.snapshot(merged.snapshot), Y.snapshot(server))).toBe(true)
  })
})

/** An update's structs and delete set as plain values: what Yjs reads from it, struct by struct. */
function decoded(update: Uint8Array) {
  const id = (value: Y.ID | null) => (value ? `${value.client}:${value.clock}` : null)
  const { structs, ds } = Y.decodeUpdate(update)
  return {
    structs: structs.map((struct) =>
      struct instanceof Y.Item
        ? {
            id: id(struct.id),
            length: struct.length,
            origin: id(struct.origin),
            rightOrigin: id(struct.rightOrigin),
            parent:
              struct.parent instanceof Y.ID ? id(struct.parent) : struct.parent === null ? null : 'root',
            parentSub: struct.parentSub,
            content: struct.content.constructor.name,
            values: struct.content.getContent(),
          }
        : { id: id(struct.id), length: struct.length, kind: struct.constructor.name },
    ),
    deletes: [...ds.clients.entries()].sort((a, b) => a[0] - b[0]),
  }
}

describe('diffAppended', () => {
  test("reads as Yjs's diffUpdate reads, against vectors that cut structs anywhere", () => {
    const random = seededRandom(31)
    for (let seed = 1; seed <= 6; seed++) {
      const { parts } = loggedDocument(seed + 40, 120, 160)
      const whole = mergeInOrder(parts)
      const ends = Y.decodeStateVector(Y.encodeStateVectorFromUpdate(whole))
      for (let round = 0; round < 25; round++) {
        // Each client's clock anywhere from 0 to past its end (inside strings, lists of values, GCs).
        const vector = new Map<number, number>()
        for (const [client, end] of ends)
          if (random() < 0.85) vector.set(client, Math.floor(random() * (end + 2)))
        const ours = diffAppended(whole, vector)
        expect(ours).not.toBeNull()
        expect(decoded(ours!)).toEqual(decoded(Y.diffUpdate(whole, Y.encodeStateVector(vector))))
      }
    }
  })

  test('an editor at an earlier state, given the diff, holds the whole document', () => {
    const { server, parts } = loggedDocument(77, 100, 200)
    const whole = mergeInOrder(parts)
    const editor = new Y.Doc()
    Y.applyUpdate(editor, parts[0]!) // the snapshot: the rows after it are what it lacks
    Y.applyUpdate(editor, diffAppended(whole, Y.decodeStateVector(Y.encodeStateVector(editor)))!)
    expect(editor.getXmlFragment(FRAGMENT_NAME).toString()).toBe(
      server.getXmlFragment(FRAGMENT_NAME).toString(),
    )
    expect(Y.equalSnapshots(Y.snapshot(editor), Y.snapshot(server))).toBe(true)
  })

  test('cuts a string inside an emoji as Yjs does (a replacement character for the half left)', () => {
    const doc = new Y.Doc()
    doc.getText('t').insert(0, 'a😀b😀')
    const whole = Y.encodeStateAsUpdate(doc)
    for (let at = 0; at <= 7; at++) {
      const vector = new Map([[doc.clientID, at]])
      expect(decoded(diffAppended(whole, vector)!)).toEqual(
        decoded(Y.diffUpdate(whole, Y.encodeStateVector(vector))),
      )
    }
  })

  test('gives up on a client written twice, a Skip and bytes that are not an update', () => {
    const doc = new Y.Doc()
    doc.getText('t').insert(0, 'one')
    const first = Y.encodeStateAsUpdate(doc)
    const vector = Y.encodeStateVector(doc)
    doc.getText('t').insert(3, 'two')
    const after = Y.encodeStateAsUpdate(doc, vector)
    // Two groups of one client in one update (Yjs's reader would keep the second only).
    const twice = new Uint8Array([2, ...first.subarray(1, first.length - 1), ...after.subarray(1)])
    expect(diffAppended(twice, new Map())).toBeNull()
    expect(
      diffAppended(
        Y.mergeUpdates([
          first,
          Y.encodeStateAsUpdate(doc, Y.encodeStateVector(new Map([[doc.clientID, 4]]))),
        ]),
        new Map(),
      ),
    ).toBeNull()
    expect(diffAppended(new Uint8Array([1, 2, 3]), new Map())).toBeNull()
  })
})
