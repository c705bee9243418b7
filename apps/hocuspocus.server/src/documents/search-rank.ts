/**
 * The SQL of a query's match, rank and snippet over the documents row `d` (search.ts puts them in its
 * statements). Three columns, each PostgreSQL's own tool for one part:
 * - search_text (title, a newline, the text; pg_trgm GIN index): every term as written, case-insensitively,
 *   anywhere (`ILIKE`), which full text misses (code identifiers, `6.14.1`, `fs.stat`, `ERR_INVALID_CHAR`,
 *   scripts written without spaces), and the regular expressions that tell a whole token from part of one;
 * - search_stem ('english' tsvector, GIN index): other forms of a word (parsing ~ parse), phrases through
 *   websearch_to_tsquery;
 * - search_vector ('simple' tsvector, title and headings weight A, text B): ts_rank_cd, the order within
 *   a tier.
 * A document matches when it holds every term as written, or every word in some form (the stemmed
 * query; terms with digits or punctuation as written), and no excluded term as a whole token. Its rank is
 * tiered, highest first: the terms as an exact phrase (whole tokens, white space between), every term as
 * a whole token, every word in some form, every term only inside longer words; ×10, then the same tiers
 * for the title alone ×2 (its lowest: every term anywhere in it; so within a tier a title match comes
 * first), then ts_rank_cd normalised to [0, 1). Every value is a bound parameter.
 */
import { Prisma } from '../db/generated/client.ts'
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

/**
 * The stemmed query: the terms as one web search string (each quoted: a phrase stays a phrase), by the
 * 'english' configuration. An uncorrelated subquery, so it is computed once and the GIN index can use it.
 * Stop words only: an empty query, which matches nothing (PostgreSQL says so in a notice).
 */
const stemQuery = (terms: readonly string[]) =>
  Prisma.sql`(SELECT websearch_to_tsquery('english', ${webSearchString(terms)}))`

/** The same by the 'simple' configuration (words as written, lower-cased): what ts_rank_cd ranks by. */
const simpleQuery = (terms: readonly string[]) =>
  Prisma.sql`(SELECT websearch_to_tsquery('simple', ${webSearchString(terms)}))`

/**
 * The terms' match in some form: the stemmed query over the stemmable terms, the others as written. Null
 * when no term is stemmable (then only the as-written match applies).
 */
function inSomeForm(include: readonly string[]): Prisma.Sql | null {
  const { words, others } = byStemmability(include)
  if (words.length === 0) return null
  const stemmed = Prisma.sql`d.search_stem @@ ${stemQuery(words)}`
  if (others.length === 0) return stemmed
  return all([stemmed, ...others.map((term) => Prisma.sql`d.search_text ILIKE ${containsPattern(term)}`)])
}

/** The match: see the file's comment. Without terms to find, every document (exclusions still apply). */
export function matchSql(query: ParsedQuery): Prisma.Sql {
  const conditions: Prisma.Sql[] = []
  const { include, exclude } = query
  if (include.length > 0) {
    const asWritten = all(include.map((term) => Prisma.sql`d.search_text ILIKE ${containsPattern(term)}`))
    const stemmed = inSomeForm(include)
    conditions.push(stemmed ? Prisma.sql`((${asWritten}) OR (${stemmed}))` : Prisma.sql`(${asWritten})`)
  }
  for (const term of exclude) {
    conditions.push(Prisma.sql`NOT coalesce(d.search_text ~* ${wholeTermPattern(term)}, false)`)
  }
  return conditions.length > 0 ? all(conditions) : Prisma.sql`true`
}

/**
 * The tier of `text` (3 exact phrase, 2 whole tokens, 1 `lowest`, 0 none; null text: 0). One term: its
 * whole token is the top tier (the phrase is the term), so one regular expression less per row.
 */
function tierSql(text: Prisma.Sql, include: readonly string[], lowest: Prisma.Sql): Prisma.Sql {
  const whole = all(include.map((term) => Prisma.sql`${text} ~* ${wholeTermPattern(term)}`))
  if (include.length === 1) {
    return Prisma.sql`CASE WHEN ${whole} THEN 3 WHEN ${lowest} THEN 1 ELSE 0 END`
  }
  return Prisma.sql`CASE WHEN ${text} ~* ${phrasePattern(include)} THEN 3 WHEN ${whole} THEN 2
                         WHEN ${lowest} THEN 1 ELSE 0 END`
}

/** The rank (see the file's comment); 0 without terms to find. */
export function rankSql(query: ParsedQuery): Prisma.Sql {
  const { include } = query
  if (include.length === 0) return Prisma.sql`0`
  const stemmed = inSomeForm(include) ?? Prisma.sql`false`
  const titleAsWritten = all(include.map((term) => Prisma.sql`d.title ILIKE ${containsPattern(term)}`))
  const textTier = tierSql(Prisma.sql`d.search_text`, include, stemmed)
  const titleTier = tierSql(Prisma.sql`d.title`, include, titleAsWritten)
  return Prisma.sql`(10 * (${textTier}) + 2 * (${titleTier})
    + coalesce(ts_rank_cd(d.search_vector, ${simpleQuery(include)}, 32), 0))`
}

/** One document's snippet as the database cuts it: `chars + 1` characters from `at` (1-based). */
export type SnippetRow = { id: string; text: string; cutBefore: boolean }

/**
 * The snippets of these documents for a query: `chars + 1` characters of the text (after the title)
 * starting a third of `chars` before the first place found, in this order: the exact phrase, the first
 * term as a whole token, the first term anywhere, a word in the first term's stemmed form (its lexeme as
 * a word's start), else the text's start. Over the rows of one page only (at most a page of ids).
 */
export function snippetsSql(input: { ids: string[]; query: ParsedQuery; chars: number }): Prisma.Sql {
  const { include } = input.query
  const first = include[0] ?? ''
  const lead = Math.floor(input.chars / 3)
  const found = (pattern: Prisma.Sql) =>
    Prisma.sql`nullif(regexp_instr(d.search_text, ${pattern}, b.body, 1, 0, 'i'), 0)`
  const places =
    include.length === 0
      ? []
      : [
          ...(include.length > 1 ? [found(Prisma.sql`${phrasePattern(include)}`)] : []),
          found(Prisma.sql`${wholeTermPattern(first)}`),
          found(Prisma.sql`${anywherePattern(first)}`),
          found(Prisma.sql`(SELECT '(?<![[:alnum:]_])(' || string_agg(
                 regexp_replace(word, '([^[:alnum:]_])', ${'\\\\\\1'}, 'g'), '|') || ')'
               FROM unnest(tsvector_to_array(to_tsvector('english', ${first}))) AS word)`),
        ]
  return Prisma.sql`
    SELECT d.id::text AS id, substr(d.search_text, p.at, ${input.chars + 1}) AS text, p.at > b.body AS "cutBefore"
      FROM documents d
      CROSS JOIN LATERAL (SELECT char_length(d.title) + 2 AS body) b
      CROSS JOIN LATERAL (SELECT greatest(b.body, coalesce(${Prisma.join([...places, Prisma.sql`b.body`], ', ')}) - ${lead}) AS at) p
     WHERE d.id = ANY(${input.ids}::uuid[]) AND d.search_text IS NOT NULL`
}
