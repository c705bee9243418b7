/**
 * REST for editors and the web app: which documents the caller has (and, with `q` or `scope=public`,
 * finds) and which room (Yjs document name) to open, a document as Markdown (export), a new document
 * from Markdown (import), the owner's sharing and flags, and the chat room of each heading. Unknown and
 * forbidden slugs both answer 404. The caller is an API token's or, for the web app, a signed-in
 * browser's (bearer.ts: a request that changes something must then come from our own origin).
 */
import { MAX_IMPORT_BYTES } from '@collab/doc-schema'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { z } from 'zod'
import type { Principal } from '../auth/tokens.ts'
import type { ChatPosting } from '../chat/posting.ts'
import type { Whose } from '../documents/access.ts'
import type { DocumentListing, DocumentRow, Resolved } from '../documents/rows.ts'
import { queryTerms } from '../documents/search.ts'
import { MAX_CHAT_MESSAGE_CHARS, SEARCH_SNIPPET_CHARS } from '../limits.ts'
import type { Services } from '../services.ts'
import { type HistoryRouteDeps, historyRoutes } from './api-history.ts'
import { lastLookRoutes } from './api-last-look.ts'
import { type AuthVariables, bearerAuth } from './bearer.ts'
import { httpRefusal, refusalToHttp } from './refusal.ts'
import { importInput, jsonBody, MAX_API_IMPORT_BODY_BYTES, zodRefusal } from './request-body.ts'

/** Collection answers are bounded; the caller's documents beyond this are reached with `?offset=`. */
export const MAX_API_DOCUMENTS = 200

const present = (doc: DocumentRow, whose: string) => ({
  slug: doc.slug,
  title: doc.title,
  whose,
  private: doc.isPrivate,
  readOnly: doc.readOnly,
  agentsSuggest: doc.agentsSuggest,
  room: doc.room,
  createdAt: doc.createdAt.toISOString(),
  updatedAt: doc.contentUpdatedAt.toISOString(),
})

/** Chat messages one GET returns; older ones are reached with `?before=<seq>`. */
export const MAX_API_CHAT_MESSAGES = 100

/** Members listed by one GET of a document's members (the owner shares with at most this many, in practice). */
export const MAX_API_MEMBERS = 500

export type ApiDeps = {
  /** A signed-in browser's principal (auth/session-principal.ts) and the origin its changes must come from. */
  session?: { principal: (headers: Headers) => Promise<Principal | null>; origin: () => string }
  /** Posting in a heading's chat room (chat/posting.ts); without it, POST …/chat/:sectionId is 404. */
  chatPosting?: ChatPosting
  /** The history panel's routes (api-history.ts): the live documents, and writing to them. */
  history?: HistoryRouteDeps
}

