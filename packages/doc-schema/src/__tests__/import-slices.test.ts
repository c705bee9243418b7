/**
 * A file read block by block and a long list a slice of items at a time (import-blocks.ts), so that only
 * one slice's tokens, JSON and nodes are held: the list comes to the build as pieces of one batch of items
 * each, every slice holds at most LIST_SLICE_ITEMS items, a line that would start another block at the top
 * of a file never starts a slice, a list too deep to be measured in parts is read whole, and the ceilings
 * counted while the file is read refuse at the same count, with the same refusal, as one parse of the file.
 * That the result is the same byte for byte is import-state.test.ts's and import-parts.test.ts's; that the
 * worker's memory stays bounded, import-memory.slow.test.ts's.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import type Token from 'markdown-it/lib/token.mjs'
import { BUILD_BATCH_CHILDREN, type ImportPart } from '../insert-blocks.ts'
import { MAX_IMPORT_ELEMENTS, MAX_TABLE_CELLS } from '../limits.ts'
import { importParser, LIST_SLICE_ITEMS, scanBlocks } from '../markdown/import-blocks.ts'
import { importMarkdown, importMarkdownParts } from '../markdown/import-markdown.ts'
import { MarkdownWork } from '../markdown/markdown-work.ts'
import { corpusFiles } from './corpus-files.ts'
import { randomDocument } from './import-random.ts'
import { seededRandom } from './seeded-random.ts'

const ceilings = { elements: MAX_IMPORT_ELEMENTS, scope: 'one import' }

/** The parts of a file's import, each a `[…]` of whole blocks or a list piece's from, size and last. */
function partsOf(markdown: string): string[] {
  const imported = importMarkdownParts(markdown, { fallbackTitle: 'f' })
  if (imported.kind === 'error') throw new Error(imported.message)
  const seen: string[] = []
  for (const part of imported.value.parts) {
    if (part.kind === 'error') throw new Error(part.message)
    const value: ImportPart = part.value
    seen.push(
      Array.isArray(value)
        ? `[${value.map((node) => `${node.type.name}:${node.childCount}`).join(' ')}]`
        : `${value.list.type.name} ${value.from}+${value.items.length}${value.last ? ' last' : ''}`,
    )
  }
  return seen
}

/** How many items each slice of the file's lists holds, read as the import reads them. */
function sliceItems(markdown: string): number[][] {
  const scan = scanBlocks(markdown, { work: new MarkdownWork(ceilings, markdown.length) })
  return scan.blocks
    .filter((block) => block.slices)
    .map((block) =>
      block.slices!.map(
        (_, index) =>
          scan
            .sliceTokens(block, index)
            .filter((token) => token.type === 'list_item_open' && token.level === 1).length,
      ),
    )
}

/** A token as the conversion may read it (all but `hidden`: a list's tightness, which it never reads). */
function plain(token: Token, list = false): unknown {
  return {
    type: token.type,
    tag: token.tag,
    nesting: token.nesting,
    level: token.level,
    content: token.content,
    markup: token.markup,
    info: token.info,
    attrs: token.attrs,
    meta: token.meta,
    block: token.block,
    // A list cut in slices: its first slice's opening token spans that slice's lines only.
    map: list ? token.map?.[0] : token.map,
    children: token.children?.map((child) => plain(child)) ?? null,
  }
}

/** A file's tokens as the import reads them: block by block, each list of more than `every` items in slices. */
function readApart(markdown: string, every: number): unknown[] {
  const scan = scanBlocks(markdown, { work: new MarkdownWork(ceilings, markdown.length) }, every)
  const tokens: unknown[] = []
  for (const block of scan.blocks) {
    if (!block.slices) {
      tokens.push(...scan.tokens(block).map((token) => plain(token, isList(token))))
      continue
    }
    block.slices.forEach((_, index) => {
      const slice = scan.sliceTokens(block, index)
      if (index === 0) tokens.push(plain(slice[0]!, true))
      tokens.push(...slice.slice(1, -1).map((token) => plain(token)))
      if (index === block.slices!.length - 1) tokens.push(plain(slice.at(-1)!))
    })
  }
  return tokens
}

/** The same file in one markdown-it parse. */
function readWhole(markdown: string): unknown[] {
  const tokens = importParser().parse(markdown, {})
  return tokens.map((token) => plain(token, isList(token)))
}

const isList = (token: Token) => token.level === 0 && token.type.endsWith('_list_open')

describe('a file read block by block', () => {
  test('makes the tokens of one parse, its lists cut after every item or two (corpus, random files)', () => {
    const rng = seededRandom(20_261_203)
    const sources = corpusFiles().map((file) => readFileSync(file, 'utf8'))
    for (let run = 0; run < 80; run++) sources.push(randomDocument(rng, 1 + Math.floor(rng() * 40)))
    sources.push(
      `- a\n  - b\n\n- c\nlazy\n- d\n\n      code\n- e | f\n  |-|-|\n* g\n+ h\n1. i\n2) j\n3) k\n\n[r]: /x\n`,
      `1. a\n1. b\n10. c\n- [ ] t\n- [x] u\n-\n- \n\n  foo\n- > q\n  > r\n- \`\`\`\n  f\n  \`\`\`\n\n# h\n`,
    )
    for (const source of sources) {
      const whole = readWhole(source)
      for (const every of [1, 2]) expect(readApart(source, every)).toEqual(whole)
    }
  })
})

