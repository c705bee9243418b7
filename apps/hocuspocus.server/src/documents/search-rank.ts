/**
 * The SQL of a query's match, rank and snippet over the documents row `d` (search.ts puts them in its
 * statements). The text is searched in its chunks (document_search_chunks, search-chunks.ts: the title, a
 * newline and the text, cut into ~32 K-character pieces that overlap by more than a query), each with
 * PostgreSQL's own tool for one part:
 * - body (pg_trgm GIN index): every term as written, case-insensitively, anywhere (`ILIKE`), which full
 *   text misses (code identifiers, `6.14.1`, `fs.stat`, `ERR_INVALID_CHAR`, scripts written without
 *   spaces), and the regular expressions that tell a whole token from part of one;
 * - stem ('english' tsvector, GIN index): other forms of a word (parsing ~ parse), phrases through
 *   websearch_to_tsquery;
 * - words ('simple' tsvector, weight B, not indexed) with the documents row's search_vector (title and
 *   headings, weight A): ts_rank_cd, the order within a tier.
 * A document matches when it holds every term as written, or every word in some form (the stemmed
 * query; terms with digits or punctuation as written), and no excluded term as a whole token: each term
 * in any of its chunks (a phrase lies whole in one, as the chunks overlap). Its rank is tiered, highest
 * first: the terms as an exact phrase (whole tokens, white space between), every term as a whole token,
 * every word in some form, every term only inside longer words; ×10, then the same tiers for the title
 * alone ×2 (its lowest: every term anywhere in it; so within a tier a title match comes first), then
 * ts_rank_cd normalised to [0, 1). Every value is a bound parameter.
 */
import { Prisma } from '../db/generated/client.ts'
import { MAX_SEARCH_CANDIDATE_PARTS, MAX_SEARCH_CHECKED_TEXT_BYTES } from '../limits.ts'
import {
  anywherePattern,
  byStemmability,
  containsPattern,
  type ParsedQuery,
  phrasePattern,
  webSearchString,
  wholeTermPattern,
} from './search-query.ts'

const all = (conditions: Prisma.Sql[]) => Prisma.join(conditions, ' AND ')

/** The ids of documents with a chunk `c` where `condition` holds. */
const idsWhere = (condition: Prisma.Sql) =>
  Prisma.sql`SELECT c.document_id FROM document_search_chunks c WHERE ${condition}`

/**
 * What `aggregate` (of bool_or over the chunks `c`) says of the document `d`'s chunks, false without any:
 * one scalar subquery by the chunks' key per row, where it is asked. An EXISTS here was planned as a hashed
 * subplan, a scan of every chunk in the database whatever the rows (a stemmed word's: 0.66 s over 40,000
 * documents, EXPLAIN ANALYZE).
 */
const ofItsChunks = (aggregate: Prisma.Sql) =>
  Prisma.sql`coalesce((SELECT ${aggregate} FROM document_search_chunks c WHERE c.document_id = d.id), false)`

/**
 * A stemmed query: the terms as one web search string (each quoted: a phrase stays a phrase), by the
 * 'english' configuration. An uncorrelated subquery, so it is computed once and the GIN index can use it.
 * Stop words only: an empty query (numnode 0), which matches nothing (PostgreSQL says so in a notice).
 */
const stemQuery = (terms: readonly string[]) =>
  Prisma.sql`(SELECT websearch_to_tsquery('english', ${webSearchString(terms)}))`

/** The same by the 'simple' configuration (words as written, lower-cased): what ts_rank_cd ranks by. */
const simpleQuery = (terms: readonly string[]) =>
  Prisma.sql`(SELECT websearch_to_tsquery('simple', ${webSearchString(terms)}))`

/** A chunk `alias` holds this word in some form; a stop word (an empty query) holds everywhere. */
const holdsStem = (word: string, alias = 'c') => {
  const query = stemQuery([word])
  return Prisma.sql`(numnode(${query}) = 0 OR ${Prisma.raw(alias)}.stem @@ ${query})`
}

