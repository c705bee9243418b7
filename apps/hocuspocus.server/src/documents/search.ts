/**
 * Finding documents (find_documents' and find_sections' queries). A query is its terms as written
 * (search-query.ts: white-space-separated, `"phrases"`, `-exclusions`, Markdown's backslash escapes
 * dropped); the match and the rank are search-rank.ts's over the text's chunks: every term as written
 * (ILIKE, pg_trgm) or every word in some form ('english' full text), ranked exact phrase, whole
 * tokens, other forms, part of a word, a title before the text at each, then ts_rank_cd. Ties: most
 * recently changed content, then slug. A search ranks at most MAX_RANKED_DOCUMENTS documents: a broad
 * query's are the most recently changed in scope, and it says so (searchDocuments). Page one is a LIMIT
 * query; the rest of a run reads a snapshot of the
 * ordered ids taken when page two is asked for (find_snapshots), so edits between pages cannot reorder what
 * is left. Raw SQL because Prisma has no tsvector type; every value is a bound parameter. Who may see a row
 * is access.ts's `readableBy`, ANDed into every query here; the scope only narrows it.
 */
import { cutText } from '@collab/doc-schema'
import type { PrismaClient } from '../db/generated/client.ts'
import { Prisma } from '../db/generated/client.ts'
import type { MemberRole } from '../db/generated/enums.ts'
import { storableText } from '../db/storable-text.ts'
import { SEARCH_TRANSACTION } from '../db/transactions.ts'
import {
  MAX_FIND_TEXT_CHARS,
  MAX_RANKED_DOCUMENTS,
  MAX_RANKED_TEXT_BYTES,
  MAX_SEARCH_CANDIDATES,
  SEARCH_STATEMENT_TEXT_BYTES,
} from '../limits.ts'
import { readableBy, withMembership } from './access.ts'
import type { DocumentRow } from './rows.ts'
import { searchChunks, searchChunksInSlices } from './search-chunks.ts'
import { type ParsedQuery, parseTerms } from './search-query.ts'
import {
  documentMatchSql,
  exclusionsSql,
  matchingIdsSql,
  rankJoinSql,
  rankSql,
  type SnippetRow,
  snippetsSql,
  textBytesOf,
} from './search-rank.ts'
import { type StemSectionsInput, stemSections } from './search-sections.ts'

export { queryTerms } from './search-query.ts'

/**
 * A paging run's snapshot lives this long; an older cursor is refused with "start over", and older
 * snapshots are deleted as new ones are taken.
 */
export const FIND_SNAPSHOT_TTL_MS = 60 * 60_000

/** The headings of the row's stored outline, one text (null without an outline). */
const headingsSql = Prisma.sql`(SELECT string_agg(heading #>> '{}', ' ')
    FROM document_states s, jsonb_path_query(s.outline, 'strict $.**.title', '{}', true) AS heading
   WHERE s.document_id = documents.id)`

/**
 * The documents row's search column, for the store step's `UPDATE documents SET title = …, <this> WHERE
 * id = …`: search_vector ('simple': the title and the headings of the stored outline, weight A), which
 * ranks a heading's words above the text's (the text's own are in its chunks, search-chunks.ts). The
 * headings come from document_states.outline (compaction writes it just before; a refresh between
 * compactions reads the last one). Not indexed: it ranks matches, it never finds them.
 */
export function searchVectorSql(title: string): Prisma.Sql {
  return Prisma.sql`search_vector = setweight(to_tsvector('simple', ${storableText(title)}), 'A')
                                 || setweight(to_tsvector('simple', coalesce(${headingsSql}, '')), 'A')`
}

/**
 * The search chunks of a document's title and text (readPlainText of the content): its first
 * MAX_FIND_TEXT_CHARS characters, as PostgreSQL can store them.
 */
export function documentSearchChunks(title: string, text: string) {
  return searchChunks(...searchInput(title, text))
}

/** The same, in slices of the event loop's turns (searchChunksInSlices). */
export function documentSearchChunksInSlices(title: string, text: string) {
  return searchChunksInSlices(...searchInput(title, text))
}

/** What the chunks are made of: the title and text as PostgreSQL can store them, the text cut. */
const searchInput = (title: string, text: string): [string, string] => [
  storableText(title),
  cutText(storableText(text), MAX_FIND_TEXT_CHARS),
]

