/**
 * documentMarkdownPrefix: the start of documentToMarkdown, written block by block and stopped once enough
 * characters are known. It must be the same characters as the whole render (block joins, the bullet that
 * alternates between adjacent lists, trailing newlines), and it must stop early.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { documentMarkdownPrefix, documentToMarkdown } from '../index.ts'
import { blocksToMarkdownPrefix } from '../markdown/serialize-markdown.ts'
import { blocksToY } from '../yjs/build-y.ts'
import { runs } from './property-runs.ts'
import { bullets, item, POOL, paragraph } from './render-pool.ts'

const documents = fc
  .array(fc.constantFrom(...POOL), { minLength: 0, maxLength: 14 })
  .map((content): DocNode => ({ type: 'doc', content }))

/** Budgets worth checking for a render: none, one, around every line and block boundary, past the end. */
function budgets(full: string, extra: number[]): number[] {
  const around = new Set([0, 1, full.length - 1, full.length, full.length + 1, ...extra])
  for (let at = full.indexOf('\n'); at !== -1; at = full.indexOf('\n', at + 1)) {
    for (const n of [at - 1, at, at + 1, at + 2]) around.add(n)
  }
  return [...around].filter((n) => n >= 0)
}

function checkPrefix(full: string, minChars: number, prefix: { text: string; complete: boolean }) {
  expect(full.startsWith(prefix.text), `a prefix of the whole render at ${minChars}`).toBe(true)
  if (prefix.complete) expect(prefix.text).toBe(full)
  else expect(prefix.text.length).toBeGreaterThanOrEqual(minChars)
}

describe('documentMarkdownPrefix', () => {
  test('is the start of documentToMarkdown at every budget: in a block, on a boundary, past the end', () => {
    fc.assert(
      fc.property(
        documents,
        fc.array(fc.nat({ max: 4_000 }), { maxLength: 4 }),
        fc.constantFrom<'placeholder' | 'source'>('placeholder', 'source'),
        (doc, extra, media) => {
          const full = documentToMarkdown(doc, { media })
          for (const minChars of budgets(full, extra)) {
            checkPrefix(full, minChars, documentMarkdownPrefix(doc, minChars, { media }))
          }
          expect(documentMarkdownPrefix(doc, full.length + 1, { media })).toEqual({
            text: full,
            complete: true,
          })
        },
      ),
      runs(150),
    )
  })

  test('from a Y fragment: the start of documentToMarkdown of that fragment', () => {
    const valid = POOL.filter((block) => {
      try {
        blocksToY([block])
        return true
      } catch {
        return false // not in the schema (an item starting with a rule, an unknown node): JSON only
      }
    })
    expect(valid.length).toBeGreaterThan(15)
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...valid), { minLength: 1, maxLength: 10 }),
        fc.nat({ max: 3_000 }),
        fc.constantFrom<'placeholder' | 'source'>('placeholder', 'source'),
        (blocks, minChars, media) => {
          const doc = new Y.Doc()
          const fragment = doc.getXmlFragment('default')
          fragment.insert(0, blocksToY(blocks))
          const full = documentToMarkdown(fragment, { media })
          for (const n of budgets(full, [minChars]))
            checkPrefix(full, n, documentMarkdownPrefix(fragment, n, { media }))
          doc.destroy()
        },
      ),
      runs(60),
    )
  })

  test('adjacent lists keep alternating bullets across the point where a short read stops', () => {
    const lists = Array.from({ length: 6 }, (_, i) => bullets(item(paragraph(`list ${i}`))))
    const full = documentToMarkdown({ type: 'doc', content: lists })
    expect(full).toBe(['- list 0', '* list 1', '- list 2', '* list 3', '- list 4', '* list 5'].join('\n\n'))
    const prefix = documentMarkdownPrefix({ type: 'doc', content: lists }, 20)
    expect(prefix).toEqual({ text: '- list 0\n\n* list 1\n\n- list 2', complete: false })
  })

  test('reads only the blocks it needs', () => {
    let read = 0
    function* blocks() {
      for (let i = 0; i < 10_000; i++) {
        read++
        yield paragraph(`paragraph ${i}`)
      }
    }
    const prefix = blocksToMarkdownPrefix(blocks(), 50)
    expect(prefix.complete).toBe(false)
    expect(prefix.text).toBe(Array.from({ length: 4 }, (_, i) => `paragraph ${i}`).join('\n\n'))
    // The blocks shown, plus one read ahead to know that more follow.
    expect(read).toBe(5)
  })
})
