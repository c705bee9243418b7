/**
 * One process, one port: Bun.serve upgrades WebSocket requests into Hocuspocus and hands every other
 * request to the Hono app. `startServer` is the composition root shared by main.ts and the tests.
 */
import type { Hocuspocus } from '@hocuspocus/server'
import type { Server, ServerWebSocket } from 'bun'
import type { ClientMetadataFetch } from './auth/better-auth.ts'
import { type AuthModule, createAuthModule } from './auth/module.ts'
import { clientAddress, DEFAULT_TRUSTED_PROXIES } from './auth/routes/client-address.ts'
import { type ChatPosting, createChatPosting } from './chat/posting.ts'
import { type AdminChannel, startAdminChannel } from './cli/admin-channel.ts'
import {
  FLOOD_CLOSE_CODE,
  FLOOD_CLOSE_REASON,
  FloodBuckets,
  USER_FLOOD_CLOSE_REASON,
} from './collab/flood.ts'
import { headingExists } from './collab/headings.ts'
import { type Collab, createCollab } from './collab/hocuspocus.ts'
import { MAX_EDITOR_WAIT_MS, SOCKET_AUTH_TIMEOUT_MS } from './collab/limits.ts'
import { defaultMaxSockets, SocketGate } from './collab/socket-gate.ts'
import type { Config } from './config.ts'
import { startEmbeddedMaintenance } from './db/maintenance.ts'
import { startOutlineBackfill } from './documents/outline-backfill.ts'
import { startSearchBackfill } from './documents/search-backfill.ts'
import { JOB_MAX_MS } from './documents/worker/pool.ts'
import { createHttpApp } from './http/app.ts'
import { createFirstScreen } from './http/first-screen.ts'
import { createWebApp } from './http/web.ts'
import type { Logger } from './logger.ts'
import { createMetrics, type Metrics } from './metrics.ts'
import { init as initMcp, type McpModule } from './modules/mcp/index.ts'
import type { ServerTimeShares } from './modules/mcp/infra/server-time.ts'
import { createDocumentWriter } from './modules/mcp/infra/writer.ts'
import type { HoldSeam } from './modules/mcp/tools/context.ts'
import { openServerDatabase, type ServerDatabase } from './server-database.ts'
import { createServices, type Services } from './services.ts'

export const VERSION = '0.1.0'

type SocketData = {
  request: Request
  connection?: ReturnType<Hocuspocus['handleConnection']>
  /** Arrival flood control (collab/boundary.ts): a socket far over the rates is closed. */
  flood?: FloodBuckets
  /** The client's address (behind a trusted proxy, the one it names), which the socket gate counts by. */
  address: string
}

export type RunningServer = {
  url: string
  port: number
  services: Services
  collab: Collab
  metrics: Metrics
  /** The MCP module: its router is mounted on the port; `connectStdio` serves the stdio entry. */
  mcp: McpModule
  /** Posting in a heading's chat room: the MCP tool and the REST API share it. */
  chatPosting: ChatPosting
  /** Sign-in, invites, connected apps and the OAuth authorization server (auth/module.ts). */
  auth: AuthModule
  /**
   * Takes the instance out of a balancer's rotation: from now on /health/ready answers 503 `draining` and
   * new editor sockets are refused 503 (a balancer passes them to another instance), while open sockets and
   * HTTP requests are still served; resolves after `graceMs`, or at once when `skip()` is called (a second
   * signal). `stop()` then hands the editors over and stores everything.
   */
  drain(graceMs: number): { done: Promise<void>; skip(): void }
  /** Stops accepting, closes connections, stores every pending change, closes the database. */
  stop(): Promise<{ unstored: string[] }>
}

/** What a draining instance answers a new editor socket: a balancer passes it to another instance. */
export const DRAINING_MESSAGE = 'This instance is shutting down; connect again (another instance will answer)'

