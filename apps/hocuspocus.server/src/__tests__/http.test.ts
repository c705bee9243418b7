/** The HTTP side of the port: health, metrics and the REST API for editors, over a real socket. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { startTestServer, userWithToken } from '@collab/test-support/server'
import type { RunningServer } from '../server.ts'

describe(`HTTP endpoints (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: RunningServer
  let owner: Awaited<ReturnType<typeof userWithToken>>
  let stranger: Awaited<ReturnType<typeof userWithToken>>
  let privateSlug: string

  beforeAll(async () => {
    db = await createTestDatabase()
    server = await startTestServer(db)
    owner = await userWithToken(server, 'olive')
    stranger = await userWithToken(server, 'sam')
    const created = await server.services.documents.create(owner.user.id, { title: 'Quarterly plan' })
    if (created.kind === 'error') throw new Error(created.message)
    privateSlug = created.value.slug
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await db?.cleanup()
  }, 60_000)

  const get = (path: string, token?: string) =>
    fetch(`${server.url}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} })

  test('GET /health checks the database and says which one', async () => {
    const res = await get('/health')
    expect(res.status).toBe(200)
    const body = (await res.json()) as { status: string; database: { kind: string; status: string } }
    expect(body.status).toBe('ok')
    expect(body.database).toMatchObject({ kind: DATABASE_KIND, status: 'ok' })
  })

  test('GET /metrics counts requests by route pattern and status, and exposes collab gauges', async () => {
    await get(`/api/documents/${privateSlug}`, owner.token)
    const text = await (await get('/metrics')).text()
    expect(text).toContain('http_requests_total{method="GET",route="/api/documents/:slug",status="200"}')
    expect(text).toMatch(/^collab_websocket_connections \d+$/m)
    expect(text).toMatch(/^collab_documents_loaded \d+$/m)
    expect(text).toMatch(/^collab_event_loop_turns_waiting \d+$/m)
    expect(text).toContain('# TYPE collab_document_store_failures_total counter')
    expect(text).toContain('http_request_duration_seconds_bucket{route="/health",le="+Inf"}')
    expect(text).not.toContain(privateSlug) // raw paths never become labels
  })

  test('GET /api/documents without a token is 401 with a Bearer challenge', async () => {
    const res = await get('/api/documents')
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer')
    const bad = await get('/api/documents', 'ctk_nope')
    expect(bad.status).toBe(401)
  })

  test('GET /api/documents lists the caller’s documents with their room', async () => {
    const res = await get('/api/documents', owner.token)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { documents: Array<Record<string, unknown>>; total: number }
    expect(body.total).toBe(1)
    expect(body.documents[0]).toMatchObject({
      slug: privateSlug,
      title: 'Quarterly plan',
      whose: 'yours',
      private: true,
    })
    expect(typeof body.documents[0]!.room).toBe('string')
    const theirs = (await (await get('/api/documents', stranger.token)).json()) as { total: number }
    expect(theirs.total).toBe(0)
  })

  test('GET /api/documents/:slug answers 404 alike for unknown and forbidden slugs', async () => {
    const forbidden = await get(`/api/documents/${privateSlug}`, stranger.token)
    const unknown = await get('/api/documents/no-such-document', stranger.token)
    expect(forbidden.status).toBe(404)
    expect(unknown.status).toBe(404)
    const f = (await forbidden.json()) as { message: string }
    const u = (await unknown.json()) as { message: string }
    expect(f.message.replace(privateSlug, 'X')).toBe(u.message.replace('no-such-document', 'X'))
    const mine = await get(`/api/documents/${privateSlug}`, owner.token)
    expect(mine.status).toBe(200)
    expect(await mine.json()).toMatchObject({ slug: privateSlug, whose: 'yours', canWrite: true })
  })

  test('every HTTP refusal is { error, message, field? } with the status its code maps to, and is counted', async () => {
    const cases = [
      {
        res: await get('/api/documents?offset=-1', owner.token),
        status: 400,
        error: 'invalid_input',
        field: 'offset',
      },
      { res: await get('/api/documents'), status: 401, error: 'unauthorized' },
      {
        res: await get('/api/documents/no-such-document', owner.token),
        status: 404,
        error: 'not_found',
        field: 'slug',
      },
      { res: await get('/no/such/route'), status: 404, error: 'not_found' },
      // The bearer token is checked before the method (a client probing with GET sees the challenge).
      { res: await get('/mcp', owner.token), status: 405, error: 'method_not_allowed' },
    ]
    for (const { res, status, error, field } of cases) {
      expect(res.status).toBe(status)
      expect(res.headers.get('content-type')).toStartWith('application/json')
      const body = (await res.json()) as Record<string, unknown>
      expect(Object.keys(body).sort()).toEqual(field ? ['error', 'field', 'message'] : ['error', 'message'])
      expect(body).toMatchObject({ error, ...(field ? { field } : {}) })
      if (field) expect(body.message).toStartWith(`${field}: `)
    }
    const text = await (await get('/metrics')).text()
    expect(text).toContain('http_requests_total{method="GET",route="/api/documents",status="400"}')
    expect(text).toContain('http_requests_total{method="GET",route="/api/documents/:slug",status="404"}')
  })
})
