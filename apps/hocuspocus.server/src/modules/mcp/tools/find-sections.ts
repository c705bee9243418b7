/**
 * find_sections: where is this phrase? The sections (section_id, heading, a snippet) that hold every
 * term of a query, most relevant first, within one document (slug, read live) or across the documents
 * the caller can open (find_documents' search picks and orders the documents, with its cursors; each
 * document's content is then searched for the sections: section-search.ts). Snippets and headings are
 * document text: inside the data frame.
 */
import { locateSections, refuse } from '@collab/doc-schema'
import type * as Y from 'yjs'
import { z } from 'zod'
import { type ParsedQuery, parseTerms } from '../../../documents/search-query.ts'
import {
  DEFAULT_FIND_SECTIONS_DOCUMENTS,
  FIND_SNIPPET_CHARS,
  MAX_FIND_SECTIONS_DOCUMENTS,
  MAX_QUERY_CHARS,
  MAX_READ_CHARS,
  SECTION_MATCHES_PER_PAGE,
  SECTIONS_PER_FOUND_DOCUMENT,
} from '../limits.ts'
import { findPage, queryTermsOf } from '../paging/find-pages.ts'
import { walkLines } from '../render/budget.ts'
import { documentCount, matchLine, noSectionAnswer, oneLine } from '../render/find-lines.ts'
import { escapeFrameContent, renderOutput } from '../render/frame.ts'
import { notes } from '../render/notes.ts'
import { documentShortIds } from '../render/outline.ts'
import { readCall, type ToolContext } from './context.ts'
import { slugField, startField } from './fields.ts'
import { rowAccess } from './find-documents.ts'
import { openDocument } from './open-document.ts'
import { searchSections } from './section-search.ts'
import { defineTool, type ToolAnswer } from './tool.ts'

