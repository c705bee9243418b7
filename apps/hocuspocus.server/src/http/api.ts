/**
 * REST for editors: which documents the caller has and which room (Yjs document name) to open, a
 * document as Markdown (export) and a new document from Markdown (import). Unknown and forbidden slugs
 * both answer 404.
 */
import { MAX_IMPORT_BYTES } from '@collab/doc-schema'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { z } from 'zod'
import type { DocumentListing, DocumentRow, Resolved } from '../documents/service.ts'
import type { Services } from '../services.ts'
import { type AuthVariables, bearerAuth } from './bearer.ts'
import { httpRefusal, refusalToHttp } from './refusal.ts'

/**
 * Largest body of POST /documents: a Markdown file at the import limit once JSON has escaped it (quotes,
 * backslashes and newlines take two bytes, so at most twice its size), plus the other fields.
 */
export const MAX_API_IMPORT_BODY_BYTES = 2 * MAX_IMPORT_BYTES + 64 * 1024

/** Collection answers are bounded; the caller's documents beyond this are reached with `?offset=`. */
export const MAX_API_DOCUMENTS = 200

const present = (doc: DocumentRow, whose: string) => ({
  slug: doc.slug,
  title: doc.title,
  whose,
  private: doc.isPrivate,
  readOnly: doc.readOnly,
  room: doc.room,
  createdAt: doc.createdAt.toISOString(),
  updatedAt: doc.contentUpdatedAt.toISOString(),
})

export function apiRoutes(services: Services) {
  const api = new Hono<{ Variables: AuthVariables }>()
  api.use('*', bearerAuth({ tokens: services.tokens }))

  api.get('/documents', async (c) => {
    const offsetRaw = c.req.query('offset') ?? '0'
    const offset = Number(offsetRaw)
    if (!Number.isInteger(offset) || offset < 0) {
      throw httpRefusal('invalid_input', 'offset: must be a whole number of 0 or more', { field: 'offset' })
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
    const markdown = await services.documents.markdownOf(resolved.value.document)
    if (markdown.kind === 'error') throw refusalToHttp(markdown)
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
        fallbackTitle: 'Untitled',
        isPrivate: input.private ?? true,
      })
      if (result.kind === 'error') throw refusalToHttp(result)
      const { document, changes } = result.value
      return c.json({ ...present(document, 'yours'), canWrite: true, changes }, 201)
    },
  )

  return api
}

const importSchema = z.object({
  title: z.string().optional(),
  markdown: z.string(),
  private: z.boolean().optional(),
})

/** The body of POST /documents: JSON {title?, markdown, private?}, or the Markdown itself (text/markdown). */
async function importInput(request: Request): Promise<z.infer<typeof importSchema>> {
  const type = request.headers.get('content-type') ?? ''
  if (/^text\/(markdown|plain)\b/i.test(type)) return { markdown: await request.text() }
  if (!/^application\/json\b/i.test(type)) {
    throw httpRefusal(
      'invalid_input',
      'content-type: send application/json {"title"?, "markdown", "private"?} or text/markdown',
      { field: 'content-type' },
    )
  }
  let json: unknown
  try {
    json = await request.json()
  } catch {
    throw httpRefusal('invalid_input', 'body: not JSON; send {"title"?, "markdown", "private"?}')
  }
  const parsed = importSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = issue?.path.map(String).join('.') || 'body'
    throw httpRefusal('invalid_input', `${field}: ${issue?.message ?? 'invalid'}`, { field })
  }
  return parsed.data
}
