/**
 * Text built from the characters whose export escaping was relaxed (issue 26), in every block kind, and
 * the property that a bounded read writes a long block's start exactly as the whole block is written:
 * shared by markdown-escapes.test.ts (a sample in every `bun run test`) and
 * markdown-escapes-prefix.slow.test.ts (the slow tier's breadth).
 */
import { expect } from 'bun:test'
import fc from 'fast-check'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { documentMarkdownPrefix, documentToMarkdown } from '../markdown/document-to-markdown.ts'
import { blocksToY } from '../yjs/build-y.ts'
import { runs } from './property-runs.ts'

/**
 * Random long blocks tried by every `bun run test` (each writes a block of ~9,000 characters whole and up
 * to four starts of it, ~45 ms); the slow tier tries BOUNDED_READ_BREADTH.
 */
export const BOUNDED_READ_SAMPLE = 40
export const BOUNDED_READ_BREADTH = 300

/** Pieces built from the characters whose escaping was relaxed, with what they could combine into. */
export const piece = fc.constantFrom(
  'word',
  ' ',
  '*',
  '**',
  ' * ',
  '_',
  ' _ ',
  '__',
  '~',
  '~~',
  '@',
  'a@b.co',
  'qs@6.14.0',
  '@~6',
  'www.x.org',
  '[',
  ']',
  '[a]',
  ']:',
  '[x]',
  '[ ] ',
  ': ',
  '(',
  ')',
  '<',
  '>',
  '<T>',
  '</T>',
  '<b>',
  '</b>',
  '<a href="#x">',
  'Map<K, V>',
  '<=>',
  '<a@b.co>',
  '<https://x.org>',
  '<div>',
  '#',
  '- ',
  '1. ',
  '\\',
  '.',
  '"',
)
export const MARKS: DocNode['marks'][] = [
  undefined,
  [{ type: 'bold' }],
  [{ type: 'italic' }],
  [{ type: 'link', attrs: { href: 'https://x.org' } }],
  [{ type: 'link', attrs: { href: 'https://x.org/a_(b)' } }],
  [{ type: 'link', attrs: { href: 'https://x.org/a)b(' } }],
  [{ type: 'code' }],
]
export const run = fc
  .tuple(fc.array(piece, { minLength: 1, maxLength: 7 }), fc.nat(MARKS.length - 1))
  .map(([parts, mark]) => ({ text: parts.join(''), marks: MARKS[mark] }))
  .filter((r) => r.text.trim() === r.text && r.text !== '')

export function inBlock(kind: string, content: DocNode[]): DocNode {
  const para: DocNode = { type: 'paragraph', content }
  if (kind === 'heading') return { type: 'heading', attrs: { level: 2 }, content }
  if (kind === 'taskList')
    return { type: 'taskList', content: [{ type: 'taskItem', attrs: { checked: false }, content: [para] }] }
  if (kind === 'bulletList') return { type: 'bulletList', content: [{ type: 'listItem', content: [para] }] }
  if (kind === 'blockquote') return { type: 'blockquote', content: [para] }
  if (kind === 'cellBlocks') {
    // A cell of several paragraphs, written on one line joined by `<br>` (one per hard break here).
    const paragraphs: DocNode[] = [{ type: 'paragraph', content: [] }]
    for (const node of content) {
      if (node.type === 'hardBreak') paragraphs.push({ type: 'paragraph', content: [] })
      else paragraphs.at(-1)!.content!.push(node)
    }
    const cell: DocNode = { type: 'tableHeader', content: paragraphs }
    return { type: 'table', content: [{ type: 'tableRow', content: [cell] }] }
  }
  if (kind === 'table')
    return {
      type: 'table',
      content: [{ type: 'tableRow', content: [{ type: 'tableHeader', content: [para] }] }],
    }
  return para
}

/**
 * A bounded read of a long block writes its start exactly as the whole block is written, over `numRuns`
 * random blocks. Fails if an escape depends on what follows it in the block (a later partner of a `*`, a
 * later `[`): a read cut short would write the start differently from the whole read (block-prefix.ts).
 */
export function boundedReadsWriteTheWholeStart(numRuns: number): void {
  fc.assert(
    fc.property(
      fc.array(run, { minLength: 1, maxLength: 6 }),
      fc.constantFrom('paragraph', 'heading', 'table'),
      fc.array(fc.nat({ max: 3_000 }), { minLength: 1, maxLength: 4 }),
      (parts, kind, budgets) => {
        const content: DocNode[] = []
        // Long enough to be cut (past the budget and the prefix slack of 4,096 characters).
        for (let copy = 0; content.reduce((n, node) => n + (node.text?.length ?? 0), 0) < 9_000; copy++) {
          for (const part of parts) {
            content.push({
              type: 'text',
              text: `${part.text} `,
              ...(part.marks ? { marks: part.marks } : {}),
            })
            if (kind !== 'heading' && copy % 7 === 3) content.push({ type: 'hardBreak' })
          }
        }
        const doc = new Y.Doc()
        const fragment = doc.getXmlFragment('default')
        fragment.insert(0, blocksToY([inBlock(kind, content)]))
        const full = documentToMarkdown(fragment)
        for (const n of budgets) {
          const prefix = documentMarkdownPrefix(fragment, n)
          expect({ n, prefix: prefix.text, same: full.startsWith(prefix.text) }).toEqual({
            n,
            prefix: prefix.text,
            same: true,
          })
        }
        doc.destroy()
      },
    ),
    runs(numRuns),
  )
}
