/**
 * A broad query is bounded: when its words are in more documents than one search ranks
 * (MAX_RANKED_DOCUMENTS), or the indexes name more than MAX_SEARCH_CANDIDATES matches server-wide, it is
 * ranked among the most recently changed documents in scope, each checked for the match, and every answer
 * says so (find_documents, find_sections, the web page's search). A narrower query still searches every
 * document, and a scope small enough to rank whole gives the same answer either way, so what others'
 * documents hold never changes what a person is shown. Real server, real MCP client, real database
 * (PGlite, or PostgreSQL with TEST_DATABASE_URL); the documents are inserted straight into the tables.
 */
import { describe, expect, test } from 'bun:test'
import { insertSearchableDocuments } from '@collab/test-support/documents'
import { call, useMcpClients } from '@collab/test-support/mcp'
import { useTestServer } from '@collab/test-support/server'
import {
  listingSql,
  type Narrowed,
  RANK_SLICE_DOCUMENTS,
  rankedSql,
  type SearchInput,
} from '../../../documents/search.ts'
import { parseTerms } from '../../../documents/search-query.ts'
import { MAX_RANKED_DOCUMENTS, MAX_SEARCH_CANDIDATES } from '../../../limits.ts'
import type { RunningServer } from '../../../server.ts'
import { decodeCursor, encodeCursor } from '../paging/cursor.ts'
import { FRAME_END } from '../render/frame.ts'
import { notes } from '../render/notes.ts'

let server: RunningServer
useTestServer((s) => {
  server = s
})
const mcp = useMcpClients(() => server)
/** One user (and client) per handle for the whole file. */
const userOf = (handle: string) => mcp.userOnce(handle)

/** The wide user's documents: more than one search ranks, so the oldest are outside the recent ones. */
const WIDE = MAX_RANKED_DOCUMENTS + 200
/** Every tenth of the wide user's documents lacks the common word. */
const lacksCommon = (g: number) => g % 10 === 0
/** The middle user's documents: more than one ranking statement ranks, fewer than a search ranks. */
const MIDDLE = RANK_SLICE_DOCUMENTS * 2 + 100
/** The crowd's documents, all holding the shared word: more matches than a search reads. */
const CROWD = MAX_SEARCH_CANDIDATES + 1

/** The test's documents of `ownerId` (insertSearchableDocuments). */
const insertDocuments = (
  ownerId: string,
  prefix: string,
  count: number,
  title: string,
  text: string,
  minutes?: string,
) => insertSearchableDocuments(server, { ownerId, prefix, count, title, text, minutes })

let seeded: Promise<void> | undefined
/** The three users' documents, once for the file (every value below is a literal of this file). */
const seed = () => {
  seeded ??= (async () => {
    const [wide, crowd, small] = await Promise.all([userOf('wide'), userOf('crowd'), userOf('small')])
    // The wide user's: the common word (whole) in all but every tenth; the title names it in 100 and
    // 1,100; a rare word in 100 (old); an excluded word in 1,150; the shared word in 50, 1,190 and 1,195.
    await insertDocuments(
      wide.user.id,
      'wide',
      WIDE,
      `CASE WHEN g IN (100, 1100) THEN 'Commonword notes ' || g ELSE 'Wide ' || g END`,
      `CASE WHEN g % 10 = 0 AND g NOT IN (100, 1100) THEN '' ELSE 'the commonword here ' END
        || md5(g::text) || ' filler text'
        || CASE WHEN g = 100 THEN ' rareword' ELSE '' END
        || CASE WHEN g = 1150 THEN ' excludedword' ELSE '' END
        || CASE WHEN g IN (50, 1190, 1195) THEN ' sharedword' ELSE '' END`,
    )
    await insertDocuments(
      crowd.user.id,
      'crowd',
      CROWD,
      `'Crowd ' || g`,
      `'a sharedword of the crowd ' || md5(g::text)`,
    )
    await insertDocuments(
      small.user.id,
      'small',
      5,
      `'Small ' || g`,
      `'small text ' || CASE WHEN g IN (2, 4) THEN 'sharedword' ELSE md5(g::text) END`,
    )
    // The middle user's: more matches than one statement ranks, fewer than a search ranks; ranks and
    // change times repeat (the title's word in every seventh, changed in threes at the same minute), so
    // the slices' merge must break ties as one statement does.
    const middle = await userOf('middle')
    await insertDocuments(
      middle.user.id,
      'middle',
      MIDDLE,
      `CASE WHEN g % 7 = 0 THEN 'Middleword ' || g ELSE 'Middle ' || g END`,
      `CASE WHEN g % 2 = 0 THEN 'the middleword ' ELSE 'middlewords ' END || md5(g::text)`,
      'g / 3',
    )
    await server.services.db.prisma.$executeRawUnsafe('ANALYZE')
  })()
  return seeded
}

