/**
 * A query as find_documents and find_sections read it: terms as written, split at white space, with two
 * marks of web search syntax: `"a phrase"` is one term (its words in that order), `-word` or `-"a phrase"`
 * leaves out what holds it. A backslash before ASCII punctuation is dropped, so a term copied from a read
 * (whose Markdown shows `qs\@6.14.0`, `process.\_fatalException`) is the text it stands for. Everything
 * else (dots, underscores, `@`, `+`, `/`, digits) is part of the term: `6.14.1`, `fs.stat`,
 * `ERR_INVALID_CHAR`, `C++` are terms as typed. Pure: the SQL built from a query is in search.ts.
 */
import { storableText } from '../db/storable-text.ts'

/** A backslash escape before ASCII punctuation, as Markdown writes it. */
const MARKDOWN_ESCAPE = /\\([!-/:-@[-`{-~])/g

/** A term: a quoted phrase (closed or running to the end) or a run of non-space characters. */
const TERM = /-?"[^"]*"?|\S+/gu

/** An exclusion: `-` then a letter or a quote (`-1`, `--save-dev`, `-` alone are terms as written). */
const EXCLUSION = /^-(?=[\p{L}"])/u

/**
 * The query's terms, in order: each a word as written, a phrase (words joined by one space), or either
 * with a leading `-` (an exclusion). Quotes are syntax and never part of a term; empty terms are dropped.
 */
export function queryTerms(query: string): string[] {
  const text = storableText(query).replace(MARKDOWN_ESCAPE, '$1')
  const terms: string[] = []
  for (const [raw] of text.matchAll(TERM)) {
    const excluded = EXCLUSION.test(raw)
    const body = (excluded ? raw.slice(1) : raw).replace(/"/g, ' ').replace(/\s+/gu, ' ').trim()
    if (body !== '') terms.push(excluded ? `-${body}` : body)
  }
  return terms
}

/** The terms a document must hold, and those it must not. */
export type ParsedQuery = { include: string[]; exclude: string[] }

/** queryTerms' output split into what to find and what to leave out. */
export function parseTerms(terms: readonly string[]): ParsedQuery {
  const include: string[] = []
  const exclude: string[] = []
  for (const term of terms) {
    if (EXCLUSION.test(term)) exclude.push(term.slice(1))
    else include.push(term)
  }
  return { include, exclude }
}

/**
 * A term the stemmer may take in another form: letters only (a phrase of them, hyphens and apostrophes
 * allowed). Others are matched as written only: the parser would drop their punctuation (`C++` would
 * become `c`), so their stem would find far more than the term.
 */
const STEMMABLE = /^[\p{L}\p{M}]+(?:[ '’-][\p{L}\p{M}]+)*$/u

/** The terms the stemmer may take (`words`) and those matched as written only (`others`). */
export function byStemmability(terms: readonly string[]): { words: string[]; others: string[] } {
  return {
    words: terms.filter((term) => STEMMABLE.test(term)),
    others: terms.filter((term) => !STEMMABLE.test(term)),
  }
}

/** Every term of a query as one web search string: each quoted, so `or` and `-` inside mean themselves. */
export function webSearchString(terms: readonly string[]): string {
  return terms.map((term) => `"${term}"`).join(' ')
}

/** PostgreSQL regular expression (ARE) text matching `term` literally, its spaces as any white space. */
function areLiteral(term: string): string {
  return term.replace(/[!-/:-@[-`{-~]/g, (c) => `\\${c}`).replace(/ /g, '[[:space:]]+')
}

/** Not a letter, digit or underscore on that side (or the text's edge). */
const WORD_BEFORE = '(?<![[:alnum:]_])'
const WORD_AFTER = '(?![[:alnum:]_])'

/** An ARE matching `term` as a whole token: no letter, digit or underscore right before or after it. */
export function wholeTermPattern(term: string): string {
  return `${WORD_BEFORE}${areLiteral(term)}${WORD_AFTER}`
}

/** An ARE matching `term` anywhere (the snippet's last resort before the text's start). */
export function anywherePattern(term: string): string {
  return areLiteral(term)
}

/** An ARE matching the terms in order, white space between them, as whole tokens: the exact phrase. */
export function phrasePattern(terms: readonly string[]): string {
  return `${WORD_BEFORE}${terms.map(areLiteral).join('[[:space:]]+')}${WORD_AFTER}`
}

/** A term as an ILIKE pattern matching it anywhere: LIKE's own characters (%, _, \) escaped. */
export function containsPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}
