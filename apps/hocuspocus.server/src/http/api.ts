/**
 * REST for editors: which documents the caller has and which room (Yjs document name) to open.
 * Unknown and forbidden slugs both answer 404.
 */
import { Hono } from 'hono'
import type { DocumentListing, DocumentRow, Resolved } from '../documents/service.ts'
import type { Services } from '../services.ts'
import { type AuthVariables, bearerAuth } from './bearer.ts'
import { httpRefusal, refusalToHttp } from './refusal.ts'

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

  return api
}
