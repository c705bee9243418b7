/**
 * The slow tier (`bun run test:slow`): the phrasing writer's differential over 3,000 seeded random inline
 * contents (phrasing-differential.ts), each written by the library's writer and by ours, byte for byte.
 * Its point is breadth: thousands of random mark sets, escapes and places, and the count of the rare
 * fallback to the library over all of them; it takes ~20 s of CPU, most of it the library's writer.
 * phrasing-writer.test.ts runs the first 300 seeds in every `bun run test`.
 */
import { describe, expect, test } from 'bun:test'
import {
  contentsWithoutEmptyRunsAgree,
  PAIRING_FALLBACK,
  randomContentsAgree,
} from './phrasing-differential.ts'

describe('our phrasing writer writes the bytes the library writes, over 3,000 random contents', () => {
  test('6,000 random inline contents, seeded, in paragraphs, headings, list and task items, quotes and cells', () => {
    const reasons = randomContentsAgree(1, 3_000)
    // Left to the library: only adjacent attention of one kind, and rarely.
    expect(new Set(reasons)).toEqual(new Set([PAIRING_FALLBACK]))
    expect(reasons.length).toBeLessThan(20)
  }, 180_000)

  test('without empty text runs (content as Yjs holds it), ours writes every random content itself', () => {
    expect(contentsWithoutEmptyRunsAgree(1, 3_000)).toEqual([])
  }, 120_000)
})