/** A listed document (its `room` is how find_sections opens the content; never shown) and the caller's role. */
export type FoundRow = Omit<DocumentRow, 'deletedAt' | 'createdAt' | 'updatedAt'> & {
  role: MemberRole | null
}

/** `mine`: documents the user owns or is a member of; `public`: every public document. */
export type FindScope = 'mine' | 'public'

export type SearchInput = {
  userId: string
  scope: FindScope
  /** The query's terms (queryTerms: `-` marks an exclusion), or null for "everything in scope". */
  terms: string[] | null
  /** Documents created after this are left out of the run. */
  asOf: Date
  take: number
}

export type SnapshotSliceInput = { snapshotId: string; userId: string; offset: number; count: number }

/** Ids and snapshot ids are UUIDs; anything else names no row and is not sent to SQL (a cast would fail). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const selected = Prisma.sql`
  d.id::text AS id, d.room, d.slug, d.title, d.owner_id::text AS "ownerId", d.is_private AS "isPrivate",
  d.read_only AS "readOnly", d.content_updated_at AS "contentUpdatedAt", m.role::text AS role`

/**
 * The documents shared with the user, as ids looked up in the primary key. Written as an array built
 * first (an InitPlan) because a join let the planner hash the members and scan every document.
 */
const sharedWith = (userId: string) => Prisma.sql`
  d.id = ANY(ARRAY(SELECT document_id FROM document_members WHERE user_id = ${userId}::uuid))`

const where = (conditions: Prisma.Sql[]) => Prisma.join(conditions, ' AND ')

/**
 * What a scope narrows the readable documents to, as one condition (rows by id, and scope public). The
 * listing of scope mine states it as two branches instead, one per index (see listingSql).
 */
const inScope = (scope: FindScope, userId: string) =>
  scope === 'mine'
    ? Prisma.sql`(d.owner_id = ${userId}::uuid OR m.role IS NOT NULL)`
    : Prisma.sql`d.is_private = false`

/**
 * The SQL of the listing without a query: the first `take` documents in scope, most recently changed first
 * (exported so the bench can EXPLAIN exactly this). Also the documents a broad query is ranked among.
 *
 * Scope mine is two branches, each ordered and cut by its own index, merged: documents the user owns
 * (the owner_id, content_updated_at, slug index) and documents shared with them (the members' user_id
 * index, then the primary key). One `owner = me OR member` condition over a join cannot use either index
 * and scanned the whole documents table (found by the bench's EXPLAIN check).
 */
export function listingSql(input: Omit<SearchInput, 'terms'>): Prisma.Sql {
  const { userId, take } = input
  const common = [readableBy(userId), Prisma.sql`d.created_at <= ${input.asOf}`]
  const from = withMembership(userId)
  const order = Prisma.sql`ORDER BY d.content_updated_at DESC, d.slug ASC LIMIT ${take}`
  if (input.scope === 'public') {
    return Prisma.sql`SELECT ${selected} ${from} WHERE ${where([...common, inScope('public', userId)])} ${order}`
  }
  return Prisma.sql`
    SELECT id, room, slug, title, "ownerId", "isPrivate", "readOnly", "contentUpdatedAt", role FROM (
      (SELECT ${selected} ${from} WHERE ${where([...common, Prisma.sql`d.owner_id = ${userId}::uuid`])} ${order})
      UNION ALL
      (SELECT ${selected} ${from}
        WHERE ${where([...common, sharedWith(userId), Prisma.sql`d.owner_id <> ${userId}::uuid`])}
        ${order})
    ) found
    ORDER BY "contentUpdatedAt" DESC, slug ASC
    LIMIT ${take}`
}

/** A query's input with its terms parsed (terms that did not come through queryTerms cleaned here too). */
function parsedQuery(terms: string[] | null): ParsedQuery | null {
  return terms?.length ? parseTerms(terms.map(storableText)) : null
}

