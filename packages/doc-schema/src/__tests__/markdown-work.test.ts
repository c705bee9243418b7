/**
 * Work ceilings of Markdown (markdown/markdown-work.ts): what an input may expand to is counted while
 * markdown-it reads it, and the first ceiling crossed refuses the input before anything is built.
 */
import { describe, expect, test } from 'bun:test'
import MarkdownIt from 'markdown-it'
import {
  MAX_IMPORT_ELEMENTS,
  MAX_MARKDOWN_EXPANSION_CHARS,
  MAX_TABLE_CELLS,
  MAX_WRITE_ELEMENTS,
} from '../limits.ts'
import { importMarkdown } from '../markdown/import-markdown.ts'
import { countTokens, MarkdownTooComplex, MarkdownWork } from '../markdown/markdown-work.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import type { Result } from '../result.ts'
import { expectOk } from './fixtures.ts'

/** A table of `rows` body rows and `columns` columns of one-letter cells (header row included in cells). */
function table(rows: number, columns: number): string {
  const row = (cell: string) => `|${Array(columns).fill(cell).join('|')}|\n`
  return row('a') + row('-') + row('b').repeat(rows)
}

/** The Markdown refused as too complex, naming the field and, in its message, each of `says`. */
function expectTooComplex(result: Result<unknown>, says: string[]) {
  expect(result).toMatchObject({
    kind: 'error',
    code: 'invalid_input',
    reason: 'too_complex',
    field: 'markdown',
  })
  if (result.kind === 'error') for (const part of says) expect(result.message).toContain(part)
}

const imported = (markdown: string) => importMarkdown(`# Title\n\n${markdown}`, { fallbackTitle: 'x' })

describe('table cells', () => {
  test(`a table of ${MAX_TABLE_CELLS} cells is built; one more row is refused naming the limit`, () => {
    const columns = 100
    const rows = MAX_TABLE_CELLS / columns - 1 // the header row holds cells too
    const fits = expectOk(imported(table(rows, columns)))
    expect(fits.blocks[0]?.content).toHaveLength(rows + 1)
    expectTooComplex(imported(table(rows + 1, columns)), [
      `more than ${MAX_TABLE_CELLS.toLocaleString('en-US')} cells`,
      'split it into several tables',
    ])
  })

  test('the count is per table: two tables of 8,000 cells each import', () => {
    const one = table(79, 100)
    const result = expectOk(imported(`${one}\nbetween\n\n${one}`))
    expect(result.blocks.filter((b) => b.type === 'table')).toHaveLength(2)
  })

  test('the 0.6 MB table of the red team (300 × 1,000 cells) is refused', () => {
    expect(imported(table(300, 1_000))).toMatchObject({
      kind: 'error',
      code: 'invalid_input',
      reason: 'too_complex',
    })
  })
})

describe('elements', () => {
  const list = (items: number) => '- item\n'.repeat(items)

  test('one write: a list of 1,900 items is written, 2,100 are refused naming the limit', () => {
    expect(expectOk(parseMarkdown(list(1_900)))[0]?.content).toHaveLength(1_900)
    expectTooComplex(parseMarkdown(list(2_100)), [
      `more than ${MAX_WRITE_ELEMENTS.toLocaleString('en-US')} elements`,
      'one write',
    ])
  })

  test('a write with a mark on every word past the ceiling is refused; prose of the same length is not', () => {
    const marked = '*a* '.repeat(6_000)
    expect(parseMarkdown(marked)).toMatchObject({
      kind: 'error',
      code: 'invalid_input',
      reason: 'too_complex',
    })
    const prose = 'word '.repeat(6_000)
    expect(parseMarkdown(prose).kind).toBe('ok')
  })

  test('an import takes what one write may not, up to its own ceiling', () => {
    expect(expectOk(imported(list(2_100))).blocks[0]?.content).toHaveLength(2_100)
    const over = imported(list(MAX_IMPORT_ELEMENTS / 4 + 10))
    expect(over).toMatchObject({ kind: 'error', code: 'invalid_input', reason: 'too_complex' })
    if (over.kind === 'error') expect(over.message).toContain('one import')
  })

  test('markdown-it stops making tokens at the ceiling: the count never passes it by more than one', () => {
    const md = new MarkdownIt()
    countTokens(md)
    const work = new MarkdownWork({ elements: 1_000, scope: 'a test' }, 0)
    expect(() => md.parse(list(100_000), { work })).toThrow(MarkdownTooComplex)
    expect(work.elements).toBe(1_001)
  })

  test('a parse without a work count is not counted (other users of the same instance)', () => {
    const md = new MarkdownIt()
    countTokens(md)
    expect(md.parse(list(10_000), {}).length).toBeGreaterThan(10_000)
  })
})

describe('expanded characters', () => {
  const target = `https://example.com/${'x'.repeat(1_000)}`

  test('a reference used until its copies pass the input by the ceiling is refused; fewer uses are not', () => {
    const uses = (n: number) => `[r]: ${target}\n\n${'[a][r] '.repeat(n)}`
    const overUses = Math.ceil(MAX_MARKDOWN_EXPANSION_CHARS / target.length) + 10
    expect(parseMarkdown(uses(overUses))).toMatchObject({
      kind: 'error',
      code: 'invalid_input',
      reason: 'too_complex',
    })
    const refused = imported(uses(overUses))
    expect(refused).toMatchObject({ kind: 'error', code: 'invalid_input', reason: 'too_complex' })
    if (refused.kind === 'error') expect(refused.message).toContain('reference definition used many times')
    expect(parseMarkdown(uses(100)).kind).toBe('ok')
  })

  test('inline links and bare URLs are the input’s own characters, however many', () => {
    const inline = `[a](${target}) `.repeat(60)
    expect(parseMarkdown(inline).kind).toBe('ok')
    const bare = `${target} `.repeat(60)
    expect(imported(bare).kind).toBe('ok')
  })
})
