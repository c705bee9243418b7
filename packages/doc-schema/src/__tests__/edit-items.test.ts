/**
 * inBlock numbers the lines of a block as a section read prints them (issue 26, item 4): every number here
 * is taken from the read's own text (renderSection), the edit is made with it, and the block is read again
 * to check that exactly that line changed. A replaced item keeps what its Markdown does not write out.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { editBlocks, importedDocumentUpdate, importMarkdown, listSections, renderSection } from '../index.ts'
import { FRAGMENT_NAME, MAX_IN_BLOCK_CHARS } from '../limits.ts'
import { expectOk, loadDocument } from './fixtures.ts'

type Edit = Parameters<typeof editBlocks>[3]

/** The lines of block `n` of the document's first section as its read shows them (after `[n] `). */
function readLines(fragment: Y.XmlFragment, n = 1, maxChars?: number): string[] {
  const section = listSections(fragment)[1]!
  const text = expectOk(renderSection(fragment, section.sectionId, { maxChars })).text
  const start = text.indexOf(`[${n}] `) + `[${n}] `.length
  const end = text.indexOf(`\n\n[${n + 1}] `, start)
  return text.slice(start, end < 0 ? undefined : end).split('\n')
}

/** The number of the one line of `lines` that holds `text`, counted as printed (1 = the first). */
function lineOf(lines: readonly string[], text: string): number {
  const found = lines.flatMap((line, i) => (line.includes(text) ? [i + 1] : []))
  expect(found).toHaveLength(1)
  return found[0]!
}

/** A document whose first section holds `block`; `edit` is made from the block's lines as read. */
function edited(block: string, edit: (lines: string[]) => Edit) {
  const { fragment } = loadDocument('Doc', `## S\n\n${block}\n\nafter`)
  const before = readLines(fragment)
  const section = listSections(fragment)[1]!
  const result = editBlocks(fragment, section.sectionId, section.rev, { inBlock: 1, ...edit(before) })
  return { before, result, after: () => readLines(fragment), fragment }
}

/** Replaces the line holding `text` with `change(line)`, copied as printed; checks nothing else changed. */
function replaceLine(block: string, text: string, change: (line: string) => string) {
  const run = edited(block, (lines) => {
    const n = lineOf(lines, text)
    return { removeBlocks: [n], markdown: change(lines[n - 1]!) }
  })
  expectOk(run.result)
  const n = lineOf(run.before, text)
  const expected = [...run.before]
  expected[n - 1] = change(run.before[n - 1]!)
  expect(run.after()).toEqual(expected)
  return run
}

const refusal = (block: string, edit: (lines: string[]) => Edit) => {
  const { result } = edited(block, edit)
  return result.kind === 'error' ? `${result.reason}: ${result.message}` : 'accepted'
}

describe('a line named by the number a read prints it on changes, and nothing else', () => {
  test('table: the issue\'s edit (remove 3 = "| alpha | 1 |" as read) changes alpha, not beta', () => {
    const table = '| Option | Default |\n| - | - |\n| alpha | 1 |\n| beta | 2 |'
    const run = edited(table, () => ({ removeBlocks: [3], markdown: '| alpha | 100 |' }))
    expect(run.before[2]).toBe('| alpha | 1 |')
    expectOk(run.result)
    expect(run.after()).toEqual([run.before[0]!, run.before[1]!, '| alpha | 100 |', run.before[3]!])
    replaceLine(table, 'beta', (line) => line.replace('2', '200'))
  })

  test('table: a row inserted after the line of alpha lands under alpha', () => {
    const run = edited('| a | b |\n| - | - |\n| alpha | 1 |\n| beta | 2 |', (lines) => ({
      afterBlock: lineOf(lines, 'alpha'),
      markdown: '| new | 3 |',
    }))
    expectOk(run.result)
    expect(run.after()).toEqual([...run.before.slice(0, 3), '| new | 3 |', run.before[3]!])
  })

  test('bullet list: a nested item, copied with its indentation, changes alone', () =>
    void replaceLine('- one\n  - a\n  - b\n- two', '- b', (line) => line.replace('b', 'B')))

  test('ordered list: a nested item changes alone', () =>
    void replaceLine('1. one\n   1. a\n   2. b\n2. two', 'a', (line) => line.replace('a', 'alpha')))

  test('task list: a nested box ticked, the items around it as they were', () =>
    void replaceLine('- [ ] one\n  - [ ] a\n  - [ ] b\n- [ ] two', '[ ] a', (line) =>
      line.replace('[ ]', '[x]'),
    ))

  test('blockquote holding a list: a sub-item copied with its "> " changes alone', () =>
    void replaceLine('> - a\n> - b\n>   - c\n> - d', 'c', (line) => line.replace('c', 'see')))

  test('code block inside an item: the item after the code changes alone', () =>
    void replaceLine('- item\n\n  ```js\n  x = 1\n  ```\n- next', 'next', (line) =>
      line.replace('next', 'then'),
    ))

  test('list after paragraphs in one item: its sub-item changes alone', () =>
    void replaceLine('- para one\n\n  para two\n\n  - sub\n- last', 'sub', (line) =>
      line.replace('sub', 'SUB'),
    ))
})

