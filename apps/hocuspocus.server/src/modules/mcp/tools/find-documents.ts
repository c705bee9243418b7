/**
 * find_documents: documents the caller can open, by full-text query and scope, one line each, paged by
 * an opaque keyset cursor. Text only: hosts that read one channel get everything from the text.
 */
import { z } from 'zod'
import { decideAccess } from '../../../documents/access.ts'
import { decodeCursor, encodeCursor, type FindCursor, shortId, toPrefixTsQuery } from '../domain/cursor.ts'
import { escapeFrameContent, renderOutput } from '../domain/frame.ts'
import { notes } from '../domain/notes.ts'
import {
  createSnapshot,
  documentsByIds,
  type FoundRow,
  readSnapshotSlice,
  searchDocuments,
} from '../infra/search.ts'
import {
  DEFAULT_FIND_LIMIT,
  FIND_SNAPSHOT_TTL_MS,
  MAX_FIND_LIMIT,
  MAX_FIND_SNAPSHOT_DOCUMENTS,
  MAX_QUERY_CHARS,
} from '../limits.ts'
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
        const userId = ctx.principal.user.id
        const { prisma } = ctx.services.db
        const binding = { query, scope, limit }
        let page: FoundRow[]
        let next: string | undefined
        let moreWithoutCursor = false
        if (!cursor) {
          // Page one: a plain LIMIT query; the cursor remembers when, and which documents it showed.
          const asOf = new Date().toISOString()
          const rows = await searchDocuments(prisma, {
            userId,
            scope,
            tsQuery,
            asOf: new Date(asOf),
            take: limit + 1,
          })
          page = rows.slice(0, limit)
          if (rows.length > limit) {
            next = encodeCursor({ ...binding, stage: 'first', asOf, shown: page.map((r) => shortId(r.id)) })
          }
        } else if (cursor.stage === 'first') {
          // Page two freezes the rest of the run's order, so later edits cannot reorder what is left.
          const shown = new Set(cursor.shown)
          const all = await searchDocuments(prisma, {
            userId,
            scope,
            tsQuery,
            asOf: new Date(cursor.asOf),
            take: MAX_FIND_SNAPSHOT_DOCUMENTS + 1,
          })
          const capped = all.length > MAX_FIND_SNAPSHOT_DOCUMENTS
          const rest = all.slice(0, MAX_FIND_SNAPSHOT_DOCUMENTS).filter((r) => !shown.has(shortId(r.id)))
          page = rest.slice(0, limit)
          if (rest.length > limit) {
            const snapshotId = await createSnapshot(
              prisma,
              userId,
              rest.map((r) => r.id),
            )
            next = encodeCursor({ ...binding, stage: 'snapshot', snapshotId, offset: limit, capped })
          } else moreWithoutCursor = capped
        } else {
          const slice = await readSnapshotSlice(prisma, {
            snapshotId: cursor.snapshotId,
            userId,
            offset: cursor.offset,
            count: limit,
          })
          if (!slice) {
            return refusal(
              `cursor: this paging run has expired (cursors last ${FIND_SNAPSHOT_TTL_MS / 60_000} minutes). Call again without cursor to start over.`,
            )
          }
          const rows = new Map(
            (await documentsByIds(prisma, { userId, scope, ids: slice.ids })).map((r) => [r.id, r] as const),
          )
          // Snapshot order; a document deleted or no longer shared since is left out.
          page = slice.ids.flatMap((id) => rows.get(id) ?? [])
          const offset = cursor.offset + slice.ids.length
          if (offset < slice.total) next = encodeCursor({ ...cursor, offset })
          else moreWithoutCursor = cursor.capped
        }
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
        if (next) noteLines.push(notes.nextFindPage(next), notes.moreDocuments(limit))
        else if (moreWithoutCursor) noteLines.push(notes.moreDocuments(MAX_FIND_LIMIT))
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
