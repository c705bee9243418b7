/**
 * documentMarkdownPieces: documentToMarkdown written in pieces, for an export that never holds a large
 * document's Markdown whole. Joined, the pieces must be exactly the whole render (block joins, the bullet
 * that alternates between adjacent lists, a same-line image, trailing newlines), for every piece size;
 * each piece must be about the size asked; and the blocks must be read as they are written, not all first.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { documentMarkdownPieces, documentToMarkdown } from '../index.ts'
import { blocksToMarkdownPieces } from '../markdown/serialize-markdown.ts'
import { blocksToY } from '../yjs/build-y.ts'
import { runs } from './property-runs.ts'
import { bullets, item, POOL, paragraph } from './render-pool.ts'

function piecesOf(source: Y.XmlFragment | DocNode, pieceChars: number, media: 'placeholder' | 'source') {
  const pieces: string[] = []
  documentMarkdownPieces(source, (piece) => pieces.push(piece), pieceChars, { media })
  return pieces
}

describe('documentMarkdownPieces', () => {
  test('joined, the pieces are documentToMarkdown for every piece size', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...POOL), { minLength: 0, maxLength: 14 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.constantFrom<'placeholder' | 'source'>('placeholder', 'source'),
        (content, pieceChars, media) => {
          const doc: DocNode = { type: 'doc', content }
          const full = documentToMarkdown(doc, { media })
          for (const size of [1, pieceChars, Number.POSITIVE_INFINITY]) {
            const pieces = piecesOf(doc, size, media)
            expect(pieces.join('')).toBe(full)
            expect(pieces.every((piece) => piece.length > 0)).toBe(true)
          }
        },
      ),
      runs(150),
    )
  })

  test('from a Y fragment: the same characters as documentToMarkdown of that fragment', () => {
    const valid = POOL.filter((block) => {
      try {
        blocksToY([block])
        return true
      } catch {
        return false // not in the schema: JSON only
      }
    })
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...valid), { minLength: 0, maxLength: 10 }),
        fc.integer({ min: 1, max: 500 }),
        fc.constantFrom<'placeholder' | 'source'>('placeholder', 'source'),
        (blocks, pieceChars, media) => {
          const doc = new Y.Doc()
          const fragment = doc.getXmlFragment('default')
          fragment.insert(0, blocksToY(blocks))
          expect(piecesOf(fragment, pieceChars, media).join('')).toBe(documentToMarkdown(fragment, { media }))
          doc.destroy()
        },
      ),
      runs(60),
    )
  })

  test('pieces end where a block does, about the size asked', () => {
    const blocks = Array.from({ length: 200 }, (_, i) => paragraph(`paragraph ${i} ${'word '.repeat(i % 7)}`))
    const pieces = piecesOf({ type: 'doc', content: blocks }, 100, 'source')
    expect(pieces.length).toBeGreaterThan(30)
    // Each but the last reached the size asked, and passed it by less than one block and its join.
    for (const piece of pieces.slice(0, -1)) {
      expect(piece.length).toBeGreaterThanOrEqual(100)
      expect(piece.length).toBeLessThan(100 + 60)
    }
    // Adjacent lists alternate their bullets across pieces too.
    const lists = Array.from({ length: 6 }, (_, i) => bullets(item(paragraph(`list ${i}`))))
    expect(piecesOf({ type: 'doc', content: lists }, 1, 'source')).toEqual([
      '- list 0',
      '\n\n* list 1',
      '\n\n- list 2',
      '\n\n* list 3',
      '\n\n- list 4',
      '\n\n* list 5',
    ])
  })

  test('reads each block as it writes it: one ahead of what was written', () => {
    let read = 0
    const readWhenWritten: number[] = []
    function* blocks() {
      for (let i = 0; i < 1_000; i++) {
        read++
        yield paragraph(`paragraph ${i}`)
      }
    }
    blocksToMarkdownPieces(blocks(), () => readWhenWritten.push(read), 1)
    expect(readWhenWritten.length).toBe(1_000)
    // The first piece is written once the second block is read (the join needs it), and so on.
    expect(readWhenWritten.slice(0, 3)).toEqual([2, 3, 4])
    expect(readWhenWritten.at(-1)).toBe(1_000)
  })
})