describe('a replaced item keeps what its Markdown does not write out', () => {
  test('an item replaced by its own line keeps its sub-items, their Yjs elements too', () => {
    const { fragment } = loadDocument('Doc', '## S\n\n- one\n  - a\n  - b\n- two')
    const item = (fragment.get(2) as Y.XmlElement).get(0) as Y.XmlElement
    const subList = item.get(1)
    const section = listSections(fragment)[1]!
    const n = lineOf(readLines(fragment), 'one')
    expectOk(
      editBlocks(fragment, section.sectionId, section.rev, {
        inBlock: 1,
        removeBlocks: [n],
        markdown: '- ONE',
      }),
    )
    expect(readLines(fragment)).toEqual(['- ONE', '  - a', '  - b', '- two'])
    expect((fragment.get(2) as Y.XmlElement).get(0)).toBe(item)
    expect(item.get(1)).toBe(subList)
  })

  test('an item replaced by its own line keeps the code block under its text', () =>
    void replaceLine('- item\n\n  ```js\n  x = 1\n  ```\n- next', 'item', () => '- ITEM'))

  test('sub-items written under the new item replace the old ones', () => {
    const run = edited('- one\n  - a\n  - b\n- two', (lines) => ({
      removeBlocks: [lineOf(lines, 'one')],
      markdown: '- ONE\n  - z',
    }))
    expectOk(run.result)
    expect(run.after()).toEqual(['- ONE', '  - z', '- two'])
  })

  test('sub-items named with the item go; the others stay', () => {
    const run = edited('- one\n  - a\n  - b\n- two', (lines) => ({
      removeBlocks: [lineOf(lines, 'one'), lineOf(lines, '- a')],
      markdown: '- ONE',
    }))
    expectOk(run.result)
    expect(run.after()).toEqual(['- ONE', '  - b', '- two'])
  })

  test('an item removed with all its sub-items, no Markdown: those lines go', () => {
    const run = edited('- one\n  - a\n- two', (lines) => ({
      removeBlocks: [lineOf(lines, 'one'), lineOf(lines, '- a')],
    }))
    expectOk(run.result)
    expect(run.after()).toEqual(['- two'])
  })

  test('the last sub-item removed takes its emptied list with it', () => {
    const run = edited('- one\n  - a\n- two', (lines) => ({ removeBlocks: [lineOf(lines, '- a')] }))
    expectOk(run.result)
    expect(run.after()).toEqual(['- one', '- two'])
  })
})

describe('a number that names no item or row is refused with the one to use', () => {
  const table = '| Option | Default |\n| - | - |\n| alpha | 1 |\n| beta | 2 |'
  test('the table\'s "| - |" line', () =>
    expect(refusal(table, () => ({ removeBlocks: [2], markdown: '| x | y |' }))).toBe(
      'separator_line: removeBlocks: line 2 of block 1 is the table\'s "| - |" separator line, which is no row ' +
        '(the header row above it draws it); the rows are lines 1 and 3–4. To change the header, replace ' +
        'line 1; to add a row right under the header, give afterBlock: 2.',
    ))

  test('after the header row, which is before the separator', () =>
    expect(refusal(table, () => ({ afterBlock: 1, markdown: '| x | y |' }))).toStartWith(
      "separator_line: afterBlock: line 1 of block 1 is the table's header row; the line after it is the " +
        'table\'s "| - |" separator line, so no row can go there. Give afterBlock: 2',
    ))

  test('a row added after the separator line is the first row under the header', () => {
    const run = edited(table, () => ({ afterBlock: 2, markdown: '| first | 0 |' }))
    expectOk(run.result)
    expect(run.after()).toEqual([...run.before.slice(0, 2), '| first | 0 |', ...run.before.slice(2)])
  })

  test('a line of a code block inside an item names the item', () =>
    expect(
      refusal('- item\n\n  ```js\n  x = 1\n  ```\n- next', (lines) => ({
        removeBlocks: [lineOf(lines, 'x = 1')],
      })),
    ).toBe(
      'not_an_item_line: removeBlocks: line 3 of block 1 is part of the item on line 1, not an item of its ' +
        "own; to change it, replace that item: removeBlocks: [1] with the item's new Markdown.",
    ))

  test('removing an item whose sub-items are not named', () =>
    expect(refusal('- one\n  - a\n  - b\n- two', () => ({ removeBlocks: [1] }))).toBe(
      'sub_items_not_listed: removeBlocks: the item on line 1 has sub-items on lines 2, 3 that removeBlocks ' +
        'does not name; add them to remove them with the item, or give markdown to replace line 1 alone (its ' +
        'sub-items stay).',
    ))

  test('a block holding no item or row', () =>
    expect(refusal('> quoted text', () => ({ markdown: '- x' }))).toStartWith(
      'not_a_container: inBlock: block 1 is a blockquote; inBlock edits the items of a list or the rows of a table.',
    ))
})

