/**
 * The MCP module: `init(deps)` builds the Hono router serving POST /mcp and its protected-resource
 * metadata, and `connectStdio(principal)` for the stdio entry. Nothing happens at import; the caller
 * mounts the router (`app.route('/', router)`) and calls `close()` on shutdown.
 */
import type { Hocuspocus } from '@hocuspocus/server'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { Principal } from '../../auth/tokens.ts'
import type { ChatPosting } from '../../chat/posting.ts'
import { type AuthVariables, bearerAuth } from '../../http/bearer.ts'
import { refusalResponse } from '../../http/refusal.ts'
import type { Logger } from '../../logger.ts'
import type { Metrics } from '../../metrics.ts'
import type { Services } from '../../services.ts'
import { InFlightRequests } from './http/in-flight.ts'
import type { SharedServerParts } from './http/mcp-route.ts'
import { originHostGuard } from './http/origin-host.ts'
import { challengeFor, RESOURCE_METADATA_PATH, resourceMetadata } from './http/resource-metadata.ts'
import { createDocumentReader } from './infra/documents.ts'
import { createMemoryRateLimiter, createRedisRateLimiter } from './infra/rate-limit.ts'
import { type ServerTimeShares, serverTimeShares } from './infra/server-time.ts'
import { createDocumentWriter, type StoreConfirmations } from './infra/writer.ts'
import { MAX_BODY_BYTES } from './limits.ts'
import type { CallerContext, HoldSeam, ToolDeps, ToolObserver } from './tools/context.ts'
import { createLogLevel } from './tools/report.ts'

export type McpConfig = {
  /** Origins (scheme://host[:port]) allowed to send `Origin` (MCP_ALLOWED_ORIGINS). Default: none. */
  allowedOrigins?: readonly string[]
  /** The interface the server listens on (HOST); loopback turns on the Host check. Default 127.0.0.1. */
  bindHost?: string
  /** Public base URL (PUBLIC_URL): used in the resource metadata and accepted as a Host. */
  publicUrl?: string
  /** Tool calls per minute per user (MCP_CALLS_PER_MINUTE); 0 or absent turns the limit off. */
  callsPerMinute?: number
  /** Each user's share of server time for calls, percent of the event loop (0: none). */
  serverSharePercent?: number
  /** redis://… (REDIS_URL): the rate limit is counted in Redis, shared by every instance. */
  redisUrl?: string
  /**
   * The server's own OAuth authorization server (auth/module.ts): listed in the resource metadata and
   * the 401 challenge, and its access tokens accepted beside API tokens.
   */
  oauth?: {
    issuer(): string | undefined
    verifyAccessToken(token: string): Promise<Principal | null>
  }
  /**
   * A single plain tool call over HTTP is run without building an McpServer and transport
   * (http/mcp-route.ts); false sends every call through the SDK. Default true; the tests compare both.
   */
  directToolCalls?: boolean
}

export type McpDeps = {
  services: Pick<Services, 'documents' | 'search' | 'chat' | 'tokens'>
  /** Posting in a heading's chat room (chat/posting.ts), shared with the REST API. */
  chatPosting: ChatPosting
  /** Only for the live documents: read and written through the module's reader and writer. */
  hocuspocus: Pick<Hocuspocus, 'documents' | 'openDirectConnection'>
  logger: Logger
  /** The app's metrics: per-tool calls by outcome and latency. Optional for tests of the router alone. */
  metrics?: Pick<Metrics, 'mcpToolCalls' | 'mcpToolLatency' | 'mcpWholeReads' | 'mcpSectionReads'>
  /** Store confirmations (the persistence extension); without them a write is confirmed by reading back. */
  confirmations?: StoreConfirmations
  config?: McpConfig
  /** Test seam (fault injection): holds calls at named points (tools/context.ts HoldSeam). */
  hold?: HoldSeam
  /** Test seam: the users' shares of server time (a small share, so a test spends it quickly). */
  serverTime?: ServerTimeShares
}

export type McpModule = {
  router: Hono<{ Variables: AuthVariables }>
  /**
   * Serves MCP as `principal` over `transport` (default: this process's stdin/stdout) until it closes.
   * One long-lived server (the stdio session), with the same tools, limits and metrics as POST /mcp.
   */
  connectStdio(principal: Principal, transport?: Transport): Promise<McpServer>
  /** Releases the rate limiter's Redis connection and closes stdio sessions. */
  close(): Promise<void>
}

