/**
 * find_documents: documents the caller can open, by full-text query and scope, one line each, paged by
 * an opaque keyset cursor. Text only: hosts that read one channel get everything from the text.
 */
import { z } from 'zod'
import { decideAccess } from '../../../documents/access.ts'
import { decodeCursor, encodeCursor, type FindCursor, toPrefixTsQuery } from '../domain/cursor.ts'
import { escapeFrameContent, renderOutput } from '../domain/frame.ts'
import { notes } from '../domain/notes.ts'
import { searchDocuments } from '../infra/search.ts'
import { DEFAULT_FIND_LIMIT, MAX_FIND_LIMIT, MAX_QUERY_CHARS } from '../limits.ts'
import { refusal, type ToolModule, textResult } from './context.ts'
import { instrument } from './instrument.ts'

export const inputSchema = {
  query: z
    .string()
    .max(MAX_QUERY_CHARS)
    .optional()
    .describe(
      `Words to find in titles and document text (full-text, prefix match), up to ${MAX_QUERY_CHARS} characters.`,
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
}

export const findDocuments: ToolModule = {
  name: 'find_documents',
  needs: 'read',
  register(server, ctx) {
    server.registerTool(
      'find_documents',
      {
        title: 'Find documents',
        description:
          'Lists documents you can open: one line each with slug, title, whose it is (yours, shared with you, ' +
          "another person's), when its content last changed, private or public, and editable or read-only for " +
          'you. Ordered by relevance (with a query), then most recently changed, then slug. ' +
          `At most ${MAX_FIND_LIMIT} rows per call (default ${DEFAULT_FIND_LIMIT}); when more exist a note ` +
          'says so and names the cursor of the next page. Text only.',
        inputSchema,
        annotations: {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      instrument(ctx, 'find_documents', async ({ query: rawQuery, scope, limit, cursor: rawCursor }) => {
        const query = rawQuery?.trim() ?? ''
        if (scope === 'public' && query === '') {
          return refusal(
            'query: scope public needs a query. Call again with a few words to find, or with scope mine.',
          )
        }
        const tsQuery = query === '' ? null : toPrefixTsQuery(query)
        if (query !== '' && tsQuery === null) {
          return refusal(
            'query: has no letters or digits to search for. Call again with words, or without query.',
          )
        }
        let cursor: FindCursor | undefined
        if (rawCursor !== undefined) {
          const decoded = decodeCursor(rawCursor, { query, scope, limit })
          if (decoded.kind === 'error') return refusal(decoded.message)
          cursor = decoded.value
        }
        const asOf = cursor ? cursor.asOf : new Date().toISOString()
        const userId = ctx.principal.user.id
        const rows = await searchDocuments(ctx.services.db.prisma, {
          userId,
          scope,
          tsQuery,
          asOf: new Date(asOf),
          after: cursor?.after,
          take: limit + 1,
        })
        const more = rows.length > limit
        const page = more ? rows.slice(0, limit) : rows
        const lines: string[] = []
        for (const row of page) {
          const access = decideAccess({
            document: {
              ownerId: row.ownerId,
              isPrivate: row.isPrivate,
              readOnly: row.readOnly,
              deletedAt: null,
            },
            userId,
            role: row.role,
            scopes: ctx.principal.scopes,
          })
          if (!access.canRead) continue // the query already filters; the rule stays in one place
          const fields = [
            row.slug,
            JSON.stringify(row.title),
            access.whose,
            `updated ${row.contentUpdatedAt.toISOString()}`,
            row.isPrivate ? 'private' : 'public',
            access.canWrite ? 'editable' : 'read-only',
          ]
          lines.push(escapeFrameContent(fields.join(' | ')))
        }
        const noteLines: string[] = []
        const last = page.at(-1)
        if (more && last) {
          const next = encodeCursor({
            query,
            scope,
            limit,
            asOf,
            after: { rank: last.rank, updatedAt: last.contentUpdatedAt.toISOString(), slug: last.slug },
          })
          noteLines.push(notes.nextFindPage(next), notes.moreDocuments(limit))
        }
        if (lines.length === 0 && noteLines.length === 0) {
          return textResult(
            cursor
              ? 'No more documents: the previous page was the last.'
              : 'No documents match. Try other words, or scope public with a query.',
          )
        }
        return textResult(
          renderOutput({ source: { kind: 'document list' }, body: lines.join('\n'), notes: noteLines }),
        )
      }),
    )
  },
}
