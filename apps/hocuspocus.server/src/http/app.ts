/**
 * The HTTP side of the one port: health, metrics, the REST API, and the MCP module's router.
 * Every request is counted by route pattern and status, and timed.
 *
 * Operators' views: `/metrics` (counts, per-tool figures) answers loopback peers only, or, when
 * METRICS_TOKEN is set, only requests bearing that token (from anywhere, loopback too: behind a reverse
 * proxy on the same machine every request comes from loopback). `/health` answers everyone, but only
 * those allowed `/metrics` see the version and the database details; others get `{ status }`.
 *
 * For load balancers: `/health/live` says the process answers (restart it when it does not);
 * `/health/ready` (and `/health`, the same answer) says it should be sent work: the database answers and
 * the instance is not draining (server.ts `drain`, SIGTERM).
 */
import { createHash, timingSafeEqual } from 'node:crypto'

import { type Context, Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { routePath } from 'hono/route'
import type { AuthModule } from '../auth/module.ts'
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/errors.ts'
import type { Logger } from '../logger.ts'
import { isLoopback } from '../loopback.ts'
import type { Metrics } from '../metrics.ts'
import type { Services } from '../services.ts'
import { type ApiDeps, apiRoutes } from './api.ts'
import type { AuthVariables } from './bearer.ts'
import { createHealthProbe } from './health-probe.ts'
import { httpRefusal, refusalResponse } from './refusal.ts'
import type { WebApp } from './web.ts'

/** What server.ts passes with each request (`app.fetch(request, bindings)`). */
export type HttpBindings = {
  /** The peer's address (Bun's `server.requestIP`); absent or unknown counts as not loopback. */
  ip?: string
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest()

export function createHttpApp(deps: {
  services: Services
  /**
   * The MCP module's router (/mcp and its metadata; built by the composition root, which also uses the
   * module for stdio and closes it). Only its router is mounted here: the HTTP app sits below the module.
   */
  mcp: { router: Hono<{ Variables: AuthVariables }> }
  metrics: Metrics
  logger: Logger
  version: string
  /** METRICS_TOKEN: when set, /metrics (and /health's details) need `Authorization: Bearer <it>`. */
  metricsToken?: string
  /** Sign-in pages and the OAuth authorization server (auth/module.ts). */
  auth?: Pick<AuthModule, 'router'>
  /** The REST API's session sign-in, chat notifications and heading check (api.ts). */
  api?: ApiDeps
  /** The web editor at / (web.ts). */
  web?: Pick<WebApp, 'router'>
  /** True once the instance drains (SIGTERM): /health/ready answers 503 `draining`. Absent: never. */
  draining?: () => boolean
}) {
  const { services, metrics, logger } = deps
  const app = new Hono<{ Bindings: HttpBindings }>()
  const expectedToken = deps.metricsToken ? sha256(deps.metricsToken) : undefined
  const databaseProbe = createHealthProbe(() => services.db.prisma.$queryRaw`SELECT 1`)

  /** Whether this caller may see operators' figures: the token when one is set, else a loopback peer. */
  function operator(authorization: string | undefined, ip: string | undefined): boolean {
    if (!expectedToken) return isLoopback(ip)
    const match = /^Bearer (\S+)$/.exec(authorization ?? '')
    // Compared as SHA-256 digests: equal lengths, constant time, whatever was sent.
    return match !== null && timingSafeEqual(sha256(match[1]!), expectedToken)
  }

  app.use('*', async function measure(c, next) {
    const started = performance.now()
    await next()
    // Route patterns, not raw paths, keep label cardinality bounded.
    const route = c.res.status === 404 && routePath(c, -1) === '*' ? 'unmatched' : routePath(c, -1)
    metrics.httpRequests.inc({ method: c.req.method, route, status: String(c.res.status) })
    metrics.httpLatency.observe({ route }, (performance.now() - started) / 1000)
  })

  app.get('/health/live', (c) => c.json({ status: 'ok' }))

  const ready = async (c: Context<{ Bindings: HttpBindings }>) => {
    const detailed = operator(c.req.header('authorization'), c.env?.ip)
    // Not ready while draining, whatever the database says: the balancer must stop sending work here.
    if (deps.draining?.()) return c.json({ status: 'draining' }, 503, { 'Retry-After': '5' })
    // Never long behind a busy database (PGlite's one session writing a large state): health-probe.ts.
    const database = await databaseProbe.check()
    if (database.status === 'unreachable') {
      logger.warn({ err: database.reason }, 'health check: database unreachable')
      if (!detailed) return c.json({ status: 'error' }, 503)
      return c.json({ status: 'error', database: { kind: services.db.kind, status: 'unreachable' } }, 503)
    }
    if (!detailed) return c.json({ status: 'ok' })
    return c.json({ status: 'ok', version: deps.version, database: { kind: services.db.kind, ...database } })
  }
  app.get('/health', ready)
  app.get('/health/ready', ready)

  app.get('/metrics', (c) => {
    if (!operator(c.req.header('authorization'), c.env?.ip)) {
      throw expectedToken
        ? httpRefusal('unauthorized', 'Authorization: send Bearer <METRICS_TOKEN> to read /metrics', {
            headers: { 'WWW-Authenticate': 'Bearer' },
          })
        : httpRefusal(
            'forbidden',
            '/metrics answers loopback only; set METRICS_TOKEN on the server to read it from elsewhere with Authorization: Bearer',
          )
    }
    return c.text(metrics.render(), 200, { 'Content-Type': 'text/plain; version=0.0.4' })
  })

  app.route('/api', apiRoutes(services, deps.api))

  // The MCP module serves /mcp and its protected-resource metadata under /.well-known.
  app.route('/', deps.mcp.router)

  // People sign in (/sign-in, /consent, /apps, /invite) and OAuth clients use /auth/… and its metadata.
  if (deps.auth) app.route('/', deps.auth.router)

  // The web editor for people: /, /d/<slug>, /assets/….
  if (deps.web) app.route('/', deps.web.router)

  app.notFound((c) => refusalResponse('not_found', `No route for ${c.req.method} ${c.req.path}`))
  app.onError((error, c) => {
    if (error instanceof HTTPException) return error.getResponse()
    if (isDatabaseUnavailable(error)) {
      // The database is away (e.g. a bearer token could not be checked): 503, and when to come back.
      logger.warn({ route: routePath(c) }, 'HTTP request: database unavailable')
      const headers = { 'Retry-After': '5' }
      if (c.req.path === '/mcp')
        return c.json(
          { jsonrpc: '2.0', id: null, error: { code: -32000, message: DATABASE_UNAVAILABLE_MESSAGE } },
          503,
          headers,
        )
      return refusalResponse('database_unavailable', DATABASE_UNAVAILABLE_MESSAGE, { headers })
    }
    logger.error({ err: error, route: routePath(c) }, 'unhandled HTTP error')
    return refusalResponse('internal', 'Internal server error')
  })
  return app
}