export function init(deps: McpDeps): McpModule {
  const { services, hocuspocus, config = {} } = deps
  const logger = deps.logger.child({ module: 'mcp' })
  const { metrics } = deps
  const reader = createDocumentReader({
    hocuspocus,
    documents: services.documents,
    onWholeRead: metrics && ((where) => metrics.mcpWholeReads.inc({ where })),
    onSectionRead: metrics && ((where) => metrics.mcpSectionReads.inc({ where })),
  })
  const writer = createDocumentWriter({
    hocuspocus,
    documents: services.documents,
    confirmations: deps.confirmations,
  })
  const publicUrl = config.publicUrl?.replace(/\/+$/, '')
  const originOf = (url: string) => publicUrl ?? new URL(url).origin
  const extraHosts = publicUrl ? [new URL(publicUrl).host, new URL(publicUrl).hostname] : []
  const limit = config.callsPerMinute ?? 0
  const rateLimiter =
    config.redisUrl && limit > 0
      ? createRedisRateLimiter(limit, config.redisUrl, logger)
      : createMemoryRateLimiter(limit)
  const observer: ToolObserver | undefined = metrics
    ? (tool, outcome, seconds) => {
        metrics.mcpToolCalls.inc({ tool, outcome })
        metrics.mcpToolLatency.observe({ tool }, seconds)
      }
    : undefined
  const toolDeps: ToolDeps = {
    documents: services.documents,
    chat: services.chat,
    search: services.search,
    reader,
    writer,
    chatPosting: deps.chatPosting,
    logger,
    observer,
    rateLimiter,
    serverTime: deps.serverTime ?? serverTimeShares(config.serverSharePercent ?? 0),
    hold: deps.hold,
  }
  const contextFor = (principal: Principal): CallerContext => ({ ...toolDeps, principal })
  const stdioServers = new Set<McpServer>()
  // The SDK and the tools (serving.ts), imported at the first call: a start and /health never wait for them.
  let serving: Promise<{ parts: typeof import('./serving.ts'); shared: SharedServerParts }> | undefined
  const loadServing = () => {
    if (!serving) {
      serving = import('./serving.ts').then((parts) => ({ parts, shared: parts.createSharedServerParts() }))
      serving.catch(() => {
        serving = undefined // a failed import is tried again by the next call
      })
    }
    return serving
  }
  const inFlight = new InFlightRequests()

  const router = new Hono<{ Variables: AuthVariables }>()

  const issuers = () => {
    const issuer = config.oauth?.issuer()
    return issuer ? [issuer] : []
  }
  router.get(RESOURCE_METADATA_PATH, (c) => c.json(resourceMetadata(originOf(c.req.url), issuers())))

  router.use(
    '/mcp',
    originHostGuard({
      allowedOrigins: config.allowedOrigins ?? [],
      bindHost: config.bindHost ?? '127.0.0.1',
      allowedHosts: extraHosts,
    }),
  )
  // The order every request to /mcp meets: Origin/Host (needs no principal) -> bearer token (401 with the
  // challenge, before any answer that depends on the method or the body) -> method (405) -> body (413).
  router.use(
    '/mcp',
    bearerAuth({
      tokens: services.tokens,
      challenge: (url) => challengeFor(originOf(url), issuers().length > 0),
      verifyOAuth: config.oauth?.verifyAccessToken,
    }),
  )
  router.on(['GET', 'DELETE'], '/mcp', () =>
    refusalResponse('method_not_allowed', 'This MCP endpoint is stateless: use POST.', {
      headers: { Allow: 'POST' },
    }),
  )
  router.post(
    '/mcp',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => refusalResponse('payload_too_large', `Request body over ${MAX_BODY_BYTES} bytes.`),
    }),
    async (c) => {
      const principal = c.get('principal')
      const { parts, shared } = await loadServing()
      const { buildMcpServer, handleMcpRequest, scopeSetOf, callToolDirectly, TOOLS } = parts
      // Aborted when the client closes the connection (the request's signal) or cancels one of this
      // POST's requests (notifications/cancelled in another POST, http/in-flight.ts): its calls stop.
      const controller = new AbortController()
      const requestSignal = c.req.raw.signal
      const onAbort = () => controller.abort(requestSignal.reason)
      if (requestSignal.aborted) onAbort()
      else requestSignal.addEventListener('abort', onAbort, { once: true })
      const context = { ...contextFor(principal), signal: controller.signal }
      return handleMcpRequest(
        c.req.raw,
        (needs) => buildMcpServer(context, TOOLS, shared, { ...needs, rememberLogLevel: true }),
        shared.toolLists.get(scopeSetOf(principal.scopes)),
        config.directToolCalls === false
          ? undefined
          : (name, args) =>
              callToolDirectly(
                {
                  ...context,
                  logLevel: createLogLevel({ levels: shared.logLevels, key: principal.tokenId }),
                },
                TOOLS,
                name,
                args,
              ),
        (body) => {
          const release = inFlight.track(principal.tokenId, body, controller)
          return () => {
            release()
            requestSignal.removeEventListener('abort', onAbort)
          }
        },
      )
    },
  )

  return {
    router,
    async connectStdio(principal, transport) {
      const { parts, shared } = await loadServing()
      const server = parts.buildMcpServer(contextFor(principal), parts.TOOLS, shared, {
        watch: deps.confirmations,
      })
      stdioServers.add(server)
      const onclose = server.server.onclose
      server.server.onclose = () => {
        stdioServers.delete(server)
        onclose?.()
      }
      await server.connect(transport ?? new parts.StdioServerTransport())
      return server
    },
    async close() {
      await Promise.all([...stdioServers].map((s) => s.close().catch(() => {})))
      await rateLimiter.close()
    },
  }
}
