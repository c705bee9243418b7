/**
 * The event loop's measuring of section totals after a store (`outlineMeasureSteps` with `maxItems`) leaves
 * out a block dearer than that many Yjs items: one step renders one block whole, and the red team's
 * paragraph of 10,000 marks (~30,000 items) held the server's event loop 100-800 ms after every edit of it.
 * The small blocks around it are still measured, the dear block's section is measured when asked
 * (its total exact), and `elementItemsOver` counts items not deleted, nested ones included. On the old code
 * the limit was ignored and the dense paragraph rendered: fails.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { FRAGMENT_NAME } from '../limits.ts'
import { memoSectionTotal } from '../sections/live-memo.ts'
import { locateSections } from '../sections/section-index.ts'
import { elementItemsOver, measuredElements, sectionReadLength } from '../sections/section-total.ts'
import { outlineMeasureSteps } from '../sections/stored-totals.ts'

/** An empty paragraph (its text filled by `fill` once it is in a document). */
function paragraph(): Y.XmlElement {
  const element = new Y.XmlElement('paragraph')
  element.insert(0, [new Y.XmlText()])
  return element
}

/**
 * `runs` one-letter runs, alternating bold and italic when `marked`: one delta, the same items as a run
 * inserted at the end at a time (10,000 such inserts took ~5 s).
 */
function fill(element: Y.XmlElement, runs: number, marked: boolean): void {
  const text = element.get(0) as Y.XmlText
  text.applyDelta(
    Array.from({ length: runs }, (_, i) => ({
      insert: String.fromCharCode(97 + (i % 26)),
      ...(marked ? { attributes: i % 2 ? { italic: {} } : { bold: {} } } : {}),
    })),
  )
}

describe('measuring after a store leaves dear blocks out', () => {
  test('elementItemsOver counts items not deleted, nested included, and stops past the limit', () => {
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const list = new Y.XmlElement('bulletList')
    const item = new Y.XmlElement('listItem')
    list.insert(0, [item])
    fragment.push([list])
    item.insert(0, [paragraph()])
    const text = (item.get(0) as Y.XmlElement).get(0) as Y.XmlText
    text.insert(0, 'abc') // one item: listItem, paragraph, text, "abc" make four
    expect(elementItemsOver(list, 4)).toBe(false)
    expect(elementItemsOver(list, 3)).toBe(true)
    text.delete(0, 3) // deleted items do not count
    expect(elementItemsOver(list, 3)).toBe(false)
  })

  test('a paragraph of 10,000 marks is not rendered; the small blocks are; its section is measured when asked, exactly', () => {
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const heading = new Y.XmlElement('heading')
    heading.setAttribute('level', 1 as never)
    heading.setAttribute('id', 'h-dense0001' as never)
    const title = new Y.XmlText()
    heading.insert(0, [title])
    const blocks = [paragraph(), paragraph(), paragraph()]
    fragment.push([heading, ...blocks])
    title.insert(0, 'Dense')
    doc.transact(() => {
      fill(blocks[0]!, 10, false)
      fill(blocks[1]!, 10_000, true)
      fill(blocks[2]!, 10, false)
    })
    const before = measuredElements()
    let steps = 0
    for (const measured of outlineMeasureSteps(fragment, 2_000)) if (measured) steps++
    // The heading and the two small paragraphs, not the dense one.
    expect(steps).toBe(3)
    expect(measuredElements() - before).toBe(3)
    const [section] = locateSections(fragment)
    expect(memoSectionTotal(fragment, section!, true)).toBeUndefined()
    const total = memoSectionTotal(fragment, section!)
    expect(total).toBe(sectionReadLength(section!.heading, section!.blocks))
    expect(total).toBeGreaterThan(30_000)
  })
})