describe('a long list read in slices', () => {
  test('comes to the build as pieces of one batch of items, its short runs as whole lists', () => {
    expect(partsOf(`# T\n\n${'- item\n'.repeat(3_500)}\ntext\n`)).toEqual([
      'bulletList 0+1000',
      'bulletList 1000+1000',
      'bulletList 2000+1000',
      'bulletList 3000+500 last',
      '[paragraph:1]',
    ])
    // A run of exactly one batch is one whole list (as built whole); one more item makes it pieces.
    expect(
      partsOf(`# T\n\n${'- [ ] t\n'.repeat(1_001)}${'- p\n'.repeat(BUILD_BATCH_CHILDREN)}- [x] last\n`),
    ).toEqual([
      'taskList 0+1000',
      'taskList 1000+1 last',
      `[bulletList:${BUILD_BATCH_CHILDREN}]`,
      '[taskList:1]',
    ])
    // Ending on a full batch: the last piece holds no item.
    expect(partsOf(`# T\n\n${lines(2_000, (i) => `${i + 3}. n\n`)}`)).toEqual([
      'orderedList 0+1000',
      'orderedList 1000+1000',
      'orderedList 2000+0 last',
    ])
  })

  test(`each slice holds ${LIST_SLICE_ITEMS} items; a list of no more is read whole`, () => {
    expect(sliceItems(`${'- item\n'.repeat(3_500)}`)).toEqual([[1_000, 1_000, 1_000, 500]])
    expect(sliceItems(`${'- item\n'.repeat(LIST_SLICE_ITEMS)}`)).toEqual([])
    expect(sliceItems(`${'- a\n  - nested\n\n'.repeat(2_500)}`)).toEqual([[1_000, 1_000, 500]])
  })

  test('a line that would start a table at the top of a file never starts a slice', () => {
    // `- a | b` over `  |-|-|`: an item holding a table in the list, a table on its own at the top of a
    // file; item 1,000 is one, so the second slice starts one item on.
    expect(sliceItems(`- first\n${'- c\n- a | b\n  |-|-|\n'.repeat(1_500)}`)).toEqual([[1_001, 1_000, 1_000]])
  })

  test('a list nested deeper than its parts may be measured is read whole', () => {
    let deep = ''
    for (let level = 0; level < 99; level++) deep += `${'  '.repeat(level)}- d${level}\n`
    expect(sliceItems(`${'- item\n'.repeat(1_100)}${deep}`)).toEqual([])
    expect(
      sliceItems(`${'- item\n'.repeat(1_100)}${deep.split('\n').slice(0, 40).join('\n')}\n`),
    ).toHaveLength(1)
  })
})

describe('the ceilings counted while a file is read block by block', () => {
  const sides = (markdown: string) => [
    importMarkdown(markdown, { fallbackTitle: 'f', parse: 'whole' }),
    importMarkdown(markdown, { fallbackTitle: 'f' }),
  ]

  test('a list at the element ceiling is built; one more item is refused as one parse refuses it', () => {
    // The title: heading, inline, text; the list; each item: item, paragraph, inline, text.
    const items = (MAX_IMPORT_ELEMENTS - 4) / 4
    for (const result of sides(`# T\n\n${'- item\n'.repeat(items)}`)) expect(result.kind).toBe('ok')
    const [whole, scanned] = sides(`# T\n\n${'- item\n'.repeat(items + 1)}`)
    expect(whole).toMatchObject({ kind: 'error', reason: 'too_complex' })
    expect(scanned).toEqual(whole!)
  }, 120_000)

  test('a ceiling crossed by the blocks alone is refused before any part, as before', () => {
    for (const markdown of [
      `# T\n\n${'-\n'.repeat(MAX_IMPORT_ELEMENTS)}`,
      `# T\n\n|${'a|'.repeat(100)}\n|${'-|'.repeat(100)}\n${`|${'a|'.repeat(100)}\n`.repeat(MAX_TABLE_CELLS / 100)}`,
    ]) {
      const whole = importMarkdownParts(markdown, { fallbackTitle: 'f', parse: 'whole' })
      const scanned = importMarkdownParts(markdown, { fallbackTitle: 'f' })
      expect(whole).toMatchObject({ kind: 'error', reason: 'too_complex' })
      expect(scanned).toEqual(whole)
    }
  }, 120_000)

  test("a reference's target repeated past the expansion ceiling is refused the same", () => {
    const markdown = `# T\n\n${'- [x][r]\n'.repeat(3_000)}\n[r]: https://example.com/${'a'.repeat(200)}\n`
    const [whole, scanned] = sides(markdown)
    expect(whole).toMatchObject({ kind: 'error', reason: 'too_complex' })
    expect(scanned).toEqual(whole!)
  })
})

function lines(n: number, line: (i: number) => string): string {
  return Array.from({ length: n }, (_, i) => line(i)).join('')
}
