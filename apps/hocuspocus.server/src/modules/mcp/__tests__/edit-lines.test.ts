/**
 * edit_blocks' in_block over a real MCP client against a real server, as an agent does it (issue 26, item
 * 4): read the section with read_document, take the number of the line to change from the printed text,
 * send that line edited, read again, and check that exactly that line changed. One test per shape a read
 * prints with inner lines.
 */
import { describe, expect, test } from 'bun:test'
import { call } from '@collab/test-support/mcp'
import { outlineIds, wholeSectionId } from '@collab/test-support/outline'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { createDocument, frameLines, useMcpUser } from './setup.ts'

let server: RunningServer
let owner: { id: string }
let client: Client
useMcpUser('editor', (made) => {
  ;({ server, user: owner, client } = made)
})

/** The first section of `slug` as read: its id, rev, and block 1's lines as printed (after `[1] `). */
async function readBlock(slug: string) {
  const outline = await call(client, 'get_outline', { slug })
  const sectionId = await wholeSectionId(client, slug, outlineIds(outline.text)[1]!)
  const read = await call(client, 'read_document', { slug, section_id: sectionId })
  const rev = /^rev: ([0-9a-f]+)$/m.exec(read.text)![1]!
  const body = frameLines(read.text).body.join('\n')
  const start = body.indexOf('[1] ') + '[1] '.length
  const lines = body.slice(start, body.indexOf('\n\n[2] ', start)).split('\n')
  return { sectionId, rev, lines }
}

/** The number of the one printed line holding `text` (1 = the line after `[1] `). */
function lineOf(lines: readonly string[], text: string): number {
  const found = lines.flatMap((line, i) => (line.includes(text) ? [i + 1] : []))
  expect(found).toHaveLength(1)
  return found[0]!
}

/**
 * A document whose first section holds `block`; the line holding `text` is replaced by `change` of it (the
 * line copied as printed), by the number the read printed it at. Checks that only that line changed.
 */
async function changeLine(block: string, text: string, change: (line: string) => string) {
  const doc = await createDocument(server, owner.id, {
    title: 'Lines',
    markdown: `## S\n\n${block}\n\nafter`,
  })
  const before = await readBlock(doc.slug)
  const n = lineOf(before.lines, text)
  const edited = await call(client, 'edit_blocks', {
    slug: doc.slug,
    section_id: before.sectionId,
    rev: before.rev,
    in_block: 1,
    remove_blocks: [n],
    markdown: change(before.lines[n - 1]!),
  })
  expect(edited.text).toStartWith('section_id: ')
  const expected = [...before.lines]
  expected[n - 1] = change(before.lines[n - 1]!)
  expect((await readBlock(doc.slug)).lines).toEqual(expected)
  return { doc, before, n }
}

describe('edit_blocks with in_block changes exactly the line a read printed at that number', () => {
  test('table: the issue\'s read, row "beta" by its printed number (the | - | line counted), then the issue\'s call', async () => {
    const { doc, n } = await changeLine(
      '| Option | Default |\n| - | - |\n| alpha | 1 |\n| beta | 2 |',
      'beta',
      (l) => l.replace('2', '200'),
    )
    expect(n).toBe(4)
    // The call of issue 26: remove_blocks [3] with alpha's new row changes alpha (line 3 as read), not beta.
    const read = await readBlock(doc.slug)
    expect(read.lines[2]).toBe('| alpha | 1 |')
    const edited = await call(client, 'edit_blocks', {
      slug: doc.slug,
      section_id: read.sectionId,
      rev: read.rev,
      in_block: 1,
      remove_blocks: [3],
      markdown: '| alpha | 100 |',
    })
    expect(edited.isError).toBe(false)
    expect((await readBlock(doc.slug)).lines).toEqual([
      read.lines[0]!,
      read.lines[1]!,
      '| alpha | 100 |',
      read.lines[3]!,
    ])
  })

  test('bullet list: a nested item', async () => {
    await changeLine('- one\n  - a\n  - b\n- two', '- b', (l) => l.replace('b', 'bee'))
  })

  test('ordered list: a nested item', async () => {
    await changeLine('1. one\n   1. a\n   2. b\n2. two', '2. b', (l) => l.replace('b', 'bee'))
  })

  test('task list: a nested box ticked', async () => {
    await changeLine('- [ ] one\n  - [ ] a\n  - [ ] b\n- [ ] two', '[ ] b', (l) => l.replace('[ ]', '[x]'))
  })

  test('blockquote holding a list: a sub-item sent with its "> "', async () => {
    await changeLine('> intro\n>\n> - a\n> - b\n>   - c\n> - d', 'c', (l) => l.replace('c', 'see'))
  })

  test('code block inside an item: the item after the code', async () => {
    await changeLine('- item\n\n  ```js\n  x = 1\n  ```\n- next', 'next', (l) => l.replace('next', 'then'))
  })

  test('list after paragraphs in one item: its sub-item', async () => {
    await changeLine('- para one\n\n  para two\n\n  - sub\n- last', 'sub', (l) => l.replace('sub', 'SUB'))
  })

  test('an item replaced by its own line keeps its sub-items', async () => {
    await changeLine('- one\n  - a\n  - b\n- two', 'one', () => '- ONE')
  })

  test("the table's | - | line is refused with the numbers to use, in the tool's argument names", async () => {
    const doc = await createDocument(server, owner.id, {
      title: 'Separator',
      markdown: '## S\n\n| Option | Default |\n| - | - |\n| alpha | 1 |\n| beta | 2 |',
    })
    const before = await readBlock(doc.slug)
    const refused = await call(client, 'edit_blocks', {
      slug: doc.slug,
      section_id: before.sectionId,
      rev: before.rev,
      in_block: 1,
      remove_blocks: [lineOf(before.lines, '| - |')],
      markdown: '| x | y |',
    })
    expect(refused.isError).toBe(true)
    expect(refused.text).toStartWith(
      'remove_blocks: line 2 of block 1 is the table\'s "| - |" separator line, which is no row',
    )
    expect(refused.text).toContain('the rows are lines 1 and 3–4')
    expect(refused.text).toContain('give after_block: 2')
    expect((await readBlock(doc.slug)).lines).toEqual(before.lines)
  })
})