export const findSections = defineTool({
  name: 'find_sections',
  kind: 'read',
  title: 'Find the sections that hold a phrase',
  description:
    'Where is this phrase? Lists the sections that hold every word of query (case-insensitive, ' +
    'punctuation included: C++, 3.25.2, url.parse match as written; "a phrase" in quotes; -word leaves ' +
    'out sections holding it), one line each: section_id (the start get_outline prints, which every ' +
    'tool taking a section_id accepts), heading and a snippet around the match (up to ' +
    `${FIND_SNIPPET_CHARS} characters). Most relevant first: the words as an exact phrase, then each as a ` +
    'whole word, then inside longer words, a heading holding them before one that does not; then document ' +
    'order. When no section holds the words as written, sections holding them in another form (parse for ' +
    'parsing) are listed. With slug: the sections of that document ' +
    `(${SECTION_MATCHES_PER_PAGE} per call; a note names the start of the next page). Without slug: the ` +
    'documents you can open that hold the query (scope mine by default, or public), most relevant first, ' +
    `each with its first ${SECTIONS_PER_FOUND_DOCUMENT} matching sections; notes name the call for the ` +
    'rest and the cursor of the next page; a document whose words are spread over sections says so. Read a ' +
    'section with read_document and its section_id.',
  inputSchema: {
    query: z
      .string()
      .min(1)
      .max(MAX_QUERY_CHARS)
      .describe(
        `Words or a phrase to find, up to ${MAX_QUERY_CHARS} characters; every word must occur in the section.`,
      ),
    slug: slugField('Search only this document (as find_documents lists it).').optional(),
    start: startField('matching section', 'list (with slug)'),
    scope: z
      .enum(['mine', 'public'])
      .default('mine')
      .describe('Without slug: mine (documents you own or are a member of, default) or public.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_FIND_SECTIONS_DOCUMENTS)
      .default(DEFAULT_FIND_SECTIONS_DOCUMENTS)
      .describe(
        `Without slug: documents per page, 1 to ${MAX_FIND_SECTIONS_DOCUMENTS} (default ${DEFAULT_FIND_SECTIONS_DOCUMENTS}).`,
      ),
    cursor: z
      .string()
      .max(2_000)
      .optional()
      .describe('Without slug: the cursor a previous page named, to read the next page.'),
  },
  async handler(args, ctx) {
    const query = args.query.trim()
    const terms = queryTermsOf(query)
    if (terms.kind === 'error') return terms
    if (args.slug !== undefined) {
      if (args.cursor !== undefined) {
        return refuse(
          'invalid_input',
          'cursor: pages across documents only; with slug, page with start as the note names. Call again without cursor.',
          'cursor',
        )
      }
      return inOneDocument(ctx, args.slug, parseTerms(terms.value), args.start ?? 1)
    }
    if (args.start !== undefined) {
      return refuse(
        'invalid_input',
        'start: only works with slug. Call again without start, or with the slug a document line names.',
        'start',
      )
    }
    return acrossDocuments(ctx, { ...args, query, terms: terms.value })
  },
})

async function inOneDocument(
  ctx: ToolContext,
  slug: string,
  query: ParsedQuery,
  start: number,
): Promise<ToolAnswer> {
  ctx.report?.stage('opening the document')
  const opened = await openDocument(ctx, slug)
  if (opened.kind === 'error') return opened
  const { resolved, content } = opened.value
  ctx.report?.stage('searching its sections')
  let found: Awaited<ReturnType<typeof searchSections>>
  let short: Map<string, string>
  try {
    const page = { from: start - 1, count: SECTION_MATCHES_PER_PAGE }
    found = await searchSections(ctx.search, content.fragment, query, page)
    short = shortIdsOf(content.fragment)
  } finally {
    content.release()
  }
  if (found.total === 0) return noSectionAnswer(slug, found)
  if (start > found.total) {
    return refuse(
      'invalid_input',
      `start: ${start} is past the last matching section; ${found.total} sections match. Call again with start from 1 to ${found.total}, or without start.`,
      'start',
    )
  }
  // Lines are short (headings and snippets are cut), so the budget walk is only a safety net.
  const walk = walkLines(
    found.matches.map((match) => matchLine(match, short)),
    MAX_READ_CHARS,
  )
  const shownEnd = start - 1 + walk.kept
  const noteLines: string[] = []
  if (shownEnd < found.total || start > 1) {
    if (shownEnd < found.total) noteLines.push(notes.nextStart(shownEnd + 1))
    noteLines.push(notes.sectionMatchesTruncated(walk.kept, found.total))
  }
  const source = { kind: 'section matches', slug, whose: resolved.access.whose } as const
  return renderOutput({ source, body: walk.text, notes: noteLines })
}

async function acrossDocuments(
  ctx: ToolContext,
  args: {
    query: string
    terms: string[]
    scope: 'mine' | 'public'
    limit: number
    cursor?: string
  },
): Promise<ToolAnswer> {
  const found = await findPage(ctx.search, ctx.principal.user.id, args)
  if (found.kind === 'error') return found
  const page = found.value
  const query = parseTerms(args.terms)
  const lines: string[] = []
  const moreNotes: string[] = []
  for (const [i, row] of page.rows.entries()) {
    const access = rowAccess(row, ctx.principal)
    if (!access.canRead) continue // the query already filters; the rule stays in access.ts
    ctx.report?.stage(`searching the sections of document ${i + 1} of ${page.rows.length}`)
    const content = await ctx.reader.open(row.room, readCall(ctx))
    if (!content) continue // deleted since the query ran
    let sections: Awaited<ReturnType<typeof searchSections>>
    let short: Map<string, string>
    try {
      const first = { from: 0, count: SECTIONS_PER_FOUND_DOCUMENT }
      sections = await searchSections(ctx.search, content.fragment, query, first)
      short = shortIdsOf(content.fragment)
    } finally {
      content.release()
    }
    const count = documentCount(row.slug, sections)
    lines.push(
      escapeFrameContent([row.slug, JSON.stringify(oneLine(row.title)), access.whose, count].join(' | ')),
    )
    for (const match of sections.matches) lines.push(matchLine(match, short, '  '))
    if (sections.total > sections.matches.length) {
      moreNotes.push(notes.moreInDocument(row.slug, sections.matches.length, sections.total))
    }
  }
  const noteLines = [...moreNotes]
  if (page.next) noteLines.push(notes.nextSectionsPage(page.next), notes.moreMatchingDocuments(args.limit))
  else if (page.capped) noteLines.push(notes.moreMatchingDocuments(MAX_FIND_SECTIONS_DOCUMENTS))
  if (page.narrowed) noteLines.push(notes.narrowedSearch(page.narrowed))
  if (lines.length === 0 && noteLines.length === 0) {
    return page.continued
      ? 'No more documents: the previous page was the last.'
      : 'No documents hold every word of the query. Try fewer or other words, or scope public.'
  }
  return renderOutput({ source: { kind: 'section matches list' }, body: lines.join('\n'), notes: noteLines })
}

/** The id starts get_outline prints for this content's headings (a walk of its top-level blocks only). */
const shortIdsOf = (fragment: Y.XmlFragment) =>
  documentShortIds({ ids: locateSections(fragment).map((section) => section.sectionId) })