/**
 * A query's matches in scope as found through the chunks' indexes, as CTEs: `written` and `stemmed`, the
 * matches each kind of index names (search-rank.ts matchingIdsSql), server-wide, up to
 * MAX_SEARCH_CANDIDATES + 1 each (in no order; a document may count more than once, found two ways: a
 * plain word is found both as written and in some form); `readable`, the documents the user may read in
 * the scope (excluded terms are checked as they are ranked), at most MAX_RANKED_DOCUMENTS + 1, each with
 * its text's bytes; and
 * `matched`, one row: `candidates`, the larger of the two counts (past MAX_SEARCH_CANDIDATES when a way
 * through documents of several chunks overflowed: matchingIdsSql), `readable`, how many, and of them, most
 * recently changed first (then slug, as bytes), those within MAX_RANKED_TEXT_BYTES of text (at least
 * one): `ids` (uuid[]) and their `bytes` (int[]), and `first`, as many of them as one ranking statement
 * ranks (at most RANK_SLICE_DOCUMENTS, and SEARCH_STATEMENT_TEXT_BYTES of text after the first). When
 * neither count is past its ceiling, the readable ones are all the query's matches.
 */
function matchedSql(input: SearchInput & { query: ParsedQuery }): Prisma.Sql {
  const { userId, query } = input
  const conditions = [
    // An array built first (an InitPlan), looked up in the primary key: as a semi-join the planner hashed
    // the candidates and scanned every document (the EXPLAIN test).
    Prisma.sql`d.id = ANY(ARRAY(SELECT id FROM candidates))`,
    readableBy(userId),
    inScope(input.scope, userId),
    Prisma.sql`d.created_at <= ${input.asOf}`,
  ]
  const { ctes, written, stemmed, overflow } = matchingIdsSql(query)
  const read = (ids: Prisma.Sql) =>
    Prisma.sql`SELECT id FROM (${ids}) found(id) LIMIT ${MAX_SEARCH_CANDIDATES + 1}`
  const kept = Prisma.sql`o.n = 1 OR o.through <= ${MAX_RANKED_TEXT_BYTES}`
  const inFirst = Prisma.sql`o.n <= ${RANK_SLICE_DOCUMENTS} AND (o.n = 1 OR o.through <= ${SEARCH_STATEMENT_TEXT_BYTES})`
  return Prisma.sql`
    WITH ${Prisma.join(ctes, ', ')},
    written AS MATERIALIZED (${read(written)}),
    stemmed AS MATERIALIZED (${stemmed ? read(stemmed) : Prisma.sql`SELECT NULL::uuid AS id WHERE false`}),
    candidates AS (SELECT id FROM written UNION ALL SELECT id FROM stemmed),
    readable AS MATERIALIZED (
      SELECT d.id, d.content_updated_at AS changed, d.slug, ${textBytesOf(Prisma.sql`d.id`)} AS bytes
        ${withMembership(userId)} WHERE ${where(conditions)}
       LIMIT ${MAX_RANKED_DOCUMENTS + 1}),
    ordered AS MATERIALIZED (
      SELECT id, bytes, row_number() OVER w AS n, sum(bytes) OVER w AS through
        FROM readable WINDOW w AS (ORDER BY changed DESC, slug COLLATE "C" ROWS UNBOUNDED PRECEDING)),
    matched AS MATERIALIZED (
      SELECT CASE WHEN ${Prisma.join(overflow, ' OR ')} THEN ${MAX_SEARCH_CANDIDATES + 1}
                  ELSE greatest((SELECT count(*) FROM written), (SELECT count(*) FROM stemmed)) END::int AS candidates,
             (SELECT count(*) FROM readable)::int AS readable,
             ARRAY(SELECT o.id FROM ordered o WHERE ${kept} ORDER BY o.n) AS ids,
             ARRAY(SELECT o.bytes FROM ordered o WHERE ${kept} ORDER BY o.n) AS bytes,
             ARRAY(SELECT o.id FROM ordered o WHERE ${inFirst} ORDER BY o.n) AS first)`
}

/**
 * Documents one ranking statement ranks at most: a search ranking more (up to MAX_RANKED_DOCUMENTS) ranks
 * them this many a statement, and fewer when their text is more than SEARCH_STATEMENT_TEXT_BYTES
 * (textSlices), and merges the orders, so other work on the database (PGlite's one session: stores, other
 * people's reads) waits at most one slice: ~35 ms on PGlite for 2,000-character documents.
 */
