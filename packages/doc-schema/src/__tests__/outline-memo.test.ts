import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { appendMarkdown } from '../edits/append-markdown.ts'
import { editBlocks } from '../edits/edit-blocks.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { type OutlineNode, readOutline } from '../sections/outline.ts'
import { createOutlineMemo } from '../sections/outline-memo.ts'
import { listSections, locateSections } from '../sections/section-index.ts'
import { sectionStats } from '../sections/section-rev.ts'
import { seededRandom } from './seeded-random.ts'

function seeded(doc: Y.Doc) {
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const body = Array.from(
    { length: 8 },
    (_, i) => `## Part ${i}\n\npara ${i}\n\n- item ${i}\n- more\n\n### Sub ${i}\n\ntext ${i}`,
  )
  const appended = appendMarkdown(fragment, `# Title\n\nintro\n\n${body.join('\n\n')}`)
  if (appended.kind === 'error') throw new Error(appended.message)
  return fragment
}

/** Each section's size in document order, from the outline. */
const sizesOf = (roots: readonly OutlineNode[]): number[] =>
  roots.flatMap((node) => [node.size, ...sizesOf(node.children)])

/** Each section's size counted afresh from the fragment, without any memo. */
const freshSizes = (fragment: Y.XmlFragment): number[] =>
  locateSections(fragment).map((section) => sectionStats(section.heading, section.blocks).size)

describe('createOutlineMemo', () => {
  test('equals a fresh readOutline after each of many random edits (typing, marks, attributes, block edits)', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rng = seededRandom(seed)
      const doc = new Y.Doc()
      const fragment = seeded(doc)
      const memo = createOutlineMemo(fragment)
      expect(memo.outline()).toEqual(readOutline(fragment))
      for (let step = 0; step < 150; step++) {
        const children = fragment.toArray().filter((c): c is Y.XmlElement => c instanceof Y.XmlElement)
        const target = children[Math.floor(rng() * children.length)]!
        const r = rng()
        if (r < 0.3) {
          // Type into the first text found under the block (a heading title or a paragraph).
          let node: Y.XmlElement | Y.XmlText = target
          while (node instanceof Y.XmlElement && node.length > 0)
            node = node.get(0) as Y.XmlElement | Y.XmlText
          if (node instanceof Y.XmlText) node.insert(Math.floor(rng() * (node.length + 1)), 'x')
        } else if (r < 0.4) {
          let node: Y.XmlElement | Y.XmlText = target
          while (node instanceof Y.XmlElement && node.length > 0)
            node = node.get(0) as Y.XmlElement | Y.XmlText
          if (node instanceof Y.XmlText && node.length > 0) node.format(0, 1, { bold: true })
        } else if (r < 0.5 && target.nodeName === 'heading') {
          target.setAttribute('level', String(1 + Math.floor(rng() * 4)) as never)
        } else if (r < 0.65 && children.length > 3) {
          const index = fragment.toArray().indexOf(target)
          if (index > 0) fragment.delete(index, 1)
        } else if (r < 0.8) {
          const appended = appendMarkdown(fragment, rng() < 0.5 ? 'tail paragraph' : `## New ${step}\n\nbody`)
          if (appended.kind === 'error') throw new Error(appended.message)
        } else {
          const sections = listSections(fragment).filter((s) => s.blockCount > 0 && s.sectionId !== '')
          const section = sections[Math.floor(rng() * sections.length)]
          if (section) {
            const edited = editBlocks(fragment, section.sectionId, section.rev, {
              removeBlocks: [1],
              markdown: `replaced ${step}`,
            })
            if (edited.kind === 'error') throw new Error(edited.message)
          }
        }
        if (rng() < 0.7) {
          expect(memo.outline()).toEqual(readOutline(fragment))
          expect(sizesOf(memo.outline())).toEqual(freshSizes(fragment))
        }
      }
      expect(memo.outline()).toEqual(readOutline(fragment))
      expect(sizesOf(memo.outline())).toEqual(freshSizes(fragment))
      memo.destroy()
      doc.destroy()
    }
  })

  test('changes made by another replica (an applied update) are seen', () => {
    const a = new Y.Doc()
    const fa = seeded(a)
    const b = new Y.Doc()
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
    const fb = b.getXmlFragment(FRAGMENT_NAME)
    const memo = createOutlineMemo(fb)
    const before = memo.outline()
    const para = fa.get(1) as Y.XmlElement
    ;(para.get(0) as Y.XmlText).insert(0, 'remote ')
    const heading = fa.get(2) as Y.XmlElement
    ;(heading.get(0) as Y.XmlText).insert(0, 'Renamed ')
    Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)))
    const after = memo.outline()
    expect(after).toEqual(readOutline(fb))
    expect(after).not.toEqual(before)
    // Both typed-into sections grew by what was typed; the others kept their size.
    const grown = sizesOf(after).map((size, i) => size - sizesOf(before)[i]!)
    expect(grown).toEqual(
      sizesOf(before).map((_, i) => (i === 0 ? 'remote '.length : i === 1 ? 'Renamed '.length : 0)),
    )
    memo.destroy()
  })
})
