/**
 * read_document without section_id renders only the start of the document (readWholeDocument). Its text
 * must be what the earlier path gave, the whole render cut by the line walk, at every budget: under it,
 * exactly at it, with the cut inside a block, on a block boundary, and inside a first line longer than
 * the budget (never inside a surrogate pair). Pure: no server.
 */
import { describe, expect, test } from 'bun:test'
import { appendMarkdown, documentToMarkdown, FRAGMENT_NAME } from '@collab/doc-schema'
import fc from 'fast-check'
import * as Y from 'yjs'
import { runs } from '../../../../../../packages/doc-schema/src/__tests__/property-runs.ts'
import { MAX_COUNTED_CHARS } from '../limits.ts'
import { walkLines } from '../render/budget.ts'
import { readWholeDocument } from '../render/whole-read.ts'

/**
 * The earlier read_document path: the whole document to Markdown, then the walk when it does not fit;
 * the total is the whole render's length when it is at most what a read counts (MAX_COUNTED_CHARS).
 */
function wholeThenCut(fragment: Y.XmlFragment, max: number) {
  const markdown = documentToMarkdown(fragment)
  const total = markdown.length <= Math.max(max, MAX_COUNTED_CHARS) ? markdown.length : undefined
  if (markdown.length <= max) return { text: markdown, cut: false, total }
  return { text: walkLines(markdown.split('\n'), max).text, cut: true, total }
}

const BLOCKS = [
  'A paragraph with **bold**, *italic*, `code` and a [link](https://example.com).',
  `A long line ${'with words '.repeat(40)}and an emoji 😀 at its end 😀😀😀.`,
  '- one\n- two\n  - nested',
  '- right after another list',
  '1. first\n2. second',
  '- [ ] open\n- [x] done',
  '> quoted\n> more',
  '```ts\nconst a = 1\n\n\nconst b = 2\n```',
  '| a | b |\n| --- | :-: |\n| 1 | 2 |',
  '---',
  '## A heading',
  '### A deeper heading',
  '![alt text](https://example.com/i.png)',
  'https://youtu.be/abc',
  '😀'.repeat(60),
]

function build(blocks: string[]): { doc: Y.Doc; fragment: Y.XmlFragment } {
  const doc = new Y.Doc()
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const appended = appendMarkdown(fragment, `# Title\n\n${blocks.join('\n\n')}`)
  if (appended.kind === 'error') throw new Error(appended.message)
  return { doc, fragment }
}

/** Budgets around every line end of the whole render, its length, and a few drawn ones. */
function budgets(markdown: string, drawn: number[]): number[] {
  const set = new Set([1, 2, markdown.length - 1, markdown.length, markdown.length + 1, ...drawn])
  for (let at = markdown.indexOf('\n'); at !== -1; at = markdown.indexOf('\n', at + 1)) {
    for (const n of [at - 1, at, at + 1, at + 2, at + 3]) set.add(n)
  }
  return [...set].filter((n) => n >= 1)
}

describe('readWholeDocument', () => {
  test('gives the text of the whole render cut by the walk, at every budget', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...BLOCKS), { minLength: 0, maxLength: 16 }),
        fc.array(fc.integer({ min: 1, max: 3_000 }), { maxLength: 4 }),
        (blocks, drawn) => {
          const { doc, fragment } = build(blocks)
          const markdown = documentToMarkdown(fragment)
          for (const max of budgets(markdown, drawn)) {
            expect(readWholeDocument(fragment, max), `budget ${max}`).toEqual(wholeThenCut(fragment, max))
          }
          doc.destroy()
        },
      ),
      runs(80),
    )
  })

  test('a document far over the budget: the same start, and a cut', () => {
    const { doc, fragment } = build(Array.from({ length: 400 }, (_, i) => BLOCKS[i % BLOCKS.length]!))
    const markdown = documentToMarkdown(fragment)
    expect(markdown.length).toBeGreaterThan(20_000)
    for (const max of [1, 150, 1_000, 15_000]) {
      const read = readWholeDocument(fragment, max)
      expect(read).toEqual(wholeThenCut(fragment, max))
      expect(read.cut).toBe(true)
      expect(read.text.length).toBeLessThanOrEqual(max)
    }
    doc.destroy()
  })
})
