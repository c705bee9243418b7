import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import * as Y from 'yjs'
import {
  appendMarkdown,
  editBlocks,
  FRAGMENT_NAME,
  fragmentToJSON,
  listSections,
  readPlainText,
  renderSection,
  replaceText,
} from '../index.ts'
import type { RefusalReason, Result } from '../result.ts'
import { cloneDocument, expectOk, loadDocument, UNICODE_WORDS } from './fixtures.ts'
import { runs } from './property-runs.ts'

const MD = '## S\n\none\n\ntwo\n\nthree\n\n![pic](https://x.org/p.png)\n\n## T\n\nother'
const section = (fragment: Y.XmlFragment, index = 1) => listSections(fragment)[index]!
const blockTexts = (fragment: Y.XmlFragment) => readPlainText(fragment).split('\n')

describe('editBlocks', () => {
  test('removes and inserts exactly the targeted blocks; untouched blocks keep their Yjs identity', () => {
    const { fragment } = loadDocument('Doc', MD)
    const s = section(fragment)
    const before = fragment.toArray()
    const result = expectOk(
      editBlocks(fragment, s.sectionId, s.rev, { removeBlocks: [2], markdown: 'TWO\n\n### sub' }),
    )
    expect(blockTexts(fragment)).toEqual(['Doc', 'S', 'one', 'TWO', 'sub', 'three', 'pic', 'T', 'other'])
    const after = fragment.toArray()
    expect(after[2]).toBe(before[2]!) // one
    expect(after[5]).toBe(before[4]!) // three
    expect(after[7]).toBe(before[6]!) // ## T
    expect(result.rev).toBe(section(fragment).rev)
    expect(result.rev).not.toBe(s.rev)
  })

  test('afterBlock 0 inserts right after the heading; default inserts at the end of the section', () => {
    const { fragment } = loadDocument('Doc', MD)
    let s = section(fragment)
    expectOk(editBlocks(fragment, s.sectionId, s.rev, { afterBlock: 0, markdown: 'zero' }))
    s = section(fragment)
    expectOk(editBlocks(fragment, s.sectionId, s.rev, { markdown: 'last' }))
    expect(blockTexts(fragment)).toEqual([
      'Doc',
      'S',
      'zero',
      'one',
      'two',
      'three',
      'pic',
      'last',
      'T',
      'other',
    ])
  })

  test('one transaction per edit', () => {
    const { doc, fragment } = loadDocument('Doc', MD)
    const s = section(fragment)
    let updates = 0
    doc.on('update', () => updates++)
    expectOk(editBlocks(fragment, s.sectionId, s.rev, { removeBlocks: [1, 3], markdown: 'x' }))
    expect(updates).toBe(1)
  })

  test('an edit changes exactly the targeted blocks (generated edits)', () => {
    fc.assert(
      fc.property(
        fc.subarray([1, 2, 3]),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        (remove, afterBlock, insert) => {
          const { fragment } = loadDocument('Doc', '## S\n\nb1\n\nb2\n\nb3\n\n## T\n\nt1')
          const s = section(fragment)
          const old = fragment.toArray()
          const result = editBlocks(fragment, s.sectionId, s.rev, {
            removeBlocks: remove,
            afterBlock,
            markdown: insert ? 'new' : undefined,
          })
          if (remove.length === 0 && !insert) {
            expect(result.kind === 'error' && result.reason).toBe('nothing_to_change')
            return
          }
          expectOk(result)
          const expected = ['b1', 'b2', 'b3'].map((text, i) => ({
            text,
            keep: !remove.includes(i + 1),
            el: old[i + 2],
          }))
          const kept = expected.filter((block) => block.keep)
          const at = kept.filter((block) => expected.indexOf(block) < afterBlock).length
          const texts = kept.map((block) => block.text)
          if (insert) texts.splice(at, 0, 'new')
          expect(blockTexts(fragment)).toEqual(['Doc', 'S', ...texts, 'T', 't1'])
          const now = fragment.toArray()
          for (const block of kept) expect(now).toContain(block.el!)
          expect(now[0]).toBe(old[0]!)
          expect(now.at(-1)).toBe(old.at(-1)!)
          expect(now.at(-2)).toBe(old.at(-2)!)
        },
      ),
      runs(60),
    )
  })

  describe('named refusals (and nothing changes)', () => {
    const refused = (
      run: (fragment: Y.XmlFragment, id: string, rev: string) => unknown,
      reason: RefusalReason,
    ) => {
      const { doc, fragment } = loadDocument('Doc', MD)
      const s = section(fragment)
      const state = Y.encodeStateVector(doc)
      const result = run(fragment, s.sectionId, s.rev) as Result<unknown>
      expect(result.kind === 'error' && result.reason).toBe(reason)
      expect(Y.encodeStateVector(doc)).toEqual(state)
    }
    test('stale_rev', () =>
      refused((f, id) => editBlocks(f, id, '000000000000', { markdown: 'x' }), 'stale_rev'))
    test('section_not_found', () =>
      refused((f, _id, rev) => editBlocks(f, 'missing', rev, { markdown: 'x' }), 'section_not_found'))
    test('block_out_of_range', () =>
      refused((f, id, rev) => editBlocks(f, id, rev, { removeBlocks: [9] }), 'block_out_of_range'))
    test('block_out_of_range for afterBlock', () =>
      refused((f, id, rev) => editBlocks(f, id, rev, { afterBlock: 5, markdown: 'x' }), 'block_out_of_range'))
    test('media_removal_needs_flag', () =>
      refused((f, id, rev) => editBlocks(f, id, rev, { removeBlocks: [4] }), 'media_removal_needs_flag'))
    test('heading_too_shallow', () =>
      refused((f, id, rev) => editBlocks(f, id, rev, { markdown: '## same level' }), 'heading_too_shallow'))
    test('nothing_to_change', () => refused((f, id, rev) => editBlocks(f, id, rev, {}), 'nothing_to_change'))
    test('markdown refusals pass through (empty)', () =>
      refused((f, id, rev) => editBlocks(f, id, rev, { markdown: '  ' }), 'empty'))
    test('detached', () => {
      const result = editBlocks(new Y.XmlFragment(), 'x', 'y', { markdown: 'x' })
      expect(result.kind === 'error' && result.reason).toBe('detached')
    })
    test('with the flag, media can be removed', () => {
      const { fragment } = loadDocument('Doc', MD)
      const s = section(fragment)
      expectOk(editBlocks(fragment, s.sectionId, s.rev, { removeBlocks: [4], allowMediaRemoval: true }))
      expect(blockTexts(fragment)).not.toContain('pic')
    })
  })
})

