/**
 * The HTTP side of the one port: health, metrics, the REST API, and the MCP module's router.
 * Every request is counted by route pattern and status, and timed.
 */

import { Hono } from 'hono'
import { routePath } from 'hono/route'
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/errors.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics.ts'
import type { McpModule } from '../modules/mcp/index.ts'
import type { Services } from '../services.ts'
import { apiRoutes } from './api.ts'

export function createHttpApp(deps: {
  services: Services
  /** The MCP module (built by the composition root, which also uses it for stdio and closes it). */
  mcp: Pick<McpModule, 'router'>
  metrics: Metrics
  logger: Logger
  version: string
}) {
  const { services, metrics, logger } = deps
  const app = new Hono()

  app.use('*', async function measure(c, next) {
    const started = performance.now()
    await next()
    // Route patterns, not raw paths, keep label cardinality bounded.
    const route = c.res.status === 404 && routePath(c, -1) === '*' ? 'unmatched' : routePath(c, -1)
    metrics.httpRequests.inc({ method: c.req.method, route, status: String(c.res.status) })
    metrics.httpLatency.observe({ route }, (performance.now() - started) / 1000)
  })

  app.get('/health', async (c) => {
    const started = performance.now()
    try {
      await services.db.prisma.$queryRaw`SELECT 1`
      return c.json({
        status: 'ok',
        version: deps.version,
        database: {
          kind: services.db.kind,
          status: 'ok',
          latencyMs: Math.round(performance.now() - started),
        },
      })
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'health check: database unreachable')
      return c.json({ status: 'error', database: { kind: services.db.kind, status: 'unreachable' } }, 503)
    }
  })

  app.get('/metrics', (c) => c.text(metrics.render(), 200, { 'Content-Type': 'text/plain; version=0.0.4' }))

  app.route('/api', apiRoutes(services))

  // The MCP module serves /mcp and its protected-resource metadata under /.well-known.
  app.route('/', deps.mcp.router)

  app.notFound((c) =>
    c.json({ error: 'not_found', message: `No route for ${c.req.method} ${c.req.path}` }, 404),
  )
  app.onError((error, c) => {
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
      return c.json({ error: 'database_unavailable', message: DATABASE_UNAVAILABLE_MESSAGE }, 503, headers)
    }
    logger.error({ err: error, route: routePath(c) }, 'unhandled HTTP error')
    return c.json({ error: 'internal', message: 'Internal server error' }, 500)
  })
  return app
}
