/** countUpdateWork (yjs/update-work.ts): the structs an editor's update inserts and deletes, before decoding it. */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { FRAGMENT_NAME } from '../limits.ts'
import { countUpdateWork, DELETED_STRUCT_COST } from '../yjs/update-work.ts'

/** What `change` does to a copy of `base`, as the update an editor would send. */
function updateOf(base: Y.Doc, change: (doc: Y.Doc) => void): Uint8Array {
  const editor = new Y.Doc()
  Y.applyUpdate(editor, Y.encodeStateAsUpdate(base))
  const before = Y.encodeStateVector(editor)
  editor.transact(() => change(editor))
  return Y.encodeStateAsUpdate(editor, before)
}

const structsOf = (update: Uint8Array) => Y.decodeUpdate(update).structs.length

function paragraph(text: string): Y.XmlElement {
  const p = new Y.XmlElement('paragraph')
  p.insert(0, [new Y.XmlText(text)])
  return p
}

describe('structs inserted: the same count as decoding the update', () => {
  const base = new Y.Doc()
  const cases: Array<[string, (doc: Y.Doc) => void]> = [
    ['paragraphs', (doc) => doc.getXmlFragment(FRAGMENT_NAME).push([paragraph('a'), paragraph('bé😀')])],
    [
      'formatted text and attributes of every value kind',
      (doc) => {
        const text = new Y.XmlText()
        const p = new Y.XmlElement('paragraph')
        p.insert(0, [text])
        doc.getXmlFragment(FRAGMENT_NAME).push([p])
        text.insert(0, 'bold', { bold: true })
        text.insert(4, 'link', { link: { href: 'https://example.com', title: null } })
        text.insertEmbed(8, { image: 'x' })
        p.setAttribute('colwidth', [100, null, 2.5] as unknown as string)
        p.setAttribute('level', 3 as unknown as string)
        p.setAttribute('checked', true as unknown as string)
        p.setAttribute('big', (2n ** 60n) as unknown as string)
        p.setAttribute('bytes', new Uint8Array([1, 2, 3]) as unknown as string)
      },
    ],
    [
      'maps, arrays and nested values (other shared types)',
      (doc) => {
        doc.getMap('m').set('k', { a: [1, { b: 'c' }, [[]]], d: undefined, e: -123456789 })
        doc.getArray('a').push([1, 'two', null, new Uint8Array(4)])
        doc.getText('t').insert(0, 'text')
      },
    ],
    [
      'a hook and a nested document',
      (doc) => doc.getXmlFragment(FRAGMENT_NAME).push([new Y.XmlHook('h') as unknown as Y.XmlElement]),
    ],
  ]
  for (const [name, change] of cases) {
    test(name, () => {
      const update = updateOf(base, change)
      const inserted = structsOf(update)
      expect(countUpdateWork(update, null, Number.POSITIVE_INFINITY)).toEqual({
        inserted,
        deleted: 0,
        cost: inserted,
        over: false,
      })
    })
  }

  test('an update of 20,000 list items stops counting at the limit', () => {
    const update = updateOf(base, (doc) => {
      const list = new Y.XmlElement('bulletList')
      list.insert(
        0,
        Array.from({ length: 20_000 }, () => {
          const item = new Y.XmlElement('listItem')
          item.insert(0, [paragraph('x')])
          return item
        }),
      )
      doc.getXmlFragment(FRAGMENT_NAME).push([list])
    })
    expect(structsOf(update)).toBeGreaterThan(60_000)
    expect(countUpdateWork(update, null, 1_000)).toEqual({
      inserted: 1_001,
      deleted: 0,
      cost: 1_001,
      over: true,
    })
  })
})

describe('structs deleted: counted in the live document', () => {
  test('deleting a list of 3,000 items reaches every struct of it; deleting one word reaches one', () => {
    const live = new Y.Doc()
    const list = new Y.XmlElement('bulletList')
    live.transact(() => {
      live.getXmlFragment(FRAGMENT_NAME).push([paragraph('keep this'), list])
      list.insert(
        0,
        Array.from({ length: 3_000 }, () => {
          const item = new Y.XmlElement('listItem')
          item.insert(0, [paragraph('x')])
          return item
        }),
      )
    })
    const listStructs = 1 + 3_000 * 4 // the list, then per item: item, paragraph, text type, its string
    const removeList = updateOf(live, (doc) => doc.getXmlFragment(FRAGMENT_NAME).delete(1, 1))
    const work = countUpdateWork(removeList, live, Number.POSITIVE_INFINITY)
    expect(work?.inserted).toBe(0)
    expect(work?.deleted).toBe(listStructs)
    expect(work?.cost).toBe(listStructs * DELETED_STRUCT_COST)
    expect(countUpdateWork(removeList, live, 500)?.over).toBe(true)
    const removeWord = updateOf(live, (doc) => {
      const p = doc.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement
      ;(p.get(0) as Y.XmlText).delete(0, 5)
    })
    expect(countUpdateWork(removeWord, live, Number.POSITIVE_INFINITY)).toEqual({
      inserted: 0,
      deleted: 1,
      cost: DELETED_STRUCT_COST,
      over: false,
    })
  })

  test('a delete set naming content the document does not have reaches nothing', () => {
    const other = new Y.Doc()
    other.getXmlFragment(FRAGMENT_NAME).push([paragraph('elsewhere')])
    const update = updateOf(other, (doc) => doc.getXmlFragment(FRAGMENT_NAME).delete(0, 1))
    expect(countUpdateWork(update, new Y.Doc(), Number.POSITIVE_INFINITY)?.deleted).toBe(0)
  })
})

test('bytes that are not an update count as nothing and say so (null)', () => {
  expect(countUpdateWork(new Uint8Array([5, 200, 200, 200]), null, 100)).toBeNull()
  expect(countUpdateWork(new Uint8Array([1, 1, 1, 0, 31]), null, 100)).toBeNull()
})
