/**
 * A document's search text in chunks (document_search_chunks): its title, a newline and its text, cut into
 * pieces of SEARCH_CHUNK_MIN_CHARS to SEARCH_CHUNK_MAX_CHARS characters, each indexed on its own (pg_trgm
 * over the text, an 'english' tsvector for other forms of a word, a 'simple' one for the rank). A refresh
 * writes only the chunks whose text changed: one edit rewrites one or two chunks of ~32 K characters
 * instead of re-indexing the whole text in one row (a million characters' trigrams, ~0.12 s of PGlite's
 * only session per refresh, measured).
 *
 * Where a chunk ends is decided by the text around the cut, not by its distance from the document's start
 * (content-defined chunking: a rolling "gear" hash of the last characters, cut at white space where it has
 * its low bits zero), so typing early in a document moves no later boundary. Each chunk after the first
 * starts with the last SEARCH_CHUNK_OVERLAP_CHARS characters of the one before (its `prefixChars`): a term
 * or phrase across a boundary is whole in the later chunk, since a query is shorter than the overlap.
 * A chunk's key is a hash of its text and prefix length, so an unchanged chunk keeps its row; its ordinal
 * `n` (the order snippets look in) is rewritten alone when chunks before it split or merge.
 */
import { createHash } from 'node:crypto'
import { finishSteps } from '@collab/doc-schema'
import type { Prisma } from '../db/generated/client.ts'
import { forgetLargeParameters } from '../db/statement-history.ts'
import { SEARCH_CHUNK_MAX_CHARS, SEARCH_CHUNK_MIN_CHARS, SEARCH_CHUNK_OVERLAP_CHARS } from '../limits.ts'
import { runInSlices } from '../turns.ts'

export type SearchChunk = {
  /** Hash of `prefixChars` and `body`: a chunk with the same key has the same text. */
  key: string
  /** Its place in the document, from 0. */
  n: number
  /** Characters at the start of `body` that repeat the end of the chunk before (0 for the first). */
  prefixChars: number
  body: string
}

/**
 * The rolling hash's table: one pseudo-random 32-bit value per low byte of a UTF-16 unit, fixed (a
 * boundary must fall in the same place in every process, for ever: a change rewrites every chunk once).
 */
const GEAR = (() => {
  const table = new Int32Array(256)
  let x = 0x9e3779b9
  for (let i = 0; i < 256; i++) {
    // xorshift32
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    table[i] = x
  }
  return table
})()

/**
 * A boundary candidate fires when these bits of the hash are zero: 1 in 2,048 white-space characters, so
 * ~12 K characters of prose past the minimum on average. The high bits: bit b of the hash holds the last
 * b + 1 characters, so the top ones depend on the last 32 (the low ones would on the last few, which repeat
 * in any text).
 */
const CUT_MASK = 0xffe00000 | 0

const isSpace = (code: number) => code === 32 || code === 10 || code === 9 || code === 13

/** A cut never falls between the two halves of a surrogate pair. */
const safeCut = (text: string, at: number) => {
  const code = text.charCodeAt(at)
  return code >= 0xdc00 && code <= 0xdfff ? at + 1 : at
}

/** The ends of the chunks of `text` (exclusive), one at a time, the last one `text.length`. */
function* chunkEnds(text: string): Generator<number, void> {
  let count = 0
  let start = 0
  let hash = 0
  let lastSpace = -1
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    hash = ((hash << 1) + GEAR[(code ^ (code >>> 8)) & 255]!) | 0
    if (!isSpace(code)) {
      if (i - start + 1 < SEARCH_CHUNK_MAX_CHARS) continue
    } else {
      lastSpace = i
      if (i - start + 1 < SEARCH_CHUNK_MIN_CHARS) continue
      if ((hash & CUT_MASK) === 0) {
        count++
        yield i + 1
        start = i + 1
        continue
      }
      if (i - start + 1 < SEARCH_CHUNK_MAX_CHARS) continue
    }
    // At the longest: cut after the last white space past the shortest, else here.
    const end = lastSpace + 1 - start >= SEARCH_CHUNK_MIN_CHARS ? lastSpace + 1 : safeCut(text, i + 1)
    count++
    yield end
    start = end
    i = end - 1
  }
  if (start < text.length || count === 0) yield text.length
}

