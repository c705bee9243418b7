/**
 * edit_blocks as agents use it (issue 13, Editing): a block replaced by one of the same kind is rewritten
 * in place (a person's cursor and typing in it survive), the answer names the sections a write created,
 * and an image whose placeholder the new Markdown keeps is kept.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import * as Y from 'yjs'
import { editBlocks, fragmentToJSON, listSections, readPlainText, renderSection } from '../index.ts'
import { locateSection, locateSections } from '../sections/section-index.ts'
import { cloneDocument, expectOk, loadDocument, withDeletions } from './fixtures.ts'
import { runs } from './property-runs.ts'

const section = (fragment: Y.XmlFragment, index = 1) => listSections(fragment)[index]!
/** Block n of section 1 as a section read shows it, without its `[n] ` label. */
/**
 * A document of `markdown` whose first section starts with a list or a table (the fragment's element 2):
 * that element and its children as they were, after `edit` is applied to the section at its rev.
 */
function editContainer(markdown: string, edit: Parameters<typeof editBlocks>[3]) {
  const { fragment } = loadDocument('Doc', markdown)
  const element = fragment.get(2) as Y.XmlElement
  const children = element.toArray()
  const s = section(fragment)
  expectOk(editBlocks(fragment, s.sectionId, s.rev, edit))
  return { fragment, element, children }
}

function shown(fragment: Y.XmlFragment, n: number): string {
  const text = expectOk(renderSection(fragment, section(fragment).sectionId)).text
  const start = text.indexOf(`[${n}] `) + `[${n}] `.length
  const end = text.indexOf(`\n\n[${n + 1}] `)
  return text.slice(start, end < 0 ? undefined : end)
}

