/**
 * The editor-update check's reader (yjs/update-rows.ts) against Yjs's own decoder: for every struct of
 * many updates, the same id, length, origins, parent, attribute key and content, and the same delete set;
 * and never a read of bytes Yjs's decoder refuses.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { FRAGMENT_NAME } from '../limits.ts'
import { CONTENT, GC_ROW, PARENT, readUpdateRows, SKIP_ROW, TYPE_REF } from '../yjs/update-rows.ts'
import { Malformed } from '../yjs/update-work.ts'
import { concurrentEdits } from './flat-read-support.ts'
import { seededRandom } from './seeded-random.ts'

type Decoded = {
  structs: Array<Y.Item | Y.GC | Y.Skip>
  ds: { clients: Map<number, Array<{ clock: number; len: number }>> }
}

const idOrNull = (client: number, clock: number) => (Number.isNaN(client) ? null : { client, clock })

/** One row as the fields of Yjs's struct it stands for. */
function rowAsYjs(rows: ReturnType<typeof readUpdateRows>, row: number) {
  const kind = rows.kind[row]!
  const base = { client: rows.client[row], clock: rows.clock[row], length: rows.length[row] }
  if (kind === GC_ROW) return { ...base, struct: 'gc' }
  if (kind === SKIP_ROW) return { ...base, struct: 'skip' }
  const parent =
    rows.parent[row] === PARENT.root
      ? rows.rootName.get(row)
      : rows.parent[row] === PARENT.item
        ? { client: rows.parentClient[row], clock: rows.parentClock[row] }
        : null
  const content = rows.content.get(row)
  return {
    ...base,
    struct: 'item',
    origin: idOrNull(rows.originClient[row]!, rows.originClock[row]!),
    rightOrigin: idOrNull(rows.rightClient[row]!, rows.rightClock[row]!),
    parent,
    parentSub: rows.sub.get(row) ?? null,
    kind,
    content:
      content?.kind === CONTENT.format
        ? { key: content.key, value: content.value }
        : content?.kind === CONTENT.type
          ? { ref: content.ref, name: content.name }
          : content?.kind === CONTENT.any
            ? content.values
            : null,
  }
}

const REF_OF = new Map<unknown, number>([
  [Y.XmlElement, TYPE_REF.xmlElement],
  [Y.XmlText, TYPE_REF.xmlText],
  [Y.XmlFragment, TYPE_REF.xmlFragment],
  [Y.XmlHook, TYPE_REF.xmlHook],
  [Y.Array, TYPE_REF.array],
  [Y.Map, TYPE_REF.map],
  [Y.Text, TYPE_REF.text],
])

/** A struct of Yjs's decoder in the same shape. */
function structAsRow(struct: Y.Item | Y.GC | Y.Skip) {
  const base = { client: struct.id.client, clock: struct.id.clock, length: struct.length }
  if (struct instanceof Y.GC) return { ...base, struct: 'gc' }
  if (!(struct instanceof Y.Item)) return { ...base, struct: 'skip' }
  const c = struct.content
  const kind =
    c instanceof Y.ContentDeleted
      ? CONTENT.deleted
      : c instanceof Y.ContentString
        ? CONTENT.string
        : c instanceof Y.ContentFormat
          ? CONTENT.format
          : c instanceof Y.ContentType
            ? CONTENT.type
            : c instanceof Y.ContentAny
              ? CONTENT.any
              : c instanceof Y.ContentEmbed
                ? CONTENT.embed
                : c instanceof Y.ContentBinary
                  ? CONTENT.binary
                  : c instanceof Y.ContentJSON
                    ? CONTENT.json
                    : CONTENT.doc
  const parent = struct.parent as unknown
  return {
    ...base,
    struct: 'item',
    origin: struct.origin ? { client: struct.origin.client, clock: struct.origin.clock } : null,
    rightOrigin: struct.rightOrigin
      ? { client: struct.rightOrigin.client, clock: struct.rightOrigin.clock }
      : null,
    parent:
      typeof parent === 'string'
        ? parent
        : parent
          ? { client: (parent as Y.ID).client, clock: (parent as Y.ID).clock }
          : null,
    parentSub: struct.parentSub,
    kind,
    content:
      c instanceof Y.ContentFormat
        ? { key: c.key, value: c.value }
        : c instanceof Y.ContentType
          ? {
              ref: REF_OF.get(c.type.constructor)!,
              name:
                c.type instanceof Y.XmlElement
                  ? c.type.nodeName
                  : c.type instanceof Y.XmlHook
                    ? c.type.hookName
                    : null,
            }
          : c instanceof Y.ContentAny
            ? c.arr
            : null,
  }
}

