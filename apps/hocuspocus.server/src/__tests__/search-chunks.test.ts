/**
 * The search text's chunks (documents/search-chunks.ts): together they are the text, each is bounded,
 * a phrase across a boundary is whole in one chunk, and an edit changes only the chunks around it
 * (where a chunk ends follows the text there, not its distance from the start).
 */
import { describe, expect, test } from 'bun:test'
import { seededRandom } from '@collab/doc-schema/test-builders'
import { chunkSteps, searchChunks, searchChunksInSlices } from '../documents/search-chunks.ts'
import { SEARCH_CHUNK_MAX_CHARS, SEARCH_CHUNK_MIN_CHARS, SEARCH_CHUNK_OVERLAP_CHARS } from '../limits.ts'

const WORDS = ['harbour', 'keeper', 'lamp', 'storm', 'ledger', 'signal', 'tide', 'the', 'of', 'a', 'beacon']

/** Prose of about `chars` characters: sentences of random words, paragraphs split by newlines. */
function prose(chars: number, seed: number): string {
  const random = seededRandom(seed)
  const parts: string[] = []
  let length = 0
  while (length < chars) {
    const word = WORDS[Math.floor(random() * WORDS.length)]!
    const end = random() < 0.02 ? '.\n' : random() < 0.1 ? '. ' : ' '
    parts.push(word + end)
    length += word.length + end.length
  }
  return parts.join('')
}

const joined = (chunks: ReturnType<typeof searchChunks>) =>
  chunks.map((chunk) => chunk.body.slice(chunk.prefixChars)).join('')

describe('search chunks', () => {
  test('together they are the title, a newline and the text; each bounded; the first alone has no prefix', () => {
    const text = prose(600_000, 1)
    const chunks = searchChunks('Lighthouse log', text)
    expect(joined(chunks)).toBe(`Lighthouse log\n${text}`)
    expect(chunks.length).toBeGreaterThan(600_000 / SEARCH_CHUNK_MAX_CHARS)
    chunks.forEach((chunk, n) => {
      expect(chunk.n).toBe(n)
      const own = chunk.body.length - chunk.prefixChars
      expect(own).toBeLessThanOrEqual(SEARCH_CHUNK_MAX_CHARS)
      if (n < chunks.length - 1) expect(own).toBeGreaterThanOrEqual(SEARCH_CHUNK_MIN_CHARS)
      expect(chunk.prefixChars).toBe(n === 0 ? 0 : SEARCH_CHUNK_OVERLAP_CHARS)
    })
  })

  test('a small document is one chunk; text without white space is cut at the longest, never inside a surrogate pair', () => {
    expect(searchChunks('T', 'short text')).toMatchObject([{ n: 0, prefixChars: 0, body: 'T\nshort text' }])
    // 200,000 UTF-16 units of emoji (surrogate pairs), no white space, no two chunks alike.
    const random = seededRandom(5)
    const dense = Array.from({ length: 100_000 }, () =>
      String.fromCodePoint(0x1f600 + Math.floor(random() * 64)),
    ).join('')
    const chunks = searchChunks('T', dense)
    expect(joined(chunks)).toBe(`T\n${dense}`)
    for (const chunk of chunks) {
      expect(chunk.body.length - chunk.prefixChars).toBeLessThanOrEqual(SEARCH_CHUNK_MAX_CHARS + 1)
      // No lone surrogate at either end (or anywhere).
      expect(chunk.body).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/)
    }
  })

  test('a phrase across every boundary is whole in the chunk after it', () => {
    const text = prose(400_000, 2)
    const chunks = searchChunks('T', text)
    let end = 0
    for (const chunk of chunks.slice(0, -1)) {
      end += chunk.body.length - chunk.prefixChars
      // 200 characters either side of the boundary (a query is at most 200).
      const across = `T\n${text}`.slice(end - 100, end + 100)
      expect(chunks[chunk.n + 1]!.body).toContain(across)
    }
  })

  test('an edit in the middle changes the chunks around it only; typing at the start moves no later boundary', () => {
    const text = prose(1_000_000, 3)
    const before = searchChunks('T', text)
    const keys = new Set(before.map((chunk) => chunk.key))
    const changed = (after: ReturnType<typeof searchChunks>) =>
      after.filter((chunk) => !keys.has(chunk.key)).length

    const middle = text.indexOf(' ', 500_000)
    expect(
      changed(searchChunks('T', `${text.slice(0, middle)} quokka${text.slice(middle)}`)),
    ).toBeLessThanOrEqual(2)
    expect(
      changed(searchChunks('T', `${text.slice(0, middle)}${text.slice(middle + 1)}`)),
    ).toBeLessThanOrEqual(2)
    // Typing at the start: the first chunk (and the one after it, whose prefix it may move) only.
    const typed = searchChunks('T', `A new first paragraph.\n${text}`)
    expect(changed(typed)).toBeLessThanOrEqual(2)
    expect(typed.length).toBe(before.length)
    // A new title changes the first chunk alone.
    expect(changed(searchChunks('Another title', text))).toBe(1)
  })

  test('the same chunk twice in a document is one row, numbered in order', () => {
    const part = prose(200_000, 4)
    const chunks = searchChunks('T', `${part}\n${part}\n${part}`)
    expect(new Set(chunks.map((chunk) => chunk.key)).size).toBe(chunks.length)
    expect(chunks.map((chunk) => chunk.n)).toEqual(chunks.map((_, n) => n))
  })

  test('found in slices, they are the same chunks, found one chunk a step', async () => {
    const part = prose(150_000, 5)
    for (const text of [prose(900_000, 6), `${part}\n${part}`, 'short', '', 'x'.repeat(200_000)]) {
      const whole = searchChunks('T', text)
      expect(await searchChunksInSlices('T', text)).toEqual(whole)
      // One step a chunk found (a repeated chunk is one row, so at least as many steps as rows): the
      // slicing may take a turn between any two (runInSlices, turns.test.ts), never inside one. Counted,
      // not timed: a timed check (a turn if the whole took two slices) failed when the machine slowed
      // between the two runs.
      const steps = chunkSteps('T', text)
      let count = 0
      for (let step = steps.next(); !step.done; step = steps.next()) count++
      expect(count).toBeGreaterThanOrEqual(whole.length)
      if (text.length > 2 * SEARCH_CHUNK_MAX_CHARS) expect(count).toBeGreaterThan(2)
    }
  })
})