export const RANK_SLICE_DOCUMENTS = 250

/**
 * The ids in order cut into runs for one statement each: at most `maxDocuments` a run, and no more than
 * `maxBytes` of text (`bytes`, the ids' own) unless one document alone is more. The same rule as
 * matchedSql's `first`, so its first run is the one that statement ranked.
 */
export function textSlices(
  ids: readonly string[],
  bytes: readonly number[],
  maxDocuments = RANK_SLICE_DOCUMENTS,
  maxBytes = SEARCH_STATEMENT_TEXT_BYTES,
): string[][] {
  const slices: string[][] = []
  let slice: string[] = []
  let sliceBytes = 0
  ids.forEach((id, i) => {
    const size = bytes[i] ?? 0
    if (slice.length > 0 && (slice.length >= maxDocuments || sliceBytes + size > maxBytes)) {
      slices.push(slice)
      slice = []
      sliceBytes = 0
    }
    slice.push(id)
    sliceBytes += size
  })
  if (slice.length > 0) slices.push(slice)
  return slices
}

/** How many of the ids in order (their `bytes`) one search ranks: those within MAX_RANKED_TEXT_BYTES, at least one. */
function withinRankedText(bytes: readonly number[]): number {
  let total = 0
  for (let i = 0; i < bytes.length; i++) {
    total += bytes[i]!
    if (i > 0 && total > MAX_RANKED_TEXT_BYTES) return i
  }
  return bytes.length
}

/**
 * A query's first `take` matches in order among the documents `ids` (an SQL uuid[]), each checked again:
 * readable, in scope, unless the indexes `matched` them matching (documentMatchSql), and without excluded
 * terms (exclusionsSql, in the same pass over its chunks as the rank); `gate` conditions first (a statement's own, see searchSql). Each row with its rank (real), in
 * byRank's order (slugs compared as bytes, as JavaScript compares them: slices merge into the same order).
 */
function rankedAmong(
  input: SearchInput & { query: ParsedQuery },
  ids: { sql: Prisma.Sql; matched: boolean },
  gate: Prisma.Sql[] = [],
): Prisma.Sql {
  const { userId, query } = input
  const rank = Prisma.sql`(${rankSql(query)})::real`
  const conditions = [
    ...gate,
    Prisma.sql`d.id = ANY(${ids.sql})`,
    readableBy(userId),
    inScope(input.scope, userId),
    Prisma.sql`d.created_at <= ${input.asOf}`,
    // Documents the indexes matched are not matched again.
    ...(ids.matched ? [] : [documentMatchSql(query)]),
    ...exclusionsSql(query),
  ]
  return Prisma.sql`
    SELECT ${selected}, ${rank} AS rank ${withMembership(userId)} ${rankJoinSql(query, !ids.matched)}
     WHERE ${where(conditions)}
     ORDER BY ${rank} DESC, d.content_updated_at DESC, d.slug COLLATE "C" ASC
     LIMIT ${input.take}`
}

/**
 * The SQL of a query's search, its first statement (exported so the bench and the tests can EXPLAIN
 * exactly this): its matches through the indexes (matchedSql), and unless the query is broad the first
 * `take` in order of matchedSql's `first` of them. Always one row at least, each with `candidates`,
 * `matched` (how many readable matches were read, up to MAX_RANKED_DOCUMENTS + 1), `ranked` (how many of
 * them are within MAX_RANKED_TEXT_BYTES), and `rest` and `restBytes`, the ids of those this statement did
 * not rank and their text's bytes (later slices': searchDocuments); then the found document's columns and
 * rank, null in the one row of a query with no match or a broad one.
 */
export function searchSql(input: SearchInput & { query: ParsedQuery }): Prisma.Sql {
  const notBroad = Prisma.sql`mt.candidates <= ${MAX_SEARCH_CANDIDATES}
    AND mt.readable <= ${MAX_RANKED_DOCUMENTS}`
  const first = { sql: Prisma.sql`mt.first`, matched: true }
  const after = Prisma.sql`cardinality(mt.first) + 1`
  return Prisma.sql`${matchedSql(input)}
    SELECT mt.candidates, mt.readable AS matched, cardinality(mt.ids) AS ranked,
           CASE WHEN ${notBroad} THEN mt.ids[${after}:]::text[] END AS rest,
           CASE WHEN ${notBroad} THEN mt.bytes[${after}:] END AS "restBytes",
           r.*
      FROM matched mt
      LEFT JOIN LATERAL (${rankedAmong(input, first, [notBroad])}) r ON true
     ORDER BY r.rank DESC, r."contentUpdatedAt" DESC, r.slug COLLATE "C" ASC`
}

