/**
 * "Since you last looked" (docs/history.md, On the web page): the newest version of a document a person
 * had seen, kept per user on the server (`document_looks`), so the web page's notice works across
 * browsers and devices. Mounted under /api by api.ts, behind the same bearer; read access to the document
 * is enough (a viewer has a last look too). Unknown and unreadable slugs answer 404 alike.
 *
 *   GET /api/documents/:slug/last-look
 *     → { mark: { versionId: string, createdAt: ISO } | null }   (null: never looked from any device)
 *   PUT /api/documents/:slug/last-look   { versionId: string }
 *     → { mark }   the version must be one of the document's kept versions (404 otherwise, `field`
 *       versionId). The mark moves forward only: a version older than the stored mark (a second browser
 *       left open on an old page) leaves it where it is, and the answer says where that is.
 */
import { Hono } from 'hono'
import { z } from 'zod'
import type { Services } from '../services.ts'
import { versionIdOf } from './api-history.ts'
import type { AuthVariables } from './bearer.ts'
import { httpRefusal, refusalToHttp } from './refusal.ts'

const markSchema = z.object({ versionId: z.union([z.string(), z.number().int()]).transform(String) }).strict()

type LookRow = { versionId: bigint; versionAt: Date }
const present = (row: LookRow | null) =>
  row ? { versionId: String(row.versionId), createdAt: row.versionAt.toISOString() } : null

export function lastLookRoutes(services: Services) {
  const routes = new Hono<{ Variables: AuthVariables }>()
  const prisma = services.db.prisma

  async function readable(slug: string, principal: AuthVariables['principal']) {
    const resolved = await services.documents.resolve(slug, principal)
    if (resolved.kind === 'error') throw refusalToHttp(resolved)
    return resolved.value.document
  }

  routes.get('/documents/:slug/last-look', async (c) => {
    const principal = c.get('principal')
    const document = await readable(c.req.param('slug'), principal)
    const row = await prisma.documentLook.findUnique({
      where: { userId_documentId: { userId: principal.user.id, documentId: document.id } },
      select: { versionId: true, versionAt: true },
    })
    return c.json({ mark: present(row) })
  })

  routes.put('/documents/:slug/last-look', async (c) => {
    const principal = c.get('principal')
    const document = await readable(c.req.param('slug'), principal)
    const body = markSchema.safeParse(await c.req.json().catch(() => undefined))
    if (!body.success)
      throw httpRefusal(
        'invalid_input',
        'versionId: send { "versionId": "<id>" }, the id of a version the page showed (GET …/versions lists them)',
        { field: 'versionId' },
      )
    const versionId = versionIdOf(body.data.versionId, 'versionId')
    // Its time only (never its state).
    const version = await prisma.documentVersion.findFirst({
      where: { id: versionId, documentId: document.id },
      select: { createdAt: true },
    })
    if (!version)
      throw httpRefusal(
        'not_found',
        `versionId: no version ${versionId} of "${document.slug}" is kept; GET …/versions lists the versions kept`,
        { field: 'versionId' },
      )
    const key = { userId: principal.user.id, documentId: document.id }
    const mark = { versionId, versionAt: version.createdAt }
    // Forward only, in one statement: two devices marking at once keep the newer mark.
    await prisma.$executeRaw`
      INSERT INTO document_looks (user_id, document_id, version_id, version_at, updated_at)
      VALUES (${key.userId}::uuid, ${key.documentId}::uuid, ${mark.versionId}, ${mark.versionAt}, now())
      ON CONFLICT (user_id, document_id) DO UPDATE
        SET version_id = EXCLUDED.version_id, version_at = EXCLUDED.version_at, updated_at = now()
        WHERE (document_looks.version_at, document_looks.version_id) < (EXCLUDED.version_at, EXCLUDED.version_id)`
    const row = await prisma.documentLook.findUnique({
      where: { userId_documentId: key },
      select: { versionId: true, versionAt: true },
    })
    return c.json({ mark: present(row) })
  })

  return routes
}
