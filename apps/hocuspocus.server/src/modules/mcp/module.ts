/**
 * The MCP module: `init(deps)` builds the Hono router serving POST /mcp and its protected-resource
 * metadata. Nothing happens at import; the caller mounts the router (`app.route('/', router)`).
 */
import type { Hocuspocus } from '@hocuspocus/server'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { type AuthVariables, bearerAuth } from '../../http/bearer.ts'
import type { Logger } from '../../logger.ts'
import type { Services } from '../../services.ts'
import { buildMcpServer, handleMcpRequest } from './http/mcp-route.ts'
import { originHostGuard } from './http/origin-host.ts'
import { challengeFor, RESOURCE_METADATA_PATH, resourceMetadata } from './http/resource-metadata.ts'
import { createDocumentReader } from './infra/documents.ts'
import { createDocumentWriter } from './infra/writer.ts'
import { MAX_BODY_BYTES } from './limits.ts'
import { TOOLS } from './tools/index.ts'

export type McpConfig = {
  /** Origins (scheme://host[:port]) allowed to send `Origin` (MCP_ALLOWED_ORIGINS). Default: none. */
  allowedOrigins?: readonly string[]
  /** The interface the server listens on (HOST); loopback turns on the Host check. Default 127.0.0.1. */
  bindHost?: string
  /** Public base URL (PUBLIC_URL): used in the resource metadata and accepted as a Host. */
  publicUrl?: string
}

export type McpDeps = {
  services: Services
  hocuspocus: Hocuspocus
  logger: Logger
  config?: McpConfig
}

export type McpModule = { router: Hono<{ Variables: AuthVariables }> }

export function init(deps: McpDeps): McpModule {
  const { services, hocuspocus, config = {} } = deps
  const logger = deps.logger.child({ module: 'mcp' })
  const reader = createDocumentReader({ hocuspocus, documents: services.documents })
  const writer = createDocumentWriter({ hocuspocus, documents: services.documents })
  const publicUrl = config.publicUrl?.replace(/\/+$/, '')
  const originOf = (url: string) => publicUrl ?? new URL(url).origin
  const extraHosts = publicUrl ? [new URL(publicUrl).host, new URL(publicUrl).hostname] : []

  const router = new Hono<{ Variables: AuthVariables }>()

  router.get(RESOURCE_METADATA_PATH, (c) => c.json(resourceMetadata(originOf(c.req.url))))

  router.use(
    '/mcp',
    originHostGuard({
      allowedOrigins: config.allowedOrigins ?? [],
      bindHost: config.bindHost ?? '127.0.0.1',
      allowedHosts: extraHosts,
    }),
  )
  router.on(['GET', 'DELETE'], '/mcp', (c) =>
    c.json({ error: 'method_not_allowed', message: 'This MCP endpoint is stateless: use POST.' }, 405, {
      Allow: 'POST',
    }),
  )
  router.post(
    '/mcp',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        c.json({ error: 'payload_too_large', message: `Request body over ${MAX_BODY_BYTES} bytes.` }, 413),
    }),
    bearerAuth({ tokens: services.tokens, challenge: (url) => challengeFor(originOf(url)) }),
    async (c) => {
      const principal = c.get('principal')
      const server = buildMcpServer({ principal, services, hocuspocus, reader, writer, logger }, TOOLS)
      return handleMcpRequest(c.req.raw, server)
    },
  )
  return { router }
}
