/**
 * Which sections hold a query, most relevant first. A section matches when each term occurs in its text
 * (heading included), case-insensitively, as written (the rule the search index applies to whole
 * documents), and no excluded term occurs there as a whole token. The order is the server's search order
 * for documents, applied to sections: the terms as an exact phrase (whole tokens, white space between),
 * every term as a whole token (no letter, digit or underscore on either side: `6.14.1` is not `6.14.16`,
 * `fs.stat` is not `fs.Stats`), every term only inside longer words; at each of these a heading holding
 * the terms before one that does not; then, among headings that hold them, the higher level (a chapter
 * before its subsections); then the section mentioning the first term more often (up to nine times); then
 * document order. The walk reads each section's plain text once
 * and keeps a score; titles and snippets are made only for the page asked for, so a term found in every
 * one of 100,000 sections costs a count and a sort, not 100,000 snippets.
 *
 * Words the caller's full-text search matched in another form (stemming: parsing ~ parse) are not found
 * by a substring: when no section holds the terms as written, the result says whether the whole text
 * does (the terms are spread over sections) and gives each section's heading and text, so the caller can
 * ask its stemmer which sections hold them, in what order, and call again with `stemmed`.
 */
import type * as Y from 'yjs'
import { safeCut } from '../text-cut.ts'
import { blockPlainText } from '../yjs/plain-text.ts'
import { headingTitle, type LocatedSection, locateSections } from './section-index.ts'

/** Characters of text a snippet shows around the match (before the ellipses), unless the caller says. */
export const SNIPPET_CHARS = 160

export type SectionMatch = {
  /** The heading's id ('' when it has none). */
  sectionId: string
  /** 1-based position of the section among all sections, in document order. */
  index: number
  title: string
  /** Text around the best match (phrase, whole token, anywhere), white space collapsed, `…` where cut. */
  snippet: string
}

export type SectionMatches = {
  /** Matches `from` … `from + count - 1` of the ranked list. */
  matches: SectionMatch[]
  /** How many sections match in all. */
  total: number
  /**
   * Only when no section matches: whether the document's whole text holds every term as written (they
   * are in different sections), and each section's heading, level and text in document order (for a
   * stemmer).
   */
  unmatched?: { spread: boolean; headings: string[]; levels: number[]; texts: string[] }
}

export type FindSectionsOptions = {
  /** Terms no matching section may hold as a whole token. */
  exclude?: readonly string[]
  /** Snippet length (default SNIPPET_CHARS). */
  snippetChars?: number
  /**
   * The sections a stemmer matched, already in its order (0-based indexes in document order), and the
   * snippets it cut for some of them: these match instead of the substring rule, in that order.
   */
  stemmed?: { order: readonly number[]; snippets: ReadonlyMap<number, string> }
}

/** Regular-expression text matching `term` literally (every syntax character escaped), spaces as white space. */
const literal = (term: string) => term.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&').replace(/ +/g, '\\s+')
const WORD_BEFORE = '(?<![\\p{L}\\p{N}_])'
const WORD_AFTER = '(?![\\p{L}\\p{N}_])'
const whole = (source: string) => new RegExp(`${WORD_BEFORE}${source}${WORD_AFTER}`, 'iu')

/** The patterns of a query: each term anywhere and as a whole token, and the exact phrase. */
function patternsOf(terms: readonly string[]) {
  return {
    anywhere: terms.map((term) => new RegExp(literal(term), 'iu')),
    whole: terms.map((term) => whole(literal(term))),
    phrase: terms.length > 1 ? whole(terms.map(literal).join('\\s+')) : null,
  }
}
type Patterns = ReturnType<typeof patternsOf>

/** 3 exact phrase (one term: whole token), 2 every term whole, 1 every term anywhere, 0 not all. */
function tierOf(text: string, p: Patterns): number {
  if (!p.anywhere.every((re) => re.test(text))) return 0
  const allWhole = p.whole.every((re) => re.test(text))
  if (p.phrase === null) return allWhole ? 3 : 1
  if (allWhole && p.phrase.test(text)) return 3
  return allWhole ? 2 : 1
}

