/**
 * The lines of find_sections' answers: a matching section, a found document's count, and what a search
 * that found no section says (tools/section-search.ts tells why). Headings and snippets are document
 * text: escaped for the data frame, each on one line; a snippet's suggestion markers typed as text are
 * escaped as reads escape them (escapeTypedMarkers), so a snippet cannot pose as a pending proposal.
 */
import { escapeTypedMarkers, type SectionMatch, safeCut } from '@collab/doc-schema'
import { MAX_MATCH_HEADING_CHARS } from '../limits.ts'
import type { SectionsFound } from '../tools/section-search.ts'
import { escapeFrameContent } from './frame.ts'
import { printedId } from './outline.ts'

/** Control characters and line breaks as spaces, so a quoted field stays one short line. */
export const oneLine = (text: string) => text.replace(/[\s\p{Cc}]+/gu, ' ').trim()

/** A search snippet as a line shows it: on one line, suggestion markers typed as text escaped. */
export const snippetShown = (snippet: string) => escapeTypedMarkers(oneLine(snippet))

/** A heading as a match line shows it: on one line, at most MAX_MATCH_HEADING_CHARS. */
function headingShown(title: string): string {
  const line = oneLine(title)
  return line.length <= MAX_MATCH_HEADING_CHARS
    ? line
    : `${line.slice(0, safeCut(line, MAX_MATCH_HEADING_CHARS))}…`
}

/**
 * One matching section: `<section_id> | "<heading>" | "<snippet>"` (escaped for the frame), the id as
 * get_outline prints it (`short`: `documentShortIds` of the match's document).
 */
export function matchLine(match: SectionMatch, short: ReadonlyMap<string, string>, indent = ''): string {
  const id = match.sectionId === '' ? '(none)' : printedId(short, match.sectionId)
  const fields = [id, JSON.stringify(headingShown(match.title)), JSON.stringify(snippetShown(match.snippet))]
  return escapeFrameContent(`${indent}${fields.join(' | ')}`)
}

/** Why a document find_documents' search matched shows no section: the words are spread over sections. */
export const SPREAD_OVER_SECTIONS = (slug: string) =>
  `no one section holds every word: they are in different sections (find_sections with slug: "${slug}" and one word at a time finds each)`

/** … or its text holds them in no form any more (changed since the search index saw it). */
export const CHANGED_SINCE_INDEXED = 'no section holds every word now (changed since it was indexed)'

/** A found document's count field in find_sections across documents. */
export function documentCount(slug: string, found: SectionsFound): string {
  if (found.how === 'spread') return SPREAD_OVER_SECTIONS(slug)
  if (found.how === 'absent') return CHANGED_SINCE_INDEXED
  const count = `${found.total} matching section${found.total === 1 ? '' : 's'}`
  return found.how === 'stemmed' ? `${count} (the words in another form)` : count
}

/** find_sections with slug, nothing found: the answer, saying why. */
export function noSectionAnswer(slug: string, found: SectionsFound): string {
  return found.how === 'spread'
    ? `No section of "${slug}" holds every word of the query: the words are in different sections. Search for one word at a time, or fewer words.`
    : `No section of "${slug}" holds every word of the query. Try fewer or other words.`
}
