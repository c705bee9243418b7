/**
 * find_sections' search of one document's live content: doc-schema's findInSections (the terms as
 * written, ranked), and when no section holds them so, the database's stemmer over the sections
 * (documents/search-sections.ts), as the document search matched other forms of a word. Says why nothing
 * matched, so the answer is true: the words are in different sections, or the text no longer holds them.
 */
import { findInSections, type SectionMatches } from '@collab/doc-schema'
import type * as Y from 'yjs'
import type { SearchService } from '../../../documents/search.ts'
import type { ParsedQuery } from '../../../documents/search-query.ts'
import { FIND_SNIPPET_CHARS } from '../limits.ts'

/**
 * How the sections were found: `written` (every term as written), `stemmed` (in another form);
 * or, when none matched, `spread` (every term occurs, not all in one section) or `absent` (the text
 * holds them in no form: changed since the search index saw it, or never held them).
 */
export type SectionsFound = Omit<SectionMatches, 'unmatched'> & {
  how: 'written' | 'stemmed' | 'spread' | 'absent'
}

export async function searchSections(
  search: Pick<SearchService, 'stemSections'>,
  fragment: Y.XmlFragment,
  query: ParsedQuery,
  page: { from: number; count: number },
): Promise<SectionsFound> {
  const options = { exclude: query.exclude, snippetChars: FIND_SNIPPET_CHARS }
  const found = findInSections(fragment, query.include, page, options)
  if (found.total > 0 || !found.unmatched)
    return { matches: found.matches, total: found.total, how: 'written' }
  if (found.unmatched.spread) return { matches: [], total: 0, how: 'spread' }
  const { headings, levels, texts } = found.unmatched
  const stem = await search.stemSections({
    headings,
    levels,
    texts,
    query,
    page,
    snippetChars: FIND_SNIPPET_CHARS,
  })
  if (stem.order.length > 0) {
    const stemmed = { order: stem.order, snippets: stem.snippets }
    const again = findInSections(fragment, query.include, page, { ...options, stemmed })
    if (again.total > 0) return { matches: again.matches, total: again.total, how: 'stemmed' }
  }
  return { matches: [], total: 0, how: stem.spread ? 'spread' : 'absent' }
}
