/**
 * find_documents: documents the caller can open, by ranked query (documents/search.ts) and scope, one line
 * each (with a query, ending with a snippet around the match), paged by an opaque cursor
 * (paging/find-pages.ts). Text only: hosts that read one channel get everything from the text.
 */
import { escapeTypedMarkers } from '@collab/doc-schema'
import { z } from 'zod'
import type { Principal } from '../../../auth/tokens.ts'
import { type Access, decideAccess } from '../../../documents/access.ts'
import type { FoundRow, SearchService } from '../../../documents/search.ts'
import { MAX_RANKED_DOCUMENTS, MAX_RANKED_TEXT_BYTES } from '../../../limits.ts'
import { stopIfCancelled } from '../infra/cancel.ts'
import { DEFAULT_FIND_LIMIT, FIND_SNIPPET_CHARS, MAX_FIND_LIMIT, MAX_QUERY_CHARS } from '../limits.ts'
import { findPage, queryTermsOf } from '../paging/find-pages.ts'
import { escapeFrameContent, renderOutput } from '../render/frame.ts'
import { notes } from '../render/notes.ts'
import { documentLink } from '../resources/uris.ts'
import { defineTool } from './tool.ts'

export const findDocuments = defineTool({
  name: 'find_documents',
  kind: 'read',
  title: 'Find documents',
  description:
    'Lists documents you can open: one line each with slug, title, whose it is (yours, shared with you, ' +
    "another person's), when its content last changed, private or public, editable or read-only for you, " +
    `and with a query a snippet (up to ${FIND_SNIPPET_CHARS} characters) around the match. With a query, ` +
    'most relevant first: the words as an exact phrase, then each as a whole word (6.14.1 before 6.14.16, ' +
    'fs.stat before fs.Stats), then other forms of a word (parsing finds parse), then inside longer words; ' +
    'a title match before a text match at each; then most recently changed, then slug. A broad query ' +
    `(in more than ${MAX_RANKED_DOCUMENTS} documents), or one whose matches hold more than ${MAX_RANKED_TEXT_BYTES / (1024 * 1024)} MiB of text, ` +
    'is ranked among the most recently changed that fit, and a note says how many. ' +
    `At most ${MAX_FIND_LIMIT} rows per call (default ${DEFAULT_FIND_LIMIT}); when more exist a note ` +
    'says so and names the cursor of the next page. Text only.',
  inputSchema: {
    query: z
      .string()
      .max(MAX_QUERY_CHARS)
      .optional()
      .describe(
        `Words to find in titles and document text, up to ${MAX_QUERY_CHARS} characters: a document matches when ` +
          'every word occurs in it as written (case-insensitive, punctuation included, also inside a longer ' +
          'word) or in another form (parsing, parse). "a phrase" in double quotes is one word; -word leaves ' +
          'out documents holding it. Backslash escapes copied from a read (qs\\@6.14.0) are dropped.',
      ),
    scope: z
      .enum(['mine', 'public'])
      .default('mine')
      .describe(
        'mine: documents you own or are a member of (default). public: every public document (needs query).',
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_FIND_LIMIT)
      .default(DEFAULT_FIND_LIMIT)
      .describe(`Rows per page, 1 to ${MAX_FIND_LIMIT} (default ${DEFAULT_FIND_LIMIT}).`),
    cursor: z
      .string()
      .max(2_000)
      .optional()
      .describe('The cursor a previous page named, to read the next page.'),
  },
  async handler(args, ctx) {
    const found = await findPage(ctx.search, ctx.principal.user.id, args)
    stopIfCancelled(ctx.signal)
    if (found.kind === 'error') return found
    const page = found.value
    // The query already filters; the access rule stays in one place.
    const shown = page.rows.flatMap((row) => {
      const access = rowAccess(row, ctx.principal)
      return access.canRead ? [{ row, access }] : []
    })
    const snippets = await snippetsOf(
      ctx.search,
      args.query,
      shown.map(({ row }) => row.id),
    )
    const lines = shown.map(({ row, access }) => documentLine(row, access, snippets.get(row.id)))
    const noteLines: string[] = []
    if (page.next) noteLines.push(notes.nextFindPage(page.next), notes.moreDocuments(args.limit))
    else if (page.capped) noteLines.push(notes.moreDocuments(MAX_FIND_LIMIT))
    if (page.narrowed) noteLines.push(notes.narrowedSearch(page.narrowed))
    if (lines.length === 0 && noteLines.length === 0) {
      return page.continued
        ? 'No more documents: the previous page was the last.'
        : 'No documents match. Try other words, or scope public with a query.'
    }
    return {
      kind: 'linked',
      text: renderOutput({ source: { kind: 'document list' }, body: lines.join('\n'), notes: noteLines }),
      // One link per document shown (at most a page: MAX_FIND_LIMIT), in the list's order.
      links: shown.map(({ row }) => documentLink(row.slug)),
    }
  },
})

/** What the caller may do with a found row (the query already filters; the rule stays in access.ts). */
export function rowAccess(row: FoundRow, principal: Principal) {
  return decideAccess({
    document: { ownerId: row.ownerId, isPrivate: row.isPrivate, readOnly: row.readOnly, deletedAt: null },
    userId: principal.user.id,
    role: row.role,
    scopes: principal.scopes,
  })
}

/** The snippets of the rows shown, for a query (none without one). */
async function snippetsOf(search: SearchService, query: string | undefined, ids: string[]) {
  const terms = query?.trim() ? queryTermsOf(query.trim()) : null
  if (!terms || terms.kind === 'error' || ids.length === 0) return new Map<string, string>()
  return search.snippets({ ids, terms: terms.value, chars: FIND_SNIPPET_CHARS })
}

/**
 * One row the caller can read, as the list shows it; the time to the minute (the order already tells
 * newer from older), the snippet last, quoted (its suggestion markers typed as text escaped, as reads do).
 */
function documentLine(row: FoundRow, access: Extract<Access, { canRead: true }>, snippet?: string): string {
  const fields = [
    row.slug,
    JSON.stringify(row.title),
    access.whose,
    `updated ${row.contentUpdatedAt.toISOString().slice(0, 16)}Z`,
    row.isPrivate ? 'private' : 'public',
    access.canWrite ? 'editable' : 'read-only',
  ]
  if (snippet) fields.push(JSON.stringify(escapeTypedMarkers(snippet)))
  return escapeFrameContent(fields.join(' | '))
}
