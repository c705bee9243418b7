/**
 * Finding documents (find_documents' and find_sections' queries). A query is its terms as written
 * (search-query.ts: white-space-separated, `"phrases"`, `-exclusions`, Markdown's backslash escapes
 * dropped); the match and the rank are search-rank.ts's over the text's chunks: every term as written
 * (ILIKE, pg_trgm) or every word in some form ('english' full text), ranked exact phrase, whole
 * tokens, other forms, part of a word, a title before the text at each, then ts_rank_cd. Ties: most
 * recently changed content, then slug. Page one is a LIMIT query; the rest of a run reads a snapshot of the
 * ordered ids taken when page two is asked for (find_snapshots), so edits between pages cannot reorder what
 * is left. Raw SQL because Prisma has no tsvector type; every value is a bound parameter. Who may see a row
 * is access.ts's `readableBy`, ANDed into every query here; the scope only narrows it.
 */
import { cutText } from '@collab/doc-schema'
import type { PrismaClient } from '../db/generated/client.ts'
import { Prisma } from '../db/generated/client.ts'
import type { MemberRole } from '../db/generated/enums.ts'
import { storableText } from '../db/storable-text.ts'
import { MAX_FIND_TEXT_CHARS } from '../limits.ts'
import { readableBy, withMembership } from './access.ts'
import type { DocumentRow } from './rows.ts'
import { searchChunks } from './search-chunks.ts'
import { parseTerms } from './search-query.ts'
import { matchSql, rankJoinSql, rankSql, type SnippetRow, snippetsSql } from './search-rank.ts'
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
  return searchChunks(storableText(title), cutText(storableText(text), MAX_FIND_TEXT_CHARS))
}

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
 * What a scope narrows the readable documents to, as one condition (rows by id, and scope public). Page
 * one of scope mine states it as two branches instead, one per index (see searchSql).
 */
const inScope = (scope: FindScope, userId: string) =>
  scope === 'mine'
    ? Prisma.sql`(d.owner_id = ${userId}::uuid OR m.role IS NOT NULL)`
    : Prisma.sql`d.is_private = false`

/**
 * The SQL of the first `take` matches in order (exported so the bench can EXPLAIN exactly this).
 *
 * Scope mine is two branches, each ordered and cut by its own index, merged: documents the user owns
 * (the owner_id, content_updated_at, slug index) and documents shared with them (the members' user_id
 * index, then the primary key). One `owner = me OR member` condition over a join cannot use either index
 * and scanned the whole documents table (found by the bench's EXPLAIN check).
 */
export function searchSql(input: SearchInput): Prisma.Sql {
  const { userId, take } = input
  // Cleaned here too: a caller may pass terms that did not come through queryTerms.
  const terms = input.terms?.length ? input.terms.map(storableText) : null
  const query = terms ? parseTerms(terms) : null
  const common = [readableBy(userId), Prisma.sql`d.created_at <= ${input.asOf}`]
  if (query) common.push(matchSql(query))
  const rank = query ? rankSql(query) : Prisma.sql`0`
  // The documents and the caller's membership, then (with terms) what the rank needs of each one's chunks.
  const from = Prisma.sql`${withMembership(userId)} ${query ? rankJoinSql(query) : Prisma.empty}`
  const order = Prisma.sql`ORDER BY rank DESC, d.content_updated_at DESC, d.slug ASC LIMIT ${take}`
  if (input.scope === 'public') {
    return Prisma.sql`
      SELECT ${selected}, ${rank}::real AS rank ${from}
       WHERE ${where([...common, inScope('public', userId)])}
       ${order}`
  }
  return Prisma.sql`
    SELECT id, room, slug, title, "ownerId", "isPrivate", "readOnly", "contentUpdatedAt", role FROM (
      (SELECT ${selected}, ${rank}::real AS rank ${from}
        WHERE ${where([...common, Prisma.sql`d.owner_id = ${userId}::uuid`])}
        ${order})
      UNION ALL
      (SELECT ${selected}, ${rank}::real AS rank ${from}
        WHERE ${where([...common, sharedWith(userId), Prisma.sql`d.owner_id <> ${userId}::uuid`])}
        ${order})
    ) found
    ORDER BY rank DESC, "contentUpdatedAt" DESC, slug ASC
    LIMIT ${take}`
}

/** The first `take` matches in order. */
export async function searchDocuments(prisma: PrismaClient, input: SearchInput): Promise<FoundRow[]> {
  return prisma.$queryRaw<FoundRow[]>(searchSql(input))
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
 * the ellipses. A document without search chunks yet has none.
 */
export async function documentSnippets(
  prisma: PrismaClient,
  input: { ids: string[]; terms: string[]; chars: number },
): Promise<Snippets> {
  const ids = input.ids.filter((id) => UUID.test(id))
  const query = parseTerms(input.terms.map(storableText))
  if (ids.length === 0 || query.include.length === 0) return new Map()
  const rows = await prisma.$queryRaw<SnippetRow[]>(snippetsSql({ ids, query, chars: input.chars }))
  return new Map(rows.map((row) => [row.id, cutSnippet(row, input.chars)]))
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