describe('replaceText', () => {
  test('changes text inside the one Y.XmlText, keeping formatting around it', () => {
    const { fragment } = loadDocument('Doc', '## S\n\nkeep **bold part** and *it*')
    const s = section(fragment)
    const paragraph = fragment.get(2) as Y.XmlElement
    const text = paragraph.get(0) as Y.XmlText
    expectOk(replaceText(fragment, s.sectionId, s.rev, 'part', 'piece'))
    expect(paragraph.get(0)).toBe(text)
    expect(fragmentToJSON(fragment).content![2]!.content).toEqual([
      { type: 'text', text: 'keep ' },
      { type: 'text', text: 'bold piece', marks: [{ type: 'bold' }] },
      { type: 'text', text: ' and ' },
      { type: 'text', text: 'it', marks: [{ type: 'italic' }] },
    ])
  })

  test('text replacing unformatted text after a mark does not inherit the mark', () => {
    const { fragment } = loadDocument('Doc', '## S\n\n**b**plain')
    const s = section(fragment)
    expectOk(replaceText(fragment, s.sectionId, s.rev, 'plain', 'new'))
    expect(fragmentToJSON(fragment).content![2]!.content).toEqual([
      { type: 'text', text: 'b', marks: [{ type: 'bold' }] },
      { type: 'text', text: 'new' },
    ])
  })

  test('Unicode text is found and replaced whole', () => {
    const text = UNICODE_WORDS.join(' ')
    const { fragment } = loadDocument('Doc', `## S\n\nbefore ${text} after`)
    const s = section(fragment)
    expectOk(replaceText(fragment, s.sectionId, s.rev, text, '👍🏽'))
    expect(blockTexts(fragment)[2]).toBe('before 👍🏽 after')
  })

  describe('named refusals, with the count', () => {
    const { fragment } = loadDocument('Doc', '## S\n\nan apple and an apple\n\n```\ncode\n```')
    const s = section(fragment)
    const code = (result: ReturnType<typeof replaceText>) => (result.kind === 'error' ? result.reason : 'ok')
    test('text_not_found (count 0)', () => {
      const result = replaceText(fragment, s.sectionId, s.rev, 'pear', 'x')
      expect(code(result)).toBe('text_not_found')
      expect(result.kind === 'error' && result.message).toContain('count 0')
    })
    test('text_ambiguous (count 2)', () => {
      const result = replaceText(fragment, s.sectionId, s.rev, 'apple', 'x')
      expect(code(result)).toBe('text_ambiguous')
      expect(result.kind === 'error' && result.message).toContain('count 2')
    })
    test('empty_old_text', () =>
      expect(code(replaceText(fragment, s.sectionId, s.rev, '', 'x'))).toBe('empty_old_text'))
    test('nothing_to_change', () =>
      expect(code(replaceText(fragment, s.sectionId, s.rev, 'an', 'an'))).toBe('nothing_to_change'))
    test('newline_in_text (allowed in code blocks)', () => {
      expect(code(replaceText(fragment, s.sectionId, s.rev, 'an apple and', 'a\nb'))).toBe('newline_in_text')
      expect(code(replaceText(fragment, s.sectionId, s.rev, 'code', 'a\nb'))).toBe('ok')
    })
    test('stale_rev', () =>
      expect(code(replaceText(fragment, s.sectionId, 'aaaaaaaaaaaa', 'x', 'y'))).toBe('stale_rev'))
    test('a refusal names the field at fault in `field`, the word its message starts with', () => {
      const cases = [
        replaceText(fragment, s.sectionId, s.rev, '', 'x'),
        replaceText(fragment, s.sectionId, s.rev, 'an', 'an'),
        replaceText(fragment, s.sectionId, 'aaaaaaaaaaaa', 'x', 'y'),
        replaceText(fragment, 'no-such-id', s.rev, 'x', 'y'),
      ]
      expect(cases.map((r) => r.kind === 'error' && r.field)).toEqual([
        'oldText',
        'newText',
        'rev',
        'section_id',
      ])
      for (const r of cases) expect(r.kind === 'error' && r.message.startsWith(`${r.field}: `)).toBe(true)
    })
  })
})

