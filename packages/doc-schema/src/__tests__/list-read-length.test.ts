/**
 * A long list's read length measured a part of its items at a time (`listReadLength`: how an import
 * measures the section total of a list of 75,000 items without rendering it whole) against the whole
 * render a read makes: equal for every top-level list of the corpus and of seeded random lists (ordered
 * from any number, task items, nested lists, code, quotes, empty items, rules, HTML lines), at any part size.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import * as Y from 'yjs'
import { importedDocumentUpdate } from '../create-document.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { blockMarkdownPrefix } from '../markdown/block-prefix.ts'
import { importMarkdown } from '../markdown/import-markdown.ts'
import { BLOCK_OPTIONS, elementReadLength, listReadLength } from '../sections/section-total.ts'
import { corpusFiles } from './corpus-files.ts'
import { pick } from './random-inline.ts'
import { type Rng, seededRandom } from './seeded-random.ts'

function topLevelLists(markdown: string): Y.XmlElement[] {
  const imported = importMarkdown(markdown, { fallbackTitle: 'f' })
  if (imported.kind === 'error') throw new Error(imported.message)
  const update = importedDocumentUpdate(imported.value)
  if (update.kind === 'error') throw new Error(update.message)
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update.value)
  return doc
    .getXmlFragment(FRAGMENT_NAME)
    .toArray()
    .filter(
      (child): child is Y.XmlElement =>
        child instanceof Y.XmlElement && /^(bullet|ordered|task)List$/.test(child.nodeName),
    )
}

const whole = (list: Y.XmlElement) =>
  blockMarkdownPrefix(list, Number.MAX_SAFE_INTEGER, BLOCK_OPTIONS).text.length

const ITEMS = [
  'plain',
  '**bold** *em* `code`',
  '[x] done',
  '[ ] to do',
  '',
  '***',
  'text\n   continued  \n   broken',
  'with a nested list\n   - inner\n   - inner two',
  'with code\n\n   ```ts\n   let x = 1\n   ```',
  'a quote\n\n   > quoted',
  '<b>html</b> line',
  '# heading in an item',
  '1. looks ordered',
  'trailing space \\',
  '[link](https://example.com) ![i](https://e.com/i.png)',
]

function randomList(rng: Rng): string {
  const items = 1 + Math.floor(rng() * 30)
  const marker = pick(rng, ['-', '*', '+', `${Math.floor(rng() * 120)}.`, `${Math.floor(rng() * 12)})`])
  const lines: string[] = []
  for (let i = 0; i < items; i++) lines.push(`${marker} ${pick(rng, ITEMS)}`)
  return `# T\n\n${lines.join('\n')}\n`
}

describe('a long list measured in parts', () => {
  test('has the length of its whole render, for every list of the corpus and seeded random lists', () => {
    const sources = corpusFiles().map((file) => readFileSync(file, 'utf8'))
    const rng = seededRandom(20_261_202)
    for (let run = 0; run < 200; run++) sources.push(randomList(rng))
    let lists = 0
    for (const source of sources) {
      for (const list of topLevelLists(source)) {
        lists++
        const expected = whole(list)
        for (const perRender of [1, 2, 3, 7]) expect(listReadLength(list, perRender)).toBe(expected)
      }
    }
    expect(lists).toBeGreaterThan(200)
  })

  test('elementReadLength measures a list longer than one part in parts, with the same length', () => {
    const [list] = topLevelLists(
      `# T\n\n${Array.from({ length: 2_500 }, (_, i) => `${i + 95}. item *${i}*\n`).join('')}`,
    )
    expect(list!.length).toBe(2_500)
    expect(elementReadLength(list!)).toBe(whole(list!))
  })
})