/** A chunk `alias` holds the term as written. */
const asWrittenIn = (term: string, alias = 'c') =>
  Prisma.sql`${Prisma.raw(alias)}.body ILIKE ${containsPattern(term)}`

/**
 * The bytes of a document's search text (its chunks' bodies, overlaps included; `id` an SQL uuid): what
 * ranking it, checking its match or finding its snippet reads. octet_length of a stored value reads its
 * size from the TOAST pointer, without reading the text (~3 ms for 32 MB of chunks, against ~50 ms for
 * char_length).
 */
export const textBytesOf = (id: Prisma.Sql) => Prisma.sql`(SELECT coalesce(sum(octet_length(c.body)), 0)
    FROM document_search_chunks c WHERE c.document_id = ${id})::int`

/** A condition over a chunk alias. */
type ChunkCondition = (alias: string) => Prisma.Sql

/**
 * What a document must hold in some chunk: `inChunk`, a condition an index answers, unless `everywhere`
 * (a stop word's empty query holds in every document).
 */
type Held = { inChunk: ChunkCondition; everywhere?: Prisma.Sql }

/**
 * Documents of several chunks found through one condition's index (`driver`, over the chunk `c`): at most
 * MAX_SEARCH_CANDIDATE_PARTS + 1 of the chunks it names are read, as the CTE `name`. With `others`, the
 * documents they belong to (`name_docs`) must each hold every one of them in some chunk, looked up the
 * same way: the chunks each other condition's index names, also at most MAX_SEARCH_CANDIDATE_PARTS + 1
 * (`name_1`, ...: a rare term, or a term in no document, costs next to nothing); only when a condition
 * holds in more chunks than that are the documents read to look for it (once each, by the chunks' key,
 * until a chunk holds it), and only when their text is at most MAX_SEARCH_CHECKED_TEXT_BYTES. Looked for
 * per chunk found, a document whose every chunk held the driver and none the other term was read once per
 * chunk: a word in every chunk of 40 documents of 30 chunks beside a word in none took 11 s on PGlite.
 * `overflow`: more chunks hold the driver than were read, or a common other term in documents of more text
 * than is checked; the query is then broad (matchedSql), ranked among recent documents, each checked in
 * statements bounded by their text.
 */
function inParts(
  name: string,
  driver: Prisma.Sql,
  others: Held[],
): { ctes: Prisma.Sql[]; ids: Prisma.Sql; overflow: Prisma.Sql } {
  const chunksWhere = (table: Prisma.Sql, condition: Prisma.Sql) => Prisma.sql`${table} AS MATERIALIZED (
      SELECT c.document_id FROM document_search_chunks c
       WHERE NOT c.alone AND ${condition} LIMIT ${MAX_SEARCH_CANDIDATE_PARTS + 1})`
  const tooMany = (table: Prisma.Sql) =>
    Prisma.sql`((SELECT count(*) FROM ${table}) > ${MAX_SEARCH_CANDIDATE_PARTS})`
  const table = Prisma.raw(name)
  if (others.length === 0) {
    return {
      ctes: [chunksWhere(table, driver)],
      ids: Prisma.sql`SELECT document_id FROM ${table}`,
      overflow: tooMany(table),
    }
  }
  const docs = Prisma.raw(`${name}_docs`)
  const otherTables = others.map((_, i) => Prisma.raw(`${name}_${i + 1}`))
  // A scalar subquery by the chunks' key, not EXISTS: that was planned as a hashed subplan over a scan of
  // every chunk's text (EXPLAIN).
  const holds = ({ inChunk, everywhere }: Held, i: number) => {
    const other = otherTables[i]!
    return Prisma.sql`CASE WHEN ${everywhere ?? Prisma.sql`false`} THEN true WHEN ${tooMany(other)}
      THEN coalesce((SELECT true FROM document_search_chunks x
                      WHERE x.document_id = p.document_id AND ${inChunk('x')} LIMIT 1), false)
      ELSE p.document_id IN (SELECT document_id FROM ${other}) END`
  }
  // The documents' bytes first (no text read): the others' chunks are read only when needed.
  const overflow = Prisma.sql`(${tooMany(table)}
    OR ((SELECT coalesce(sum(bytes), 0) FROM ${docs}) > ${MAX_SEARCH_CHECKED_TEXT_BYTES}
        AND (${Prisma.join(otherTables.map(tooMany), ' OR ')})))`
  return {
    ctes: [
      chunksWhere(table, driver),
      ...others.map(({ inChunk }, i) => chunksWhere(otherTables[i]!, inChunk('c'))),
      Prisma.sql`${docs} AS MATERIALIZED (SELECT p.document_id, ${textBytesOf(Prisma.sql`p.document_id`)} AS bytes
        FROM (SELECT DISTINCT document_id FROM ${table}) p)`,
    ],
    // Past the ceiling none is asked (a one-time filter): the query is broad, these ids are not read.
    ids: Prisma.sql`SELECT p.document_id FROM ${docs} p WHERE NOT ${overflow} AND ${all(others.map(holds))}`,
    overflow,
  }
}