/** How a broad query over the wide user's documents is narrowed: their MAX_RANKED_DOCUMENTS most recent. */
const BROAD: Narrowed = { ranked: MAX_RANKED_DOCUMENTS, among: 'scope' }

const numberOf = (slug: string) => Number(slug.slice(slug.lastIndexOf('-') + 1))

async function search(handle: string, terms: string[], take = MAX_RANKED_DOCUMENTS + 1) {
  await seed()
  const { user } = await userOf(handle)
  const input: SearchInput = { userId: user.id, scope: 'mine', terms, asOf: new Date(), take }
  const found = await server.services.search.search(input)
  return { slugs: found.rows.map((row) => row.slug), narrowed: found.narrowed }
}

const notesOf = (text: string) => text.slice(text.indexOf(FRAME_END) + FRAME_END.length).trim()

describe('a broad query is ranked among the most recently changed documents', () => {
  test('more matches than one search ranks: the recent ones, each matched, the best first, and narrowed', async () => {
    const { slugs, narrowed } = await search('wide', ['commonword'])
    expect(narrowed).toEqual(BROAD)
    const numbers = slugs.map(numberOf)
    // The recent MAX_RANKED_DOCUMENTS are 201..1,200; of them every tenth lacks the word, except 1,100
    // (its title names it).
    const recent = Array.from({ length: MAX_RANKED_DOCUMENTS }, (_, i) => WIDE - i)
    const expected = recent.filter((g) => !lacksCommon(g) || g === 1100)
    expect(new Set(numbers)).toEqual(new Set(expected))
    expect(numbers[0]).toBe(1100) // the word in the title too: the highest tier
    expect(numbers).not.toContain(100) // the same title, but older than the recent ones
  })

  test('ranked in slices, merged: the same order as one statement ranking them all', async () => {
    await seed()
    const { user } = await userOf('middle')
    const terms = ['middleword']
    const input: SearchInput = { userId: user.id, scope: 'mine', terms, asOf: new Date(), take: MIDDLE }
    const found = await server.services.search.search(input)
    expect(found.narrowed).toBeNull()
    const { prisma } = server.services.db
    const all = await prisma.$queryRaw<Array<{ id: string; slug: string }>>(listingSql(input))
    expect(all).toHaveLength(MIDDLE)
    const query = parseTerms(terms)
    const ids = all.map((row) => row.id)
    const whole = await prisma.$queryRaw<Array<{ slug: string }>>(
      rankedSql({ ...input, query, ids, matched: false }),
    )
    expect(whole).toHaveLength(MIDDLE) // every one matches: as written, or in another form
    expect(found.rows.map((row) => row.slug)).toEqual(whole.map((row) => row.slug))
    // Ranked among the wide user's recent documents in slices, the same order too.
    const wide = await userOf('wide')
    const wideInput: SearchInput = { ...input, userId: wide.user.id, terms: ['commonword'], take: 2_000 }
    const recent = await prisma.$queryRaw<Array<{ id: string }>>(
      listingSql({ ...wideInput, take: MAX_RANKED_DOCUMENTS }),
    )
    const wholeWide = await prisma.$queryRaw<Array<{ slug: string }>>(
      rankedSql({
        ...wideInput,
        query: parseTerms(['commonword']),
        ids: recent.map((row) => row.id),
        matched: false,
      }),
    )
    const slicedWide = await server.services.search.search(wideInput)
    expect(slicedWide.rows.map((row) => row.slug)).toEqual(wholeWide.map((row) => row.slug))
  })

  test('an exclusion is checked on the recent documents as on the matched ones', async () => {
    const { slugs, narrowed } = await search('wide', ['commonword', '-excludedword'])
    expect(narrowed).toEqual(BROAD)
    expect(slugs).not.toContain('wide-1150')
    expect(slugs).toContain('wide-1149')
  })

  test('a narrower query searches every document: the old one is found', async () => {
    expect(await search('wide', ['commonword', 'rareword'])).toEqual({ slugs: ['wide-100'], narrowed: null })
  })

  test("others' documents past the candidates' ceiling change nothing for a scope small enough to rank whole", async () => {
    // The crowd's private documents make the shared word broad server-wide; the small user's scope is
    // ranked whole, so the answer is exactly their own matches and nothing is said to be left out.
    const small = await search('small', ['sharedword'])
    expect(small).toEqual({ slugs: expect.arrayContaining(['small-2', 'small-4']), narrowed: null })
    expect(small.slugs).toHaveLength(2)
    // The wide user's scope is larger than one search ranks: the recent matches, and it says so.
    const wide = await search('wide', ['sharedword'])
    expect(wide.narrowed).toEqual(BROAD)
    expect(new Set(wide.slugs)).toEqual(new Set(['wide-1190', 'wide-1195']))
    // The crowd's own search ranks its most recent documents.
    const crowd = await search('crowd', ['sharedword'], 5)
    expect(crowd.narrowed).toEqual(BROAD)
    expect(crowd.slugs).toEqual([CROWD, CROWD - 1, CROWD - 2, CROWD - 3, CROWD - 4].map((g) => `crowd-${g}`))
  })

  test('find_documents and find_sections say so on every page; a narrow query does not', async () => {
    await seed()
    const { client } = await userOf('wide')
    const first = await call(client, 'find_documents', { query: 'commonword', limit: 5 })
    expect(first.isError).toBe(false)
    expect(notesOf(first.text)).toEndWith(notes.narrowedSearch(BROAD))
    const cursor = /cursor: "([^"]+)"/.exec(first.text)?.[1]
    expect(cursor).toBeDefined()
    const second = await call(client, 'find_documents', { query: 'commonword', limit: 5, cursor })
    expect(notesOf(second.text)).toEndWith(notes.narrowedSearch(BROAD))
    const third = await call(client, 'find_documents', {
      query: 'commonword',
      limit: 5,
      cursor: /cursor: "([^"]+)"/.exec(second.text)?.[1],
    })
    expect(notesOf(third.text)).toEndWith(notes.narrowedSearch(BROAD))
    const sections = await call(client, 'find_sections', { query: 'commonword', limit: 2 })
    expect(notesOf(sections.text)).toContain(notes.narrowedSearch(BROAD))
    const narrow = await call(client, 'find_documents', { query: 'commonword rareword' })
    expect(narrow.text).toContain('wide-100')
    expect(narrow.text).not.toContain('[Broad query')
  })

  test("the web page's search says how many documents it ranked among", async () => {
    await seed()
    const { token } = await userOf('wide')
    const get = (q: string) =>
      fetch(`${server.url}/api/documents?q=${encodeURIComponent(q)}`, {
        headers: { Authorization: `Bearer ${token}` },
      }).then((res) => res.json() as Promise<{ narrowed?: number; documents: unknown[] }>)
    expect((await get('commonword')).narrowed).toBe(MAX_RANKED_DOCUMENTS)
    const narrow = await get('commonword rareword')
    expect(narrow.narrowed).toBeUndefined()
    expect(narrow.documents).toHaveLength(1)
  })

  test('a snapshot cursor carries how the run was narrowed; a forged count is refused', () => {
    const binding = { query: 'q', scope: 'mine' as const, limit: 5 }
    const snapshot = { ...binding, stage: 'snapshot' as const, snapshotId: crypto.randomUUID(), offset: 5 }
    for (const narrowed of [BROAD, { ranked: 17, among: 'matches' as const }]) {
      const decoded = decodeCursor(encodeCursor({ ...snapshot, capped: false, narrowed }), binding)
      expect(decoded.kind === 'ok' && decoded.value).toMatchObject({ narrowed })
    }
    const plain = encodeCursor({ ...snapshot, capped: false, narrowed: null })
    expect(JSON.parse(Buffer.from(plain, 'base64url').toString()).w).toBeUndefined()
    const decoded = decodeCursor(plain, binding)
    expect(decoded.kind === 'ok' && decoded.value).toMatchObject({ narrowed: null })
    for (const forgery of [{ w: MAX_RANKED_DOCUMENTS + 1 }, { w: 0 }, { w: 2.5 }, { x: 1 }]) {
      const forged = { ...JSON.parse(Buffer.from(plain, 'base64url').toString()), ...forgery }
      const refused = decodeCursor(Buffer.from(JSON.stringify(forged)).toString('base64url'), binding)
      expect(refused.kind).toBe('error')
    }
  })
})