/** The SQL of textBytes: each id's text bytes (textBytesOf), in the ids' order. */
export function textBytesSql(ids: readonly string[]): Prisma.Sql {
  return Prisma.sql`SELECT ${textBytesOf(Prisma.sql`i.id`)} AS bytes
    FROM unnest(${ids}::uuid[]) WITH ORDINALITY AS i(id, n) ORDER BY i.n`
}

/**
 * A statement's rows, planned with sequential scans priced out (`SET LOCAL enable_seqscan = off`, in a
 * transaction of its own): searchSql's matching, whose conditions read the chunks' text. The planner
 * prices a row by its heap tuple, not by the TOASTed text a condition on it reads, so a table of few but
 * long chunks (40 documents of ~800,000 characters: 1,200 chunks, 32 MB) looks cheaper to scan than to
 * search by its indexes, and was scanned whole, every chunk's text read: 380–440 ms a query on PGlite,
 * against ~30 ms through the indexes (EXPLAIN ANALYZE, statistics fresh). Every condition it asks of the
 * chunks has an index; a documents row is found by its key.
 */
export async function throughIndexes<T>(prisma: PrismaClient, sql: Prisma.Sql): Promise<T[]> {
  return prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SET LOCAL enable_seqscan = off`
    return tx.$queryRaw<T[]>(sql)
  }, SEARCH_TRANSACTION)
}

/** The bytes of these documents' search text (0 for one without chunks), in their order. */
async function textBytes(prisma: PrismaClient, ids: readonly string[]): Promise<number[]> {
  if (ids.length === 0) return []
  const rows = await prisma.$queryRaw<Array<{ bytes: number }>>(textBytesSql(ids))
  return rows.map((row) => Number(row.bytes))
}

/** The SQL of a query's first `take` matches in order among these documents (one slice of a ranking). */
export function rankedSql(
  input: SearchInput & { query: ParsedQuery; ids: string[]; matched: boolean },
): Prisma.Sql {
  return rankedAmong(input, { sql: Prisma.sql`${input.ids}::uuid[]`, matched: input.matched })
}

/**
 * How a search was narrowed: the rows are the best matches among the `ranked` most recently changed
 * documents, `among` those in scope (the query is broad: more matches than MAX_RANKED_DOCUMENTS or
 * MAX_SEARCH_CANDIDATES, and the scope holds more than it ranks) or among the query's matches (they hold
 * more than MAX_RANKED_TEXT_BYTES of text).
 */
export type Narrowed = { ranked: number; among: 'scope' | 'matches' }

/** What a search answers: its first `take` documents in order, and how it was narrowed, if it was. */
export type SearchResult = { rows: FoundRow[]; narrowed: Narrowed | null }

type RankedRow = FoundRow & { rank: number }
type SearchRow = RankedRow & {
  candidates: number
  matched: number
  ranked: number
  rest: string[] | null
  restBytes: number[] | null
}

/** A found row without what the statements added to it. */
const foundRow = ({ rank: _rank, ...row }: RankedRow): FoundRow => row

/** The ranking statements' order: rank, then most recently changed, then slug (as bytes). */
function byRank(a: RankedRow, b: RankedRow): number {
  if (a.rank !== b.rank) return b.rank - a.rank
  const changed = new Date(b.contentUpdatedAt).getTime() - new Date(a.contentUpdatedAt).getTime()
  if (changed !== 0) return changed
  return a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0
}

/**
 * The first `take` in order among these documents (ids in order with their text's bytes), ranked a
 * textSlices run a statement, merged with the `ranked` rows already in hand (the first statement's).
 */
async function rankInSlices(
  prisma: PrismaClient,
  input: SearchInput & { query: ParsedQuery; ids: string[]; bytes: number[]; matched: boolean },
  ranked: RankedRow[] = [],
): Promise<FoundRow[]> {
  const rows = [...ranked]
  for (const ids of textSlices(input.ids, input.bytes)) {
    rows.push(...(await prisma.$queryRaw<RankedRow[]>(rankedSql({ ...input, ids }))))
  }
  return rows.sort(byRank).slice(0, input.take).map(foundRow)
}

/**
 * The first `take` matches in order. Without a query the listing. With one, its matches from the indexes,
 * the first slice of them ranked in the same statement (searchSql), the rest in slices (rankInSlices); a
 * broad query's are not all read: it is ranked among the most recently changed documents in scope
 * (listingSql), each checked for the match. Either way at most MAX_RANKED_TEXT_BYTES of text is ranked,
 * most recently changed first, and a search cut by it says so. Every statement is bounded:
 * MAX_SEARCH_CANDIDATES chunks read from each kind of index, RANK_SLICE_DOCUMENTS documents and
 * SEARCH_STATEMENT_TEXT_BYTES of their text ranked.
 */
export async function searchDocuments(prisma: PrismaClient, input: SearchInput): Promise<SearchResult> {
  const query = parsedQuery(input.terms)
  if (!query) return { rows: await prisma.$queryRaw<FoundRow[]>(listingSql(input)), narrowed: null }
  const found = await throughIndexes<SearchRow>(prisma, searchSql({ ...input, query }))
  const head = found[0]
  if (!head) return { rows: [], narrowed: null }
  if (head.candidates <= MAX_SEARCH_CANDIDATES && head.matched <= MAX_RANKED_DOCUMENTS) {
    const ranked = found.flatMap(
      ({ candidates: _c, matched: _m, ranked: _k, rest: _r, restBytes: _b, ...row }) =>
        row.id === null ? [] : [row],
    )
    const narrowed: Narrowed | null =
      head.ranked < head.matched ? { ranked: head.ranked, among: 'matches' } : null
    const rest = head.rest ?? []
    if (rest.length === 0) return { rows: ranked.map(foundRow), narrowed }
    const bytes = (head.restBytes ?? []).map(Number)
    const rows = await rankInSlices(prisma, { ...input, query, ids: rest, bytes, matched: true }, ranked)
    return { rows, narrowed }
  }
  const recent = await prisma.$queryRaw<FoundRow[]>(listingSql({ ...input, take: MAX_RANKED_DOCUMENTS + 1 }))
  const inScope = recent.slice(0, MAX_RANKED_DOCUMENTS).map((row) => row.id)
  const inScopeBytes = await textBytes(prisma, inScope)
  const count = withinRankedText(inScopeBytes)
  const ids = inScope.slice(0, count)
  const rows = await rankInSlices(prisma, {
    ...input,
    query,
    ids,
    bytes: inScopeBytes.slice(0, count),
    matched: false,
  })
  const cut = recent.length > MAX_RANKED_DOCUMENTS || count < inScope.length
  return { rows, narrowed: cut ? { ranked: count, among: 'scope' } : null }
}

/** The SQL of documentsByIds. */
export function documentsByIdsSql(input: { userId: string; scope: FindScope; ids: string[] }): Prisma.Sql {
  const conditions = [
    readableBy(input.userId),
    inScope(input.scope, input.userId),
    Prisma.sql`d.id = ANY(${input.ids}::uuid[])`,
  ]
  return Prisma.sql`SELECT ${selected} ${withMembership(input.userId)} WHERE ${where(conditions)}`
}

/** The rows of these documents that the user can still see (in no particular order). */
export async function documentsByIds(
  prisma: PrismaClient,
  input: { userId: string; scope: FindScope; ids: string[] },
): Promise<FoundRow[]> {
  const ids = input.ids.filter((id) => UUID.test(id))
  if (ids.length === 0) return []
  return prisma.$queryRaw<FoundRow[]>(documentsByIdsSql({ ...input, ids }))
}

/** Stores a run's remaining order; drops snapshots past their lifetime on the way. */
export async function createSnapshot(
  prisma: PrismaClient,
  userId: string,
  documentIds: string[],
): Promise<string> {
  await prisma.findSnapshot.deleteMany({
    where: { createdAt: { lt: new Date(Date.now() - FIND_SNAPSHOT_TTL_MS) } },
  })
  const created = await prisma.findSnapshot.create({ data: { userId, documentIds }, select: { id: true } })
  return created.id
}

/** The SQL of readSnapshotSlice. */
export function snapshotSliceSql(input: SnapshotSliceInput): Prisma.Sql {
  return Prisma.sql`
    SELECT (document_ids[${input.offset + 1}:${input.offset + input.count}])::text[] AS ids,
           coalesce(array_length(document_ids, 1), 0) AS total
      FROM find_snapshots
     WHERE id = ${input.snapshotId}::uuid AND user_id = ${input.userId}::uuid
       AND created_at >= ${new Date(Date.now() - FIND_SNAPSHOT_TTL_MS)}`
}

/** `count` ids from `offset` of the user's live snapshot, and its length; null when gone or expired. */
export async function readSnapshotSlice(
  prisma: PrismaClient,
  input: SnapshotSliceInput,
): Promise<{ ids: string[]; total: number } | null> {
  if (!UUID.test(input.snapshotId)) return null
  const rows = await prisma.$queryRaw<Array<{ ids: string[] | null; total: number | null }>>(
    snapshotSliceSql(input),
  )
  const row = rows[0]
  return row ? { ids: row.ids ?? [], total: Number(row.total ?? 0) } : null
}

/** A found document's snippet: at most `chars` characters around the match, `…` where cut. */
export type Snippets = Map<string, string>

/**
 * The snippets of these documents (a page of found rows) for the query's terms: the text around the
 * first place search-rank.ts's snippetsSql finds, white space collapsed, at most `chars` characters plus
 * the ellipses, found in statements of SEARCH_STATEMENT_TEXT_BYTES of text (textSlices). A document
 * without search chunks yet has none.
 */
export async function documentSnippets(
  prisma: PrismaClient,
  input: { ids: string[]; terms: string[]; chars: number },
): Promise<Snippets> {
  const ids = input.ids.filter((id) => UUID.test(id))
  const query = parseTerms(input.terms.map(storableText))
  if (ids.length === 0 || query.include.length === 0) return new Map()
  // In statements of at most SEARCH_STATEMENT_TEXT_BYTES of text (a page of long documents is tens of MB).
  const snippets: Snippets = new Map()
  for (const slice of textSlices(ids, await textBytes(prisma, ids), ids.length)) {
    const rows = await prisma.$queryRaw<SnippetRow[]>(snippetsSql({ ids: slice, query, chars: input.chars }))
    for (const row of rows) snippets.set(row.id, cutSnippet(row, input.chars))
  }
  return snippets
}

/** A snippet row as shown: one line, at most `chars` characters, `…` where the text goes on. */
function cutSnippet(row: SnippetRow, chars: number): string {
  // The database sends one character (code point) more than shown when the text goes on past it.
  const more = [...row.text].length > chars
  const line = row.text.replace(/[\s\p{Cc}]+/gu, ' ').trim()
  const shown = cutText(line, chars).trimEnd()
  return `${row.cutBefore ? '…' : ''}${shown}${more ? '…' : ''}`
}

/** find_documents' queries and its paging snapshots, bound to the database: `services.search`. */
export function createSearchService(prisma: PrismaClient) {
  return {
    /** The first `take` matches in order (or the listing), and whether a broad query was narrowed. */
    search: (input: SearchInput) => searchDocuments(prisma, input),
    /** The rows of these documents the user can still see, in no particular order. */
    byIds: (input: { userId: string; scope: FindScope; ids: string[] }) => documentsByIds(prisma, input),
    /** Stores a run's remaining order; returns the snapshot id. */
    createSnapshot: (userId: string, documentIds: string[]) => createSnapshot(prisma, userId, documentIds),
    readSnapshotSlice: (input: SnapshotSliceInput) => readSnapshotSlice(prisma, input),
    /** Snippets around the match of these documents (a page of found rows), by id. */
    snippets: (input: { ids: string[]; terms: string[]; chars: number }) => documentSnippets(prisma, input),
    /** Which sections of one document match the terms in another form (find_sections' fallback). */
    stemSections: (input: StemSectionsInput) => stemSections(prisma, input),
  }
}

export type SearchService = ReturnType<typeof createSearchService>