function expectSameAsYjs(update: Uint8Array) {
  const decoded = Y.decodeUpdate(update) as unknown as Decoded
  const rows = readUpdateRows(update)
  expect(rows.count).toBe(decoded.structs.length)
  for (let row = 0; row < rows.count; row++)
    expect(rowAsYjs(rows, row)).toEqual(structAsRow(decoded.structs[row]!))
  const ds = [...decoded.ds.clients].map(([client, ranges]) => [
    client,
    ranges.map(({ clock, len }) => ({ clock, len })),
  ])
  expect([...rows.deletes] as unknown[]).toEqual(ds)
}

/** Every content kind Yjs writes, in one update: marks, elements, text, hooks, maps, arrays, values, embeds, binary, a sub-document. */
function everyKind(): Uint8Array[] {
  const doc = new Y.Doc()
  const updates: Uint8Array[] = []
  doc.on('update', (u: Uint8Array) => updates.push(u))
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const heading = new Y.XmlElement('heading')
  heading.setAttribute('level', 2 as unknown as string)
  heading.setAttribute('id', 'h-1')
  const text = new Y.XmlText()
  heading.insert(0, [text])
  fragment.insert(0, [heading, new Y.XmlHook('hook') as unknown as Y.XmlElement])
  text.insert(0, 'déjà 😀 vu', { bold: true, link: { href: 'https://example.com', title: null } })
  text.insertEmbed(3, { image: 'x.png' })
  text.format(1, 2, { italic: {} })
  const map = doc.getMap('other')
  map.set('n', 1.5)
  map.set('big', 2 ** 40)
  map.set('neg', -7)
  map.set('bytes', new Uint8Array([1, 2, 3]))
  map.set('nested', { a: [1, 'two', null, true, { b: false }] })
  map.set('sub', new Y.Doc({ guid: 'sub-guid' }))
  const array = doc.getArray('list')
  array.push([new Uint8Array([9]), 'x', new Y.Map(), new Y.Text('t')])
  text.delete(0, 2)
  fragment.delete(1, 1)
  map.delete('n')
  updates.push(Y.encodeStateAsUpdate(doc))
  return updates
}

describe('update rows: the editor-update check reads what Yjs decodes', () => {
  test('every content kind, each update and the whole state (GC structs, deleted content, a delete set)', () => {
    for (const update of everyKind()) expectSameAsYjs(update)
  })

  test('concurrent histories: each client update, the states, and merges with Skips', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const { docs, updates } = concurrentEdits(seed, 3 + (seed % 3), 6)
      for (const update of updates) expectSameAsYjs(update)
      expectSameAsYjs(Y.encodeStateAsUpdate(docs[0]!))
      // Every other update merged leaves gaps, which Yjs's merge writes as Skips.
      expectSameAsYjs(Y.mergeUpdates(updates.filter((_, i) => i % 2 === 0)))
    }
  })

  test('a run typed character by character before the last (the item limit’s attack)', () => {
    const doc = new Y.Doc()
    let update: Uint8Array | undefined
    const text = new Y.XmlText()
    const paragraph = new Y.XmlElement('paragraph')
    paragraph.insert(0, [text])
    doc.getXmlFragment(FRAGMENT_NAME).push([paragraph])
    doc.on('update', (u: Uint8Array) => {
      update = u
    })
    doc.transact(() => {
      for (let i = 0; i < 500; i++) text.insert(0, i % 7 === 0 ? '😀' : 'z')
    })
    expectSameAsYjs(update!)
  })

  test('bytes Yjs refuses are refused: every cut of an update, and random damage', () => {
    const yjsRefuses = (bytes: Uint8Array) => {
      try {
        Y.decodeUpdate(bytes)
        return false
      } catch {
        return true
      }
    }
    const readsOrMalformed = (bytes: Uint8Array) => {
      try {
        readUpdateRows(bytes)
        return true
      } catch (error) {
        expect(error).toBeInstanceOf(Malformed)
        return false
      }
    }
    const samples = everyKind()
    let refusedByYjs = 0
    for (const update of samples)
      for (let cut = 0; cut < update.length; cut++) {
        const bytes = update.subarray(0, cut)
        if (yjsRefuses(bytes)) {
          refusedByYjs++
          expect(readsOrMalformed(bytes)).toBe(false)
        } else if (readsOrMalformed(bytes)) expectSameAsYjs(bytes)
      }
    const random = seededRandom(7)
    for (let round = 0; round < 3_000; round++) {
      const bytes = samples[Math.floor(random() * samples.length)]!.slice()
      for (let k = 1 + Math.floor(random() * 3); k > 0; k--)
        bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256)
      if (yjsRefuses(bytes)) {
        refusedByYjs++
        expect(readsOrMalformed(bytes)).toBe(false)
      } else if (readsOrMalformed(bytes)) expectSameAsYjs(bytes)
    }
    // The damage reached the decoder's refusals, not only harmless bytes.
    expect(refusedByYjs).toBeGreaterThan(500)
  })
})
