/**
 * Which sections hold a query: a section matches when each term occurs in its text (heading included),
 * case-insensitively, as a substring (the rule the search index applies to whole documents). The walk
 * reads each section's plain text once; snippets are cut only for the page asked for, so a term found in
 * every one of 100,000 sections costs a count, not 100,000 snippets.
 */
import type * as Y from 'yjs'
import { safeCut } from '../text-cut.ts'
import { blockPlainText } from '../yjs/plain-text.ts'
import { headingTitle, locateSections } from './section-index.ts'

/** Characters of text a snippet shows around the match (before the ellipses). */
export const SNIPPET_CHARS = 160

/** Of SNIPPET_CHARS, how many come before the match when the text allows. */
const SNIPPET_LEAD_CHARS = 50

export type SectionMatch = {
  /** The heading's id ('' when it has none). */
  sectionId: string
  /** 1-based position of the section among all sections, in document order. */
  index: number
  title: string
  /** Text around the first term's first occurrence, white space collapsed, `…` where cut. */
  snippet: string
}

export type SectionMatches = {
  /** Matches `from` … `from + count - 1` (0-based, in document order). */
  matches: SectionMatch[]
  /** How many sections match in all. */
  total: number
}

/** A term as a case-insensitive literal pattern (every regex character escaped). */
const literal = (term: string) => new RegExp(term.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'iu')

export function findInSections(
  fragment: Y.XmlFragment,
  terms: readonly string[],
  page: { from: number; count: number },
): SectionMatches {
  const patterns = terms.map(literal)
  if (patterns.length === 0) return { matches: [], total: 0 }
  const matches: SectionMatch[] = []
  let total = 0
  locateSections(fragment).forEach((section, i) => {
    const text = [blockPlainText(section.heading), ...section.blocks.map(blockPlainText)].join('\n')
    if (!patterns.every((pattern) => pattern.test(text))) return
    if (total >= page.from && matches.length < page.count) {
      const at = patterns[0]!.exec(text)!.index
      matches.push({
        sectionId: section.sectionId,
        index: i + 1,
        title: headingTitle(section.heading),
        snippet: snippetAt(text, at),
      })
    }
    total++
  })
  return { matches, total }
}

/** SNIPPET_CHARS of `text` around `at`, on whole code points, white space collapsed. */
function snippetAt(text: string, at: number): string {
  const start = safeCut(text, Math.max(0, at - SNIPPET_LEAD_CHARS))
  const end = safeCut(text, start + SNIPPET_CHARS)
  const body = text.slice(start, end).replace(/\s+/g, ' ').trim()
  return `${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`
}