/** The longest of the terms: it drives a search (as a rule the fewest chunks hold it), the others are checked per document. */
const longestFirst = (terms: readonly string[]) => {
  const at = terms.reduce((best, term, i) => (term.length > terms[best]!.length ? i : best), 0)
  return [terms[at]!, ...terms.filter((_, i) => i !== at)] as const
}

/**
 * The ids of documents that may match, each way from its own index, not made unique (ANY takes an id
 * twice as once): those holding the terms as written, and those holding every word in some form. A
 * document of one chunk (`alone`, most documents) and a document of several are searched apart, each
 * through its own partial indexes:
 * - one chunk: every term as written in it, one trigram index scan of all the terms (the index intersects
 *   them, so a term in no document ends the search at once); every word in some form (one GIN query) and
 *   the other terms as written;
 * - several chunks (inParts): the chunks that hold the longest term, at most MAX_SEARCH_CANDIDATE_PARTS,
 *   with a check of the other terms once in each of their documents (any of its chunks, by the key);
 *   every word in some form, driven once by all the words in one chunk and once by the longest word (its
 *   words may lie in different chunks; a stop word there finds nothing, the first way still does).
 * A union of each term's documents read every chunk holding a common word ("the": all of them) and
 * sorted them again; grouping chunks by document did too (~3× the scans, EXPLAIN ANALYZE, 40,000
 * documents); checking the other terms per chunk of the longest for every document read and matched the
 * text of every chunk holding the longest term (a common word and a word in no document: 1.4 s there).
 * `ctes`: inParts' CTEs, before the statement's own; `overflow`: conditions that make the query broad.
 */
function matchingIds(include: readonly string[]): Matching {
  const alone = Prisma.sql`c.alone`
  const [driver, ...rest] = longestFirst(include)
  const asWritten = (term: string): Held => ({ inChunk: (alias) => asWrittenIn(term, alias) })
  const partsWritten = inParts('parts_written', asWrittenIn(driver), rest.map(asWritten))
  const written = [idsWhere(all([alone, ...include.map((term) => asWrittenIn(term))])), partsWritten.ids]
  const { words, others } = byStemmability(include)
  if (words.length === 0) {
    return {
      ctes: partsWritten.ctes,
      written: union(written),
      stemmed: null,
      overflow: [partsWritten.overflow],
    }
  }
  // The tsquery written out, not a subquery: folded when planned, so the planner can weigh the index.
  const allWords = Prisma.sql`c.stem @@ websearch_to_tsquery('english', ${webSearchString(words)})`
  const partsStemmed = [inParts('parts_stemmed', allWords, others.map(asWritten))]
  if (words.length > 1) {
    const [word, ...otherWords] = longestFirst(words)
    partsStemmed.push(
      inParts(
        'parts_word',
        Prisma.sql`c.stem @@ websearch_to_tsquery('english', ${webSearchString([word])})`,
        [
          ...otherWords.map((other): Held => {
            const query = stemQuery([other])
            return {
              inChunk: (alias) => Prisma.sql`${Prisma.raw(alias)}.stem @@ ${query}`,
              everywhere: Prisma.sql`numnode(${query}) = 0`,
            }
          }),
          ...others.map(asWritten),
        ],
      ),
    )
  }
  const stemmed = [
    idsWhere(all([alone, allWords, ...others.map((term) => asWrittenIn(term))])),
    ...partsStemmed.map((parts) => parts.ids),
  ]
  return {
    ctes: [...partsWritten.ctes, ...partsStemmed.flatMap((parts) => parts.ctes)],
    written: union(written),
    stemmed: union(stemmed),
    overflow: [partsWritten.overflow, ...partsStemmed.map((parts) => parts.overflow)],
  }
}

