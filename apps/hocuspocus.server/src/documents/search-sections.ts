/**
 * The stemmer's look at one document's sections, for find_sections when no section holds the terms as
 * written (doc-schema's findInSections says so and hands over each section's heading and text). The
 * document may have been found by the stemmed full-text match (parsing ~ parse), so the sections are asked
 * the same question, by the same 'english' configuration and websearch_to_tsquery as search-rank.ts: which
 * sections match (terms with digits or punctuation as written, no excluded term as a whole token), in the
 * database's order (a heading that matches first, a higher level first among those, then ts_rank_cd,
 * then document order: findInSections' order for the terms as written), with
 * ts_headline's snippet for the page asked for; and whether every term matches some section (they are
 * spread over sections). One statement; nothing is stored. Only on that fallback path: it sends the
 * document's text to the database.
 */
import { cutText } from '@collab/doc-schema'
import type { PrismaClient } from '../db/generated/client.ts'
import { Prisma } from '../db/generated/client.ts'
import { storableText } from '../db/storable-text.ts'
import { MAX_SEARCH_VECTOR_CHARS } from '../limits.ts'
import {
  byStemmability,
  containsPattern,
  type ParsedQuery,
  webSearchString,
  wholeTermPattern,
} from './search-query.ts'

export type StemSectionsInput = {
  headings: string[]
  /** Each heading's level (1-6). */
  levels: number[]
  texts: string[]
  query: ParsedQuery
  /** The page of the ranked sections to cut snippets for. */
  page: { from: number; count: number }
  snippetChars: number
}

export type StemmedSections = {
  /** Matching sections (0-based, document order indexes), in the database's order. */
  order: number[]
  /** Snippets of the page's sections, by index. */
  snippets: Map<number, string>
  /** Every term matches some section in some form (when `order` is empty: they are spread out). */
  spread: boolean
}

/** ts_headline's options: one fragment of about a snippet's words, no markers (the line is quoted). */
const headlineOptions = (chars: number) =>
  `StartSel="", StopSel="", MaxFragments=1, MaxWords=${Math.max(10, Math.round(chars / 6))}, MinWords=${Math.max(5, Math.round(chars / 12))}`

/** The SQL of stemSections. Each text is cut to MAX_SEARCH_VECTOR_CHARS (what a search vector holds). */
export function stemSectionsSql(input: StemSectionsInput): Prisma.Sql {
  const cut = (text: string) => cutText(storableText(text), MAX_SEARCH_VECTOR_CHARS)
  const { words, others } = byStemmability(input.query.include.map(storableText))
  const written = others.map(containsPattern)
  const excluded = input.query.exclude.map(storableText).map(wholeTermPattern)
  return Prisma.sql`
    WITH q AS (SELECT websearch_to_tsquery('english', ${webSearchString(words)}) AS q),
    s AS (
      SELECT i, t, l, to_tsvector('english', t) AS v, to_tsvector('english', h) AS hv
        FROM unnest(${input.texts.map(cut)}::text[], ${input.headings.map(cut)}::text[], ${input.levels}::int[])
             WITH ORDINALITY AS s(t, h, l, i)),
    m AS (
      SELECT i, t, row_number() OVER (
               ORDER BY (hv @@ q.q) DESC, CASE WHEN hv @@ q.q THEN l ELSE 9 END, ts_rank_cd(v, q.q) DESC, i) AS r
        FROM s, q
       WHERE v @@ q.q AND t ILIKE ALL (${written}::text[]) AND NOT (t ~* ANY (${excluded}::text[])))
    SELECT
      (SELECT coalesce(array_agg((i - 1)::int ORDER BY r), '{}') FROM m) AS "order",
      (SELECT coalesce(json_agg(json_build_array(i - 1, ts_headline('english', t, q.q, ${headlineOptions(input.snippetChars)}))), '[]')
         FROM m, q WHERE r > ${input.page.from} AND r <= ${input.page.from + input.page.count}) AS headlines,
      (SELECT coalesce(bool_and(EXISTS (
         SELECT 1 FROM s WHERE v @@ websearch_to_tsquery('english', '"' || term || '"'))), true)
         FROM unnest(${words}::text[]) AS term)
        AND (SELECT string_agg(t, ' ') FROM s) ILIKE ALL (${written}::text[]) AS spread`
}

export async function stemSections(prisma: PrismaClient, input: StemSectionsInput): Promise<StemmedSections> {
  const nothing = { order: [], snippets: new Map(), spread: false }
  if (input.texts.length === 0 || byStemmability(input.query.include).words.length === 0) return nothing
  const rows = await prisma.$queryRaw<
    Array<{
      order: number[] | null
      headlines: Array<[number, string]> | string | null
      spread: boolean | null
    }>
  >(stemSectionsSql(input))
  const row = rows[0]
  if (!row) return nothing
  const headlines = (
    typeof row.headlines === 'string' ? JSON.parse(row.headlines) : (row.headlines ?? [])
  ) as Array<[number, string]>
  const snippets = new Map(
    headlines.map(([at, headline]) => [
      Number(at),
      snippetOf(headline, input.texts[Number(at)] ?? '', input.snippetChars),
    ]),
  )
  return { order: (row.order ?? []).map(Number), snippets, spread: row.spread === true }
}

/** A headline as a snippet: one line, at most `chars`, `…` where the section's text goes on. */
function snippetOf(headline: string, text: string, chars: number): string {
  const line = headline.replace(/\s+/g, ' ').trim()
  const whole = text.replace(/\s+/g, ' ').trim()
  const body = line.length > chars ? `${cutText(line, chars).trimEnd()}…` : line
  const before = whole.startsWith(line) ? '' : '…'
  const after = body.endsWith('…') || whole.endsWith(line) ? '' : '…'
  return `${before}${body}${after}`
}