describe('a block replaced by one of the same kind is rewritten in place', () => {
  test('the paragraph keeps its Yjs element and text, and a cursor inside it stays on its word', () => {
    const { doc, fragment } = loadDocument('Doc', '## S\n\nThe quick brown fox.\n\nnext')
    const paragraph = fragment.get(2) as Y.XmlElement
    const text = paragraph.get(0) as Y.XmlText
    const cursor = Y.createRelativePositionFromTypeIndex(text, 'The quick brown '.length)
    const s = section(fragment)
    expectOk(
      editBlocks(fragment, s.sectionId, s.rev, { removeBlocks: [1], markdown: 'The slow brown **fox**.' }),
    )
    expect(fragment.get(2)).toBe(paragraph)
    expect(paragraph.get(0)).toBe(text)
    expect(readPlainText(fragment).split('\n')[2]).toBe('The slow brown fox.')
    expect(Y.createAbsolutePositionFromRelativePosition(cursor, doc)!.index).toBe('The slow brown '.length)
    expect(shown(fragment, 1)).toBe('The slow brown **fox**.')
  })

  test('keystrokes a person made in the block just before the edit reached the server are kept', () => {
    const server = loadDocument('Doc', '## S\n\nThe quick brown fox.\n\nnext')
    const person = cloneDocument(server.doc)
    const s = section(server.fragment)
    expectOk(
      editBlocks(server.fragment, s.sectionId, s.rev, { removeBlocks: [1], markdown: 'The slow brown fox.' }),
    )
    const typed = (person.fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText
    typed.insert('The quick brown fox'.length, ' jumps')
    Y.applyUpdate(person.doc, Y.encodeStateAsUpdate(server.doc, Y.encodeStateVector(person.doc)))
    Y.applyUpdate(server.doc, Y.encodeStateAsUpdate(person.doc, Y.encodeStateVector(server.doc)))
    expect(readPlainText(server.fragment).split('\n')[2]).toBe('The slow brown fox jumps.')
    expect(readPlainText(person.fragment)).toBe(readPlainText(server.fragment))
  })

  test('ticking one checkbox by resending the list changes that item only; the others keep their elements', () => {
    const {
      fragment,
      element: list,
      children: items,
    } = editContainer('## S\n\n- [ ] one\n- [ ] two\n- [ ] three', {
      removeBlocks: [1],
      markdown: '- [ ] one\n- [x] two\n- [ ] three',
    })
    expect(fragment.get(2)).toBe(list)
    expect(list.toArray()).toEqual(items)
    expect((items[1] as Y.XmlElement).getAttribute('checked') as unknown).toBe(true)
    expect(shown(fragment, 1)).toBe('- [ ] one\n- [x] two\n- [ ] three')
  })

  test('an item inserted in the middle of a list is an insertion: the items after it keep their elements', () => {
    const {
      fragment,
      element: list,
      children: [a, b, c],
    } = editContainer('## S\n\n- a\n- b\n- c', { removeBlocks: [1], markdown: '- a\n- new\n- b\n- c' })
    const after = list.toArray()
    expect([after[0], after[2], after[3]]).toEqual([a, b, c])
    expect(shown(fragment, 1)).toBe('- a\n- new\n- b\n- c')
  })

  test('items holding a line break or an image pair as equal too, so an insertion before them keeps them', () => {
    const { fragment } = loadDocument(
      'Doc',
      '## S\n\n- a\n- two  \n  lines\n- pic\n\n  ![p](https://x.org/p.png)',
    )
    const list = fragment.get(2) as Y.XmlElement
    const [a, two, pic] = list.toArray() as Y.XmlElement[]
    const secondItemText = (two!.get(0) as Y.XmlElement).toArray()
    const s = section(fragment)
    const before = shown(fragment, 1)
    expectOk(
      editBlocks(fragment, s.sectionId, s.rev, {
        removeBlocks: [1],
        markdown: before.replace('- a\n', '- a\n- new\n'),
      }),
    )
    expect(list.toArray()).toEqual([a, expect.anything(), two, pic])
    expect((two!.get(0) as Y.XmlElement).toArray()).toEqual(secondItemText)
    expect(shown(fragment, 1)).toBe(before.replace('- a\n', '- a\n- new\n'))
  })

  test('a paragraph with a line break, with a new one written before it, keeps its element', () => {
    const { fragment } = loadDocument('Doc', '## S\n\ntwo  \nlines\n\nnext')
    const paragraph = fragment.get(2) as Y.XmlElement
    const s = section(fragment)
    const before = shown(fragment, 1)
    expectOk(editBlocks(fragment, s.sectionId, s.rev, { removeBlocks: [1], markdown: `new\n\n${before}` }))
    expect(fragment.get(3)).toBe(paragraph)
    expect(shown(fragment, 2)).toBe(before)
  })

  test('a block of another kind replaces it (the old one is deleted)', () => {
    const { fragment } = loadDocument('Doc', '## S\n\ntext\n\nnext')
    const old = fragment.get(2)
    const s = section(fragment)
    expectOk(editBlocks(fragment, s.sectionId, s.rev, { removeBlocks: [1], markdown: '> quoted' }))
    expect(fragment.get(2)).not.toBe(old)
    expect(shown(fragment, 1)).toBe('> quoted')
  })
})

describe('the answer names the sections a write created', () => {
  test('inserting a subsection answers its id and rev, and the edited section rev', () => {
    const { fragment } = loadDocument('Doc', '## S\n\none\n\ntwo\n\n## T\n\nother')
    const s = section(fragment)
    const result = expectOk(
      editBlocks(fragment, s.sectionId, s.rev, { afterBlock: 1, markdown: '### Sub A\n\nbody\n\n### Sub B' }),
    )
    const sections = listSections(fragment)
    expect(sections.map((x) => x.title)).toEqual(['Doc', 'S', 'Sub A', 'Sub B', 'T'])
    expect(result.rev).toBe(sections[1]!.rev)
    expect(result.created).toEqual([
      { sectionId: sections[2]!.sectionId, rev: sections[2]!.rev },
      { sectionId: sections[3]!.sectionId, rev: sections[3]!.rev },
    ])
    // "two" now belongs to Sub B: its rev covers it.
    expect(sections[3]!.blockCount).toBe(1)
  })

  test('an edit without headings creates none', () => {
    const { fragment } = loadDocument('Doc', '## S\n\none')
    const s = section(fragment)
    expect(expectOk(editBlocks(fragment, s.sectionId, s.rev, { markdown: 'two' })).created).toEqual([])
  })
})

describe('an image whose placeholder the Markdown keeps is kept', () => {
  const md = '## S\n\n- item one\n\n  ![pic](https://x.org/p.png)\n- two'
  test('editing a list that holds an image keeps the image, without allow_media_removal', () => {
    const { fragment } = loadDocument('Doc', md)
    const before = shown(fragment, 1)
    expect(before).toContain('[image: pic]')
    const s = section(fragment)
    expectOk(
      editBlocks(fragment, s.sectionId, s.rev, {
        removeBlocks: [1],
        markdown: before.replace('two', 'second'),
      }),
    )
    const list = fragmentToJSON(fragment).content![2]!
    expect(list.content![0]!.content![1]).toEqual({
      type: 'image',
      attrs: { src: 'https://x.org/p.png', alt: 'pic' },
    })
    expect(shown(fragment, 1)).toBe(before.replace('two', 'second'))
  })

  test('dropping the placeholder still needs allow_media_removal', () => {
    const { fragment } = loadDocument('Doc', md)
    const s = section(fragment)
    const refused = editBlocks(fragment, s.sectionId, s.rev, {
      removeBlocks: [1],
      markdown: '- item one\n- two',
    })
    expect(refused.kind === 'error' && refused.reason).toBe('media_removal_needs_flag')
  })
})

describe('inBlock: one item of a list or one row of a table', () => {
  test('ticking one checkbox sends that item only; the other items are untouched', () => {
    const {
      fragment,
      element: list,
      children: items,
    } = editContainer('## S\n\n- [ ] one\n- [ ] two\n- [ ] three\n\nafter', {
      inBlock: 1,
      removeBlocks: [2],
      markdown: '- [x] two',
    })
    expect(list.toArray()).toEqual(items)
    expect(shown(fragment, 1)).toBe('- [ ] one\n- [x] two\n- [ ] three')
  })

  test('adding one table row sends that row only, after the line named (the | - | line is line 2)', () => {
    const {
      fragment,
      element: table,
      children: rows,
    } = editContainer('## S\n\n| a | b |\n| - | - |\n| 1 | 2 |\n| 5 | 6 |', {
      inBlock: 1,
      afterBlock: 3,
      markdown: '| 3 | 4 |',
    })
    expect(shown(fragment, 1)).toBe('| a | b |\n| - | - |\n| 1 | 2 |\n| 3 | 4 |\n| 5 | 6 |')
    expect([table.get(0), table.get(1), table.get(3)] as unknown[]).toEqual(rows)
  })

  test('the header row rewritten in place stays the header', () => {
    const { fragment } = loadDocument('Doc', '## S\n\n| a | b |\n| - | - |\n| 1 | 2 |')
    const s = section(fragment)
    expectOk(
      editBlocks(fragment, s.sectionId, s.rev, { inBlock: 1, removeBlocks: [1], markdown: '| A | b |' }),
    )
    const table = fragment.get(2) as Y.XmlElement
    expect((table.get(0) as Y.XmlElement).toArray().map((cell) => (cell as Y.XmlElement).nodeName)).toEqual([
      'tableHeader',
      'tableHeader',
    ])
    expect(shown(fragment, 1)).toBe('| A | b |\n| - | - |\n| 1 | 2 |')
  })

  test('an item of a numbered list is removed and another inserted before the first', () => {
    const { fragment } = loadDocument('Doc', '## S\n\n1. a\n2. b\n3. c')
    let s = section(fragment)
    expectOk(editBlocks(fragment, s.sectionId, s.rev, { inBlock: 1, removeBlocks: [2] }))
    s = section(fragment)
    expectOk(editBlocks(fragment, s.sectionId, s.rev, { inBlock: 1, afterBlock: 0, markdown: '1. zero' }))
    expect(shown(fragment, 1)).toBe('1. zero\n2. a\n3. c')
  })

  describe('refusals name what to do', () => {
    const refusal = (markdown: string, input: Parameters<typeof editBlocks>[3]) => {
      const { fragment } = loadDocument('Doc', markdown)
      const s = section(fragment)
      const result = editBlocks(fragment, s.sectionId, s.rev, input)
      return result.kind === 'error' ? `${result.reason}: ${result.message}` : 'ok'
    }
    test('a paragraph has no items', () =>
      expect(refusal('## S\n\ntext', { inBlock: 1, markdown: '- x' })).toStartWith(
        'not_a_container: inBlock: block 1 is a paragraph; inBlock edits the items of a list or the rows of a table.',
      ))
    test('a bullet item into a task list', () =>
      expect(refusal('## S\n\n- [ ] a', { inBlock: 1, markdown: '- b' })).toBe(
        'not_items: markdown: block 1 is a taskList, so give only its items, each written "- [ ] text".',
      ))
    test('removing every item', () =>
      expect(refusal('## S\n\n- a\n- b', { inBlock: 1, removeBlocks: [1, 2] })).toStartWith(
        'container_emptied: removeBlocks: that removes every one of the 2 items of block 1;',
      ))
    test('a row wider than the table (GFM would drop its extra cells)', () =>
      expect(
        refusal('## S\n\n| a | b |\n| - | - |\n| 1 | 2 |', { inBlock: 1, markdown: '| 3 | 4 | 5 |' }),
      ).toBe(
        "row_too_wide: markdown: row 1 has more cells than the table's 2 columns; give 2 cells per row.",
      ))
    test('an item number out of range', () =>
      expect(refusal('## S\n\n- a\n- b', { inBlock: 1, removeBlocks: [3] })).toBe(
        'block_out_of_range: removeBlocks: 3 not in 1..2; block 1 shows 2 lines (items and rows start on lines 1, 2).',
      ))
  })
})

describe('locateSection (what every section read and edit starts from)', () => {
  test('equals the section locateSections lists for every id, also after deletions with deleted items kept (generated documents)', () => {
    const block = fc.constantFrom('## A', '### B', 'text', '- item', '> quote')
    fc.assert(
      fc.property(fc.array(block, { maxLength: 12 }), fc.nat(), fc.nat(), (blocks, cut, at) => {
        const { fragment, ids } = withDeletions(blocks, cut, at)
        for (const id of [...ids, 'not-an-id', ''])
          expect(locateSection(fragment, id)).toEqual(
            locateSections(fragment).find((section) => id !== '' && section.sectionId === id),
          )
      }),
      runs(80),
    )
  })
})