/** What matchingIds finds: see there and matchingIdsSql. */
type Matching = {
  ctes: Prisma.Sql[]
  written: Prisma.Sql
  stemmed: Prisma.Sql | null
  overflow: Prisma.Sql[]
}

const union = (branches: Prisma.Sql[]) =>
  Prisma.join(
    branches.map((branch) => Prisma.sql`(${branch})`),
    ' UNION ALL ',
  )

/**
 * The ids of documents that hold the terms, from the chunks' indexes in no order, each possibly more than
 * once (see matchingIds), in two parts read apart: `written`, through the trigram indexes, where each
 * chunk found is read again to check the text (the index's recheck: the dear part), and `stemmed`,
 * through the full-text indexes, exact without a recheck (null when no term can be stemmed). A search
 * reads a bounded number of each (search.ts). Both read `ctes` (named CTEs, to come first in the WITH);
 * when one of `overflow` holds, some documents of several chunks were not read, and the query is broad.
 */
export function matchingIdsSql(query: ParsedQuery): Matching {
  return matchingIds(query.include)
}

/**
 * The query's excluded terms as conditions over `d`: none of its chunks holds one as a whole token. Asked
 * in the ranking statements, which read each document's chunks in statements bounded by their text (over
 * rankJoinSql's `h`; without terms to find, one pass of its own per document). Asked of every match in
 * the matching statement, it read every chunk of up to 1,000 documents in one statement.
 */
export function exclusionsSql(query: ParsedQuery): Prisma.Sql[] {
  if (query.include.length === 0) {
    return query.exclude.map(
      (term) => Prisma.sql`NOT ${ofItsChunks(Prisma.sql`bool_or(c.body ~* ${wholeTermPattern(term)})`)}`,
    )
  }
  return query.exclude.map((_, i) => Prisma.raw(`NOT coalesce(h.excluded${i}, false)`))
}

/**
 * Every word of the query in some form in the document `d` (its stemmed query not empty), and each other
 * term as written: a match in another form, per document (one pass over its chunks).
 */
function inSomeFormSql(query: ParsedQuery): Prisma.Sql {
  const { words, others } = byStemmability(query.include)
  if (words.length === 0) return Prisma.sql`false`
  return all([
    Prisma.sql`numnode(${stemQuery(words)}) > 0`,
    ofItsChunks(
      all([
        ...words.map((word) => Prisma.sql`bool_or(${holdsStem(word)})`),
        ...others.map((term) => Prisma.sql`bool_or(${asWrittenIn(term)})`),
      ]),
    ),
  ])
}

/**
 * The match of one document `d` (see the file's comment), over rankJoinSql's `h` (withMatch): every term as written
 * in some chunk, else every word in some form. What a search checks of documents it did not find through
 * the indexes (the most recently changed ones of a broad query).
 */
export function documentMatchSql(query: ParsedQuery): Prisma.Sql {
  const asWritten = all(query.include.map((_, i) => Prisma.raw(`coalesce(h.has${i}, false)`)))
  return Prisma.sql`(${asWritten} OR ${inSomeFormSql(query)})`
}