export async function startServer(
  config: Config,
  logger: Logger,
  /**
   * Test seams with no environment setting: how Client ID Metadata Documents are fetched; where MCP
   * calls are held (fault injection, modules/mcp/tools/context.ts).
   */
  seams: {
    clientMetadataFetch?: ClientMetadataFetch
    mcpHold?: HoldSeam
    mcpServerTime?: ServerTimeShares
    /** The database as boot.ts opened it (openServerDatabase); absent: opened here. */
    database?: Promise<ServerDatabase>
  } = {},
): Promise<RunningServer> {
  // Already opening when boot.ts started it before importing this file (server-database.ts).
  const { database, lock } = await (seams.database ?? openServerDatabase(config, logger))
  // PGlite has no autovacuum: without this its tables grow by every stored state, forever.
  const maintenance =
    database.kind === 'pglite' ? startEmbeddedMaintenance({ db: database, logger }) : undefined
  const services = createServices(database)
  const metrics = createMetrics()
  // The web editor's sockets sign in by the browser's cookie (auth is built below; called only later).
  const browserSession = {
    principal: (headers: Headers) => auth.sessionPrincipal(headers),
    origin: () => auth.origin(),
  }
  const collab = await createCollab({ config, services, logger, metrics, session: browserSession })
  // Documents stored before the search columns existed get them, in the background, once.
  const searchBackfill = startSearchBackfill({
    prisma: database.prisma,
    documents: services.documents,
    live: (room) => collab.hocuspocus.documents.get(room),
    logger,
  })
  // Stored outlines written before section sizes were counted get them, after the search backfill.
  const outlineBackfill = startOutlineBackfill({
    prisma: database.prisma,
    documents: services.documents,
    logger,
    after: searchBackfill.done,
  })
  // Sign-in and OAuth: built on first use, once the listening address (PORT=0) is known.
  let listeningUrl = ''
  const auth = createAuthModule({
    prisma: database.prisma,
    logger,
    baseUrl: () => config.publicUrl ?? listeningUrl,
    secret: config.authSecret,
    trustedProxies: config.trustedProxies,
    clientMetadataFetch: seams.clientMetadataFetch,
    accessChanges: services.accessChanges,
  })
  const chatPosting = createChatPosting({
    chat: services.chat,
    headingExists: (room, sectionId) => headingExists(services, collab.hocuspocus, room, sectionId),
    notify: (room, payload) => collab.hocuspocus.documents.get(room)?.broadcastStateless(payload),
  })
  const mcp = initMcp({
    services,
    chatPosting,
    hocuspocus: collab.hocuspocus,
    confirmations: collab.persistence,
    logger,
    metrics,
    hold: seams.mcpHold,
    serverTime: seams.mcpServerTime,
    config: {
      allowedOrigins: config.mcpAllowedOrigins,
      bindHost: config.host,
      publicUrl: config.publicUrl,
      callsPerMinute: config.mcpCallsPerMinute ?? 0,
      serverSharePercent: config.mcpServerSharePercent ?? 0,
      redisUrl: config.redisUrl,
      oauth: auth,
    },
  })
  const historyWriter = createDocumentWriter({
    hocuspocus: collab.hocuspocus,
    documents: services.documents,
    confirmations: collab.persistence,
  })
  const app = createHttpApp({
    services,
    mcp,
    metrics,
    logger,
    version: VERSION,
    metricsToken: config.metricsToken,
    auth,
    api: {
      session: browserSession,
      chatPosting,
      history: {
        live: (room) => collab.hocuspocus.documents.get(room),
        // Restore and revert from the history panel: the same live write as an agent's edit.
        write: (room, context, edit, rest) => historyWriter.write(room, context, edit, { rest }),
        storePending: (room) => historyWriter.storePending(room),
      },
    },
    web: createWebApp({
      logger,
      session: browserSession,
      signInEnabled: () => auth.enabled(),
      firstScreen: createFirstScreen({
        documents: services.documents,
        live: (room) => collab.hocuspocus.documents.get(room),
        logger,
      }),
    }),
    draining: () => draining,
  })
  const { hocuspocus } = collab
  let draining = false
  // Sockets are file descriptors, as the database's files are: collab/socket-gate.ts.
  const trustedProxies = config.trustedProxies ?? DEFAULT_TRUSTED_PROXIES
  const gate = new SocketGate({
    authTimeoutMs: config.wsAuthTimeoutMs ?? SOCKET_AUTH_TIMEOUT_MS,
    maxSockets: config.wsMaxSockets || defaultMaxSockets(),
    authenticated: (socket) => collab.inflow.known((socket as ServerWebSocket<SocketData>).data.request),
    onRefused: (kind) => metrics.editorRefusals.inc({ kind }),
  })

  const server: Server<SocketData> = Bun.serve<SocketData>({
    hostname: config.host,
    port: config.port,
    // Bun times a request out after 10 s by default when it came on a reused keep-alive connection, even
    // while its handler is still working, and Bun's fetch then sends the request again (tried here: the
    // handler ran twice). An export or import of a large document waits for the worker for up to
    // JOB_MAX_MS: under load the export's second request was refused as "an export of yours is still
    // being written". That and a little more lets the worker's deadline, not the socket, end a job
    // (Bun allows up to 255 s).
    idleTimeout: Math.min(255, Math.ceil(JOB_MAX_MS / 1000) + 15),
    fetch(request, srv) {
      if (request.headers.get('upgrade')?.toLowerCase() === 'websocket') {
        // Refused before the upgrade, as a plain 503: nginx's `proxy_next_upstream http_503` (and any
        // balancer's retry) then opens the socket on another instance instead.
        if (draining) return new Response(DRAINING_MESSAGE, { status: 503, headers: { 'Retry-After': '1' } })
        const peer = srv.requestIP(request)?.address
        const address =
          clientAddress(peer, request.headers.get('x-forwarded-for') ?? undefined, trustedProxies) ??
          'unknown'
        const refused = gate.refusal(address)
        if (refused) return new Response(refused, { status: 503, headers: { 'Retry-After': '5' } })
        if (srv.upgrade(request, { data: { request, address } })) return undefined
        return new Response('WebSocket upgrade failed', { status: 400 })
      }
      // The peer's address decides who may read /metrics (http/app.ts).
      return app.fetch(request, { ip: srv.requestIP(request)?.address })
    },
    websocket: {
      // Hocuspocus enforces its own limits on queued messages; this bounds one frame.
      maxPayloadLength: 16 * 1024 * 1024,
      open(ws: ServerWebSocket<SocketData>) {
        gate.opened(ws, ws.data.address)
        ws.data.connection = hocuspocus.handleConnection(ws, ws.data.request)
      },
      message(ws: ServerWebSocket<SocketData>, message) {
        // A binary message is a Buffer of its own (Bun allocates one per message): viewed, not copied (a
        // copy of every message was a quarter of the server's CPU under a flood of presence).
        const bytes =
          typeof message === 'string'
            ? new TextEncoder().encode(message)
            : new Uint8Array(message.buffer, message.byteOffset, message.byteLength)
        ws.data.flood ??= new FloodBuckets()
        if (ws.data.flood.draw(bytes.byteLength) > MAX_EDITOR_WAIT_MS) {
          metrics.editorRefusals.inc({ kind: 'flood' })
          ws.close(FLOOD_CLOSE_CODE, FLOOD_CLOSE_REASON)
          return
        }
        // And the user's bytes across all their sockets (each socket within its own rates, many of them).
        if (collab.inflow.draw(ws.data.request, bytes.byteLength) > MAX_EDITOR_WAIT_MS) {
          metrics.editorRefusals.inc({ kind: 'user_flood' })
          ws.close(FLOOD_CLOSE_CODE, USER_FLOOD_CLOSE_REASON)
          return
        }
        ws.data.connection?.handleMessage(bytes)
      },
      close(ws: ServerWebSocket<SocketData>, code, reason) {
        gate.closed(ws)
        ws.data.connection?.handleClose({ code, reason } as CloseEvent)
      },
    },
  })

  let admin: AdminChannel | undefined
  if (lock) admin = startAdminChannel({ dataDir: config.dataDir, services, logger })

  const port = server.port ?? config.port
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`
  listeningUrl = url
  let stopping: Promise<{ unstored: string[] }> | undefined

  return {
    url,
    port,
    services,
    collab,
    metrics,
    mcp,
    chatPosting,
    auth,
    drain(graceMs) {
      if (!draining) logger.info({ graceMs }, 'draining: not ready, refusing new editor sockets')
      draining = true
      let skip = () => {}
      const done = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs)
        skip = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      return { done, skip }
    },
    stop() {
      stopping ??= (async () => {
        draining = true
        server.stop(false) // stop accepting; existing sockets are closed below
        admin?.stop()
        await Promise.all([searchBackfill.stop(), outlineBackfill.stop()])
        auth.close()
        // Before the documents' worker closes: a compaction it refuses now is skipped, not run here.
        collab.persistence.beginClosing()
        services.documents.close()
        await mcp.close()
        hocuspocus.closeConnections()
        collab.stopReceiving() // what other instances' editors write is theirs to store
        hocuspocus.flushPendingStores()
        const unstored = await collab.persistence.flush(config.shutdownTimeoutMs)
        if (unstored.length)
          logger.error({ rooms: unstored.length }, 'shutdown: some documents could not be stored')
        server.stop(true)
        await collab.close()
        await maintenance?.stop()
        await database
          .close()
          .catch((err) => logger.warn({ err: err.message }, 'closing the database failed'))
        lock?.release()
        return { unstored }
      })()
      return stopping
    },
  }
}