const keyOf = (prefixChars: number, body: string) =>
  createHash('sha1').update(`${prefixChars}\n`).update(body).digest('base64url')

/** The chunks of a document whose title and text are given (both already storable and cut). */
export function searchChunks(title: string, text: string): SearchChunk[] {
  return finishSteps(chunkSteps(title, text))
}

/**
 * The same chunks as searchChunks, in slices of the event loop's turns (turns.ts; a pause between
 * chunks): a million characters' ends and keys held the event loop 10-23 ms in one piece
 * after each refresh of a 5 MiB document being typed into (profiled, bench/notes.md).
 */
export async function searchChunksInSlices(title: string, text: string): Promise<SearchChunk[]> {
  return (await runInSlices(chunkSteps(title, text)))!.value
}

/**
 * searchChunks one chunk a step (its end found and its key hashed): runInSlices takes a turn between two
 * steps once a slice's time is spent. Exported for the test that counts its steps.
 */
export function* chunkSteps(title: string, text: string): Generator<void, SearchChunk[]> {
  const whole = `${title}\n${text}`
  const chunks: SearchChunk[] = []
  const seen = new Set<string>()
  let start = 0
  for (const end of chunkEnds(whole)) {
    const from = start === 0 ? 0 : safeCut(whole, Math.max(0, start - SEARCH_CHUNK_OVERLAP_CHARS))
    const body = whole.slice(from, end)
    const prefixChars = start - from
    const key = keyOf(prefixChars, body)
    // The same text twice in one document is one row: it matches the same, first place first.
    if (!seen.has(key)) {
      seen.add(key)
      chunks.push({ key, n: chunks.length, prefixChars, body })
    }
    start = end
    yield
  }
  return chunks
}

/**
 * Writes a document's chunks: deletes those no longer in it, renumbers those that moved, inserts the new
 * ones with their tsvectors. Rows of unchanged chunks are not touched (their indexes neither), but for a
 * document going from one chunk to several or back: its kept chunk changes `alone`, so moves to the
 * other partial indexes.
 */
export async function writeSearchChunks(
  tx: Prisma.TransactionClient,
  documentId: string,
  chunks: readonly SearchChunk[],
): Promise<void> {
  const stored = await tx.$queryRaw<Array<{ key: string; n: number; alone: boolean }>>`
    SELECT key, n, alone FROM document_search_chunks WHERE document_id = ${documentId}::uuid`
  const storedRow = new Map(stored.map((row) => [row.key, row]))
  const alone = chunks.length === 1
  const wanted = new Set(chunks.map((chunk) => chunk.key))
  const gone = stored.filter((row) => !wanted.has(row.key)).map((row) => row.key)
  const added = chunks.filter((chunk) => !storedRow.has(chunk.key))
  const changed = chunks.filter((chunk) => {
    const row = storedRow.get(chunk.key)
    return row !== undefined && (row.n !== chunk.n || row.alone !== alone)
  })
  if (gone.length > 0) {
    await tx.$executeRaw`
      DELETE FROM document_search_chunks WHERE document_id = ${documentId}::uuid AND key = ANY(${gone}::text[])`
  }
  if (changed.length > 0) {
    await tx.$executeRaw`
      UPDATE document_search_chunks c SET n = m.n, alone = ${alone}
        FROM unnest(${changed.map((c) => c.key)}::text[], ${changed.map((c) => c.n)}::int[]) AS m(key, n)
       WHERE c.document_id = ${documentId}::uuid AND c.key = m.key`
  }
  if (added.length > 0) {
    await tx.$executeRaw`
      INSERT INTO document_search_chunks (document_id, key, n, prefix_chars, body, stem, words, alone)
      SELECT ${documentId}::uuid, a.key, a.n, a.prefix_chars, a.body,
             to_tsvector('english', a.body), setweight(to_tsvector('simple', a.body), 'B'), ${alone}
        FROM unnest(${added.map((c) => c.key)}::text[], ${added.map((c) => c.n)}::int[],
                    ${added.map((c) => c.prefixChars)}::int[], ${added.map((c) => c.body)}::text[])
             AS a(key, n, prefix_chars, body)`
    // The chunks' text would stay held by Prisma's debug histories.
    forgetLargeParameters(added.reduce((sum, chunk) => sum + chunk.body.length, 0))
  }
}