/**
 * What the rank needs of a document's chunks, in one pass over them (a lateral join per ranked row, `h`):
 * whether a chunk holds the exact phrase and each term as a whole token, `withMatch` each term as written
 * (what documentMatchSql reads), whether a chunk holds each excluded term as a whole token (what
 * exclusionsSql reads), and the sum of the chunks' ts_rank_cd. Empty without terms to find.
 */
export function rankJoinSql(query: ParsedQuery, withMatch = false): Prisma.Sql {
  const { include } = query
  if (include.length === 0) return Prisma.empty
  const columns = [
    ...(include.length > 1 ? [Prisma.sql`bool_or(c.body ~* ${phrasePattern(include)}) AS phrase`] : []),
    ...include.map(
      (term, i) => Prisma.sql`bool_or(c.body ~* ${wholeTermPattern(term)}) AS ${Prisma.raw(`whole${i}`)}`,
    ),
    ...(withMatch
      ? include.map((term, i) => Prisma.sql`bool_or(${asWrittenIn(term)}) AS ${Prisma.raw(`has${i}`)}`)
      : []),
    ...query.exclude.map(
      (term, i) => Prisma.sql`bool_or(c.body ~* ${wholeTermPattern(term)}) AS ${Prisma.raw(`excluded${i}`)}`,
    ),
    Prisma.sql`coalesce(sum(ts_rank_cd(c.words, ${simpleQuery(include)}, 0)), 0) AS density`,
  ]
  return Prisma.sql`CROSS JOIN LATERAL (SELECT ${Prisma.join(columns, ', ')}
    FROM document_search_chunks c WHERE c.document_id = d.id) h`
}

/** The tier (3 exact phrase, 2 whole tokens, 1 `lowest`, 0 none); one term: its whole token is the top. */
function tierSql(phrase: Prisma.Sql, whole: Prisma.Sql, lowest: Prisma.Sql, terms: number): Prisma.Sql {
  if (terms === 1) return Prisma.sql`CASE WHEN ${whole} THEN 3 WHEN ${lowest} THEN 1 ELSE 0 END`
  return Prisma.sql`CASE WHEN ${phrase} THEN 3 WHEN ${whole} THEN 2 WHEN ${lowest} THEN 1 ELSE 0 END`
}

/** The rank (see the file's comment) over `d` and rankJoinSql's `h`; 0 without terms to find. */
export function rankSql(query: ParsedQuery): Prisma.Sql {
  const { include } = query
  if (include.length === 0) return Prisma.sql`0`
  // Asked only of a document without every term as a whole token (CASE stops at the first that holds),
  // so per document, not in the one pass: most matches never need it.
  const inSomeForm = inSomeFormSql(query)
  const textTier = tierSql(
    Prisma.raw('coalesce(h.phrase, false)'),
    all(include.map((_, i) => Prisma.raw(`coalesce(h.whole${i}, false)`))),
    inSomeForm,
    include.length,
  )
  const titleTier = tierSql(
    Prisma.sql`d.title ~* ${phrasePattern(include)}`,
    all(include.map((term) => Prisma.sql`d.title ~* ${wholeTermPattern(term)}`)),
    all(include.map((term) => Prisma.sql`d.title ILIKE ${containsPattern(term)}`)),
    include.length,
  )
  const density = Prisma.sql`(coalesce(ts_rank_cd(d.search_vector, ${simpleQuery(include)}, 0), 0) + h.density)`
  // Normalised as ts_rank_cd's own flag 32 does: rank / (rank + 1).
  return Prisma.sql`(10 * (${textTier}) + 2 * (${titleTier}) + ${density} / (${density} + 1))`
}

/** One document's snippet as the database cuts it: `chars + 1` characters from `at` (1-based). */
export type SnippetRow = { id: string; text: string; cutBefore: boolean }

/** A place found in a document: its chunk's n × PLACE_CHUNK + the place (< it: a chunk is shorter). */
const PLACE_CHUNK = 100_000_000