describe('appendMarkdown', () => {
  test('appends at the end and returns the last section, every section it created, and the one it changed', () => {
    const { fragment } = loadDocument('Doc', MD)
    const result = expectOk(appendMarkdown(fragment, 'more\n\n## Mid\n\n## New\n\nend'))
    const [previous, mid, last] = listSections(fragment)
      .slice(-3)
      .map(({ sectionId, rev }) => ({ sectionId, rev }))
    expect(result).toEqual({ ...last!, created: [mid!, last!], changed: previous! })
    expect(listSections(fragment).at(-1)!.title).toBe('New')
    expect(blockTexts(fragment).slice(-5)).toEqual(['other', 'more', 'Mid', 'New', 'end'])
    // Without headings: the end is the last section, nothing is created.
    const plain = expectOk(appendMarkdown(fragment, 'tail'))
    const end = listSections(fragment).at(-1)!
    expect(plain).toEqual({ sectionId: end.sectionId, rev: end.rev, created: [] })
  })

  test('into an empty document it needs the title first (missing_title), then accepts it', () => {
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const missing = appendMarkdown(fragment, 'no title')
    expect(missing.kind === 'error' && missing.reason).toBe('missing_title')
    expectOk(appendMarkdown(fragment, '# Title\n\nbody'))
    expect(blockTexts(fragment)).toEqual(['Title', 'body'])
    const h1 = appendMarkdown(fragment, '# Second title')
    expect(h1.kind === 'error' && h1.reason).toBe('h1_not_allowed')
  })
})

describe('concurrent edit and typing', () => {
  test('an agent edit and a person typing in another block converge with both changes, in either order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom('typed', '👩‍👩‍👧‍👦', 'שלום'),
        fc.boolean(),
        (typedBlock, editedBlock, typed, agentFirst) => {
          fc.pre(typedBlock !== editedBlock)
          const server = loadDocument('Doc', '## S\n\nb1\n\nb2\n\nb3\n\nb4')
          const person = cloneDocument(server.doc)
          const s = section(server.fragment)
          expectOk(
            editBlocks(server.fragment, s.sectionId, s.rev, {
              removeBlocks: [editedBlock],
              markdown: 'replaced',
            }),
          )
          const typedText = (person.fragment.get(1 + typedBlock) as Y.XmlElement).get(0) as Y.XmlText
          typedText.insert(2, typed)
          const agentUpdate = Y.encodeStateAsUpdate(server.doc, Y.encodeStateVector(person.doc))
          const personUpdate = Y.encodeStateAsUpdate(person.doc, Y.encodeStateVector(server.doc))
          if (agentFirst) {
            Y.applyUpdate(person.doc, agentUpdate)
            Y.applyUpdate(server.doc, personUpdate)
          } else {
            Y.applyUpdate(server.doc, personUpdate)
            Y.applyUpdate(person.doc, agentUpdate)
          }
          const expected = ['b1', 'b2', 'b3', 'b4'].map((text, i) =>
            i + 1 === typedBlock ? `b${i + 1}${typed}` : text,
          )
          expected[editedBlock - 1] = 'replaced'
          expect(blockTexts(server.fragment)).toEqual(['Doc', 'S', ...expected])
          expect(blockTexts(person.fragment)).toEqual(blockTexts(server.fragment))
        },
      ),
      runs(40),
    )
  })

  test('a stale rev after someone else edits the section is refused', () => {
    const { fragment } = loadDocument('Doc', MD)
    const s = section(fragment)
    expectOk(renderSection(fragment, s.sectionId))
    ;((fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'x')
    const result = editBlocks(fragment, s.sectionId, s.rev, { markdown: 'y' })
    expect(result.kind === 'error' && result.reason).toBe('stale_rev')
  })
})