describe('a long block is numbered as far as the lines named', () => {
  /** A document (imported, past one write's size) whose first section is one list of `count` items. */
  function longList(count: number) {
    const items = Array.from({ length: count }, (_, i) =>
      i % 50 === 7 ? `- item ${i} of the list\n  - sub of ${i}` : `- item ${i} of the list`,
    )
    const doc = new Y.Doc()
    const imported = expectOk(
      importMarkdown(`# Doc\n\n## S\n\n${items.join('\n')}\n\nafter`, { fallbackTitle: 'Doc' }),
    )
    Y.applyUpdate(doc, expectOk(importedDocumentUpdate(imported)))
    return doc.getXmlFragment(FRAGMENT_NAME)
  }

  test('an item near the end of a list longer than the first rendering, named as read, changes alone', () => {
    const fragment = longList(1_500)
    const section = listSections(fragment)[1]!
    const before = readLines(fragment, 1, 100_000)
    expect(before.join('\n').length).toBeGreaterThan(30_000)
    const n = lineOf(before, 'item 1457 ')
    expectOk(
      editBlocks(fragment, section.sectionId, section.rev, {
        inBlock: 1,
        removeBlocks: [n],
        markdown: '- item 1457 changed',
      }),
    )
    const expected = [...before]
    expected[n - 1] = '- item 1457 changed'
    expect(readLines(fragment, 1, 100_000)).toEqual(expected)
    expect(before[n]).toBe('  - sub of 1457')
  })

  test(`a line past MAX_IN_BLOCK_CHARS (${MAX_IN_BLOCK_CHARS}) is refused naming replace_text; one near the start is edited`, () => {
    const fragment = longList(6_000)
    const section = listSections(fragment)[1]!
    const far = editBlocks(fragment, section.sectionId, section.rev, {
      inBlock: 1,
      removeBlocks: [6_000],
      markdown: '- x',
    })
    expect(far.kind === 'error' && far.message).toStartWith(
      'inBlock: line 6000 of block 1 lies past its first ',
    )
    expect(far.kind === 'error' && far.message).toContain('replace_text')
    expectOk(
      editBlocks(fragment, section.sectionId, section.rev, {
        inBlock: 1,
        removeBlocks: [2],
        markdown: '- item 1 changed',
      }),
    )
    expect(readLines(fragment).slice(0, 3)).toEqual([
      '- item 0 of the list',
      '- item 1 changed',
      '- item 2 of the list',
    ])
  })
})

describe('more shapes, named by their printed lines', () => {
  test('a row of a table inside an item changes alone', () =>
    void replaceLine('- item\n\n  | a | b |\n  | - | - |\n  | 1 | 2 |\n- next', '| 1 | 2 |', (line) =>
      line.replace('2 |', '20 |'),
    ))

  test('after_block on an item with sub-items inserts after them, as its sibling', () => {
    const run = edited('- one\n  - a\n- two', (lines) => ({
      afterBlock: lineOf(lines, 'one'),
      markdown: '- new',
    }))
    expectOk(run.result)
    expect(run.after()).toEqual(['- one', '  - a', '- new', '- two'])
  })

  test('a numbered list inside a bullet item takes numbered items after its last', () => {
    const run = edited('- one\n  1. x\n  2. y\n- two', (lines) => ({
      afterBlock: lineOf(lines, 'y'),
      markdown: '3. z',
    }))
    expectOk(run.result)
    expect(run.after()).toEqual([...run.before.slice(0, 3), '  3. z', run.before[3]!])
  })

  test("a quote's list emptied goes; the quote's text stays", () => {
    const run = edited('> intro\n>\n> - a\n> - b', (lines) => ({
      removeBlocks: [lineOf(lines, '- a'), lineOf(lines, '- b')],
    }))
    expectOk(run.result)
    expect(run.after()).toEqual(['> intro'])
  })

  test('more items removed than given: one whose sub-item is not named is refused', () =>
    expect(refusal('- one\n  - a\n- two\n  - b', () => ({ removeBlocks: [1, 3], markdown: '- ONE' }))).toBe(
      'sub_items_not_listed: removeBlocks: the item on line 3 has a sub-item on line 4 that removeBlocks does ' +
        'not name; add it to remove it with the item, or give one Markdown item per removed item, so each ' +
        'replaced item keeps the sub-items not named.',
    ))
})

test('numbers that are no line (fractions, negatives) are refused as out of range, and nothing changes', () => {
  for (const edit of [
    { removeBlocks: [1.5] },
    { removeBlocks: [-1] },
    { afterBlock: 0.5, markdown: '- x' },
  ]) {
    const run = edited('- a\n- b', () => edit)
    expect(run.result.kind === 'error' && run.result.reason).toBe('block_out_of_range')
    expect(run.after()).toEqual(run.before)
  }
})