/**
 * The snippets of these documents for a query: `chars + 1` characters of the text (after the title)
 * starting a third of `chars` before the first place found, in this order: the exact phrase, the first
 * term as a whole token, the first term anywhere, a word in the first term's stemmed form (its lexeme as
 * a word's start), else the text's start. Each kind is looked for chunk by chunk in order, and the walk
 * stops at the first chunk that holds it (a recursive walk by n: the planner would otherwise match every
 * chunk before it sorted them); the first kind found wins, so a document's place is the first chunk's of
 * the first kind, as when every chunk was matched with every kind (~30 ms a million characters on PGlite,
 * now a chunk or two where the word is near the start). The snippet reads on into the next chunk. Over
 * the rows of one page only (at most a page of ids).
 */
export function snippetsSql(input: { ids: string[]; query: ParsedQuery; chars: number }): Prisma.Sql {
  const { include } = input.query
  const first = include[0] ?? ''
  const lead = Math.floor(input.chars / 3)
  const patterns: Prisma.Sql[] =
    include.length === 0
      ? []
      : [
          ...(include.length > 1 ? [Prisma.sql`${phrasePattern(include)}`] : []),
          Prisma.sql`${wholeTermPattern(first)}`,
          Prisma.sql`${anywherePattern(first)}`,
          Prisma.sql`(SELECT '(?<![[:alnum:]_])(' || string_agg(
                 regexp_replace(word, '([^[:alnum:]_])', ${'\\\x01'}, 'g'), '|') || ')'
               FROM unnest(tsvector_to_array(to_tsvector('english', ${first}))) AS word)`,
        ]
  // The first place of `pattern` in the document `d`, walking its chunks from n = 0 (t.last: its last n).
  const firstPlace = (pattern: Prisma.Sql) => Prisma.sql`(WITH RECURSIVE walk(n, place) AS (
      SELECT -1, 0
      UNION ALL
      SELECT w.n + 1, coalesce((SELECT regexp_instr(x.body, ${pattern},
                                         CASE WHEN w.n + 1 = 0 THEN t.start ELSE 1 END, 1, 0, 'i')
                                  FROM document_search_chunks x
                                 WHERE x.document_id = d.id AND x.n = w.n + 1), 0)
        FROM walk w WHERE w.place = 0 AND w.n < t.last)
    SELECT n::bigint * ${PLACE_CHUNK} + place FROM walk WHERE place > 0 LIMIT 1)`
  // OFFSET 0 keeps the walk in its own subquery: pulled up, its expression was evaluated twice (EXPLAIN).
  const places = [...patterns.map(firstPlace), Prisma.sql`t.start::bigint`]
  return Prisma.sql`
    SELECT d.id::text AS id,
           substr(c.body || coalesce(nx.rest, ''), p.at, ${input.chars + 1}) AS text,
           (c.n > 0 OR p.at > p.start) AS "cutBefore"
      FROM documents d
      CROSS JOIN LATERAL (SELECT char_length(d.title) + 2 AS start,
                                 (SELECT max(n) FROM document_search_chunks WHERE document_id = d.id) AS last) t
      CROSS JOIN LATERAL (SELECT coalesce(${Prisma.join(places, ', ')}) AS found OFFSET 0) f
      JOIN document_search_chunks c ON c.document_id = d.id AND c.n = (f.found / ${PLACE_CHUNK})::int
      CROSS JOIN LATERAL (SELECT CASE WHEN c.n = 0 THEN t.start ELSE 1 END AS start) b
      CROSS JOIN LATERAL (SELECT b.start, greatest(b.start, (f.found % ${PLACE_CHUNK})::int - ${lead}) AS at) p
      LEFT JOIN LATERAL (SELECT substr(x.body, x.prefix_chars + 1, ${input.chars + 1}) AS rest
                           FROM document_search_chunks x
                          WHERE x.document_id = c.document_id AND x.n = c.n + 1) nx ON true
     WHERE d.id = ANY(${input.ids}::uuid[]) AND t.last IS NOT NULL`
}