export function apiRoutes(services: Services, deps: ApiDeps = {}) {
  const api = new Hono<{ Variables: AuthVariables }>()
  api.use('*', bearerAuth({ tokens: services.tokens, session: deps.session }))
  api.route('/', historyRoutes(services, deps.history))
  api.route('/', lastLookRoutes(services))

  /** The document when the caller owns it; 404 when they cannot read it, 403 when they only may. */
  async function owned(
    slug: string,
    principal: Principal,
    what = 'change who may read or write it',
  ): Promise<Resolved> {
    const resolved = await services.documents.resolve(slug, principal)
    if (resolved.kind === 'error') throw refusalToHttp(resolved)
    if (resolved.value.access.whose !== 'yours') {
      throw httpRefusal('forbidden', `${slug}: only its owner may ${what}`)
    }
    return resolved.value
  }

  api.get('/me', (c) => {
    const { user, scopes } = c.get('principal')
    return c.json({ handle: user.handle, name: user.name, scopes })
  })

  api.get('/documents', async (c) => {
    const offsetRaw = c.req.query('offset') ?? '0'
    const offset = Number(offsetRaw)
    if (!Number.isInteger(offset) || offset < 0) {
      throw httpRefusal('invalid_input', 'offset: must be a whole number of 0 or more', { field: 'offset' })
    }
    const q = c.req.query('q')?.trim() ?? ''
    const scope = c.req.query('scope') ?? 'mine'
    if (scope !== 'mine' && scope !== 'public') {
      throw httpRefusal('invalid_input', 'scope: mine (yours and shared with you) or public', {
        field: 'scope',
      })
    }
    if (q || scope === 'public') {
      // Finding: find_documents' search (same access rule, same ranking), the first MAX_API_DOCUMENTS.
      const userId = c.get('principal').user.id
      const terms = q ? queryTerms(q) : null
      if (q && terms?.length === 0) return c.json({ documents: [], total: 0, nextOffset: null })
      const { rows: found, narrowed } = await services.search.search({
        userId,
        scope,
        terms,
        asOf: new Date(),
        take: MAX_API_DOCUMENTS + 1,
      })
      const whose = (row: (typeof found)[number]): Whose =>
        row.ownerId === userId ? 'yours' : row.role ? 'shared with you' : "another person's"
      const shown = found.slice(0, MAX_API_DOCUMENTS)
      // With a query, the text around the match (find_documents' snippet), for the list to show as text.
      const snippets = terms
        ? await services.search.snippets({
            ids: shown.map((row) => row.id),
            terms,
            chars: SEARCH_SNIPPET_CHARS,
          })
        : new Map<string, string>()
      return c.json({
        documents: shown.map((row) => ({
          slug: row.slug,
          title: row.title,
          whose: whose(row),
          private: row.isPrivate,
          readOnly: row.readOnly,
          room: row.room,
          updatedAt: new Date(row.contentUpdatedAt).toISOString(),
          ...(snippets.has(row.id) ? { snippet: snippets.get(row.id) } : {}),
        })),
        total: Math.min(found.length, MAX_API_DOCUMENTS),
        // A search answers its best MAX_API_DOCUMENTS; a narrower query finds the rest.
        more: found.length > MAX_API_DOCUMENTS,
        // Ranked among this many most recently changed documents in scope (a broad query), or of the
        // matches (`narrowedAmong: 'matches'`: they hold more text than one search ranks).
        ...(narrowed ? { narrowed: narrowed.ranked } : {}),
        ...(narrowed?.among === 'matches' ? { narrowedAmong: 'matches' } : {}),
        nextOffset: null,
      })
    }
    const all: DocumentListing[] = await services.documents.listForUser(c.get('principal').user.id)
    const page = all.slice(offset, offset + MAX_API_DOCUMENTS)
    const next = offset + page.length < all.length ? offset + page.length : null
    return c.json({
      documents: page.map((d) => present(d, d.whose)),
      total: all.length,
      nextOffset: next,
    })
  })

  api.get('/documents/:slug', async (c) => {
    const principal = c.get('principal')
    const resolved = await services.documents.resolve(c.req.param('slug'), principal)
    if (resolved.kind === 'error') throw refusalToHttp(resolved)
    const { document, access }: Resolved = resolved.value
    return c.json({ ...present(document, access.whose), canWrite: access.canWrite })
  })

  // Export: the whole document as Markdown, for whoever may read it (404 alike for missing and forbidden).
  api.get('/documents/:slug/markdown', async (c) => {
    const resolved = await services.documents.resolve(c.req.param('slug'), c.get('principal'))
    if (resolved.kind === 'error') throw refusalToHttp(resolved)
    const markdown = await services.documents.markdownOf(resolved.value.document, c.get('principal').user.id)
    if (markdown.kind === 'error') throw refusalToHttp(markdown)
    // Sent piece by piece as they are rendered and the connection takes them (export-markdown.ts).
    return c.body(markdown.value, 200, { 'content-type': 'text/markdown; charset=utf-8' })
  })

  // Import: a new document from Markdown, by the same rules as `doc import` (importMarkdown's mapping).
  api.post(
    '/documents',
    bodyLimit({
      maxSize: MAX_API_IMPORT_BODY_BYTES,
      onError: () => {
        throw httpRefusal(
          'payload_too_large',
          `body: over ${MAX_API_IMPORT_BODY_BYTES} bytes; a Markdown file may hold at most ${MAX_IMPORT_BYTES} bytes, split it into several documents`,
          { field: 'markdown' },
        )
      },
    }),
    async (c) => {
      const principal = c.get('principal')
      if (!principal.scopes.includes('write')) {
        throw httpRefusal('forbidden', 'token: it has no write scope; issue one with --scope read,write')
      }
      const input = await importInput(c.req.raw)
      const result = await services.documents.importMarkdown(principal.user.id, {
        markdown: input.markdown,
        title: input.title,
        fallbackTitle: input.fallbackTitle ?? 'Untitled',
        isPrivate: input.private ?? true,
        json: input.json,
      })
      if (result.kind === 'error') throw refusalToHttp(result)
      const { document, changes } = result.value
      return c.json({ ...present(document, 'yours'), canWrite: true, changes }, 201)
    },
  )

  // ---- The owner's controls: visibility, read-only, members -----------------------------------------

  api.patch('/documents/:slug', async (c) => {
    const { document } = await owned(c.req.param('slug'), c.get('principal'))
    const body = flagsSchema.safeParse(await jsonBody(c.req.raw))
    if (!body.success) throw zodRefusal(body.error)
    const result = await services.documents.setFlags(document.slug, {
      isPrivate: body.data.private,
      readOnly: body.data.readOnly,
      agentsSuggest: body.data.agentsSuggest,
    })
    if (result.kind === 'error') throw refusalToHttp(result)
    return c.json({ ...present({ ...document, ...result.value }, 'yours'), canWrite: true })
  })

  // Deletion (the owner's): the document goes for everyone, as `doc delete` does; its slug then answers 404.
  api.delete('/documents/:slug', async (c) => {
    const principal = c.get('principal')
    if (!principal.scopes.includes('write')) {
      throw httpRefusal('forbidden', 'token: it has no write scope; issue one with --scope read,write')
    }
    const { document } = await owned(c.req.param('slug'), principal, 'delete it')
    const deleted = await services.documents.softDelete(document.slug)
    if (deleted.kind === 'error') throw refusalToHttp(deleted)
    return c.json({ slug: document.slug, deleted: true })
  })

  api.get('/documents/:slug/members', async (c) => {
    const { document } = await owned(c.req.param('slug'), c.get('principal'))
    const rows = await services.db.prisma.documentMember.findMany({
      where: { documentId: document.id },
      select: { role: true, user: { select: { handle: true } } },
      orderBy: { user: { handle: 'asc' } },
      take: MAX_API_MEMBERS,
    })
    return c.json({ members: rows.map((row) => ({ handle: row.user.handle, role: row.role })) })
  })

  api.put('/documents/:slug/members/:handle', async (c) => {
    const { document } = await owned(c.req.param('slug'), c.get('principal'))
    const body = memberSchema.safeParse(await jsonBody(c.req.raw))
    if (!body.success) throw zodRefusal(body.error)
    const user = await services.users.byHandle(c.req.param('handle'))
    if (user.kind === 'error') throw refusalToHttp({ ...user, field: 'handle' })
    const shared = await services.documents.share(document.slug, user.value.id, body.data.role)
    if (shared.kind === 'error')
      throw refusalToHttp({
        ...shared,
        field: 'handle',
        message: shared.message.replace(/^HANDLE/, 'handle'),
      })
    return c.json({ handle: user.value.handle, role: body.data.role })
  })

  api.delete('/documents/:slug/members/:handle', async (c) => {
    const { document } = await owned(c.req.param('slug'), c.get('principal'))
    const user = await services.users.byHandle(c.req.param('handle'))
    if (user.kind === 'error') throw refusalToHttp({ ...user, field: 'handle' })
    const removed = await services.documents.unshare(document.slug, user.value.id)
    if (removed.kind === 'error') throw refusalToHttp(removed)
    return c.json({ handle: user.value.handle, removed: removed.value.removed })
  })

  // ---- Chat: one room per heading (the same rooms as the MCP chat tools) ---------------------------

  api.get('/documents/:slug/chat/:sectionId', async (c) => {
    const resolved = await services.documents.resolve(c.req.param('slug'), c.get('principal'))
    if (resolved.kind === 'error') throw refusalToHttp(resolved)
    const beforeRaw = c.req.query('before')
    const before = beforeRaw === undefined ? undefined : Number(beforeRaw)
    if (before !== undefined && (!Number.isInteger(before) || before < 1)) {
      throw httpRefusal('invalid_input', 'before: a message seq (a whole number of 1 or more)', {
        field: 'before',
      })
    }
    const page = await services.chat.readThread(
      { documentId: resolved.value.document.id, sectionId: c.req.param('sectionId') },
      { beforeSeq: before, limit: MAX_API_CHAT_MESSAGES },
    )
    return c.json({
      messages: page.messages.map((m) => ({
        seq: m.seq,
        author: m.authorHandle,
        app: m.authorApp,
        text: m.text,
        createdAt: m.createdAt.toISOString(),
      })),
      // Older messages exist: GET again with ?before=<the first seq shown>.
      hasOlder: page.hasOlder,
    })
  })

  api.post(
    '/documents/:slug/chat/:sectionId',
    bodyLimit({
      maxSize: 64 * 1024,
      onError: () => {
        throw httpRefusal('payload_too_large', `text: at most ${MAX_CHAT_MESSAGE_CHARS} characters`, {
          field: 'text',
        })
      },
    }),
    async (c) => {
      const principal = c.get('principal')
      const resolved = await services.documents.resolve(c.req.param('slug'), principal)
      if (resolved.kind === 'error') throw refusalToHttp(resolved)
      const { document, access } = resolved.value
      if (!access.canWrite) {
        throw httpRefusal(
          'forbidden',
          `${document.slug}: posting in its chat needs write access (ask its owner to make you an editor)`,
        )
      }
      const body = chatSchema.safeParse(await jsonBody(c.req.raw))
      if (!body.success) throw zodRefusal(body.error)
      if (!deps.chatPosting) throw httpRefusal('not_found', 'chat: not served here')
      const posted = await deps.chatPosting.post(
        {
          document,
          sectionId: c.req.param('sectionId'),
          author: principal,
          text: body.data.text,
        },
        { text: 'text', sectionId: 'sectionId' },
      )
      if (posted.kind === 'error') throw refusalToHttp(posted)
      const { seq, author, app, text, createdAt } = posted.value
      return c.json({ seq, author, app, text, createdAt: createdAt.toISOString() }, 201)
    },
  )

  return api
}

const flagsSchema = z
  .object({
    private: z.boolean().optional(),
    readOnly: z.boolean().optional(),
    agentsSuggest: z.boolean().optional(),
  })
  .strict()
  .refine(
    (v) => v.private !== undefined || v.readOnly !== undefined || v.agentsSuggest !== undefined,
    'send private, readOnly and/or agentsSuggest',
  )
const memberSchema = z.object({ role: z.enum(['viewer', 'editor']) }).strict()
const chatSchema = z.object({ text: z.string().min(1).max(MAX_CHAT_MESSAGE_CHARS) }).strict()