/** How often the first term occurs, up to 9 times (more says no more about the section). */
function mentions(text: string, pattern: RegExp): number {
  const all = new RegExp(pattern.source, 'giu')
  let count = 0
  while (count < 9 && all.exec(text)) count++
  return count
}

/**
 * A matching section's sort key, compared left to right, larger first: its tier, its heading's tier,
 * a higher heading level when the heading matches (a chapter before its subsections), mentions.
 */
type Key = [number, number, number, number]

function keyOf(section: LocatedSection, text: string, heading: string, p: Patterns): Key | null {
  const tier = tierOf(text, p)
  if (tier === 0) return null
  const inHeading = tierOf(heading, p)
  return [tier, inHeading, inHeading > 0 ? -section.level : -9, mentions(text, p.anywhere[0]!)]
}

const byKey = (a: { key: Key }, b: { key: Key }) => {
  for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return b.key[i]! - a.key[i]!
  return 0
}

const sectionText = (section: LocatedSection) =>
  [blockPlainText(section.heading), ...section.blocks.map(blockPlainText)].join('\n')

export function findInSections(
  fragment: Y.XmlFragment,
  terms: readonly string[],
  page: { from: number; count: number },
  options: FindSectionsOptions = {},
): SectionMatches {
  if (terms.length === 0) return { matches: [], total: 0 }
  const p = patternsOf(terms)
  const excluded = (options.exclude ?? []).map((term) => whole(literal(term)))
  const chars = options.snippetChars ?? SNIPPET_CHARS
  const sections = locateSections(fragment)
  const matchOf = (at: number, snippet: () => string): SectionMatch => ({
    sectionId: sections[at]!.sectionId,
    index: at + 1,
    title: headingTitle(sections[at]!.heading),
    snippet: snippet(),
  })
  if (options.stemmed) {
    const { order, snippets } = options.stemmed
    const kept = order.filter(
      (at) => sections[at] && !excluded.some((re) => re.test(sectionText(sections[at]!))),
    )
    const matches = kept
      .slice(page.from, page.from + page.count)
      .map((at) => matchOf(at, () => snippets.get(at) ?? snippetAt(sectionText(sections[at]!), 0, chars)))
    return { matches, total: kept.length }
  }
  const scored: Array<{ at: number; key: Key }> = []
  const texts: string[] = []
  const headings: string[] = []
  sections.forEach((section, at) => {
    const text = sectionText(section)
    const heading = blockPlainText(section.heading)
    texts.push(text)
    headings.push(heading)
    if (excluded.some((re) => re.test(text))) return
    const key = keyOf(section, text, heading, p)
    if (key) scored.push({ at, key })
  })
  if (scored.length === 0) {
    const all = texts.join('\n')
    const spread = p.anywhere.every((re) => re.test(all)) && !excluded.some((re) => re.test(all))
    const levels = sections.map((section) => section.level)
    return { matches: [], total: 0, unmatched: { spread, headings, levels, texts } }
  }
  // Stable: equal keys keep document order.
  scored.sort(byKey)
  const matches = scored.slice(page.from, page.from + page.count).map(({ at }) =>
    matchOf(at, () => {
      const text = texts[at]!
      const place = [p.phrase, p.whole[0], p.anywhere[0]].find((re) => re?.test(text))
      return snippetAt(text, place?.exec(text)?.index ?? 0, chars)
    }),
  )
  return { matches, total: scored.length }
}

/** `chars` of `text` around `at` (a third before it when the text allows), on whole code points, white space collapsed. */
function snippetAt(text: string, at: number, chars: number): string {
  const start = safeCut(text, Math.max(0, at - Math.floor(chars / 3)))
  const end = safeCut(text, start + chars)
  const body = text.slice(start, end).replace(/\s+/g, ' ').trim()
  return `${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`
}
