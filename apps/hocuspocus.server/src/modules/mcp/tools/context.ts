/** What every tool handler receives: the caller and the module's narrow dependencies (never storage or Hocuspocus). */
import type { Principal } from '../../../auth/tokens.ts'
import type { ChatPosting } from '../../../chat/posting.ts'
import type { ChatService } from '../../../chat/service.ts'
import type { SearchService } from '../../../documents/search.ts'
import type { DocumentsService } from '../../../documents/service.ts'
import type { Logger } from '../../../logger.ts'
import type { DocumentReader } from '../infra/documents.ts'
import type { RateLimiter } from '../infra/rate-limit.ts'
import type { ServerTimeShares } from '../infra/server-time.ts'
import type { DocumentWriter } from '../infra/writer.ts'
import type { CallReport, LogLevel } from './report.ts'

export type ToolDeps = {
  documents: Pick<
    DocumentsService,
    | 'resolve'
    | 'create'
    | 'listVersionsCounted'
    | 'findVersion'
    | 'findVersionState'
    | 'authorsAfter'
    | 'saveNamedVersion'
    | 'versionsAfter'
    | 'planUndo'
    | 'saveBeforeVersion'
    | 'newestVersion'
    | 'resolveAuthors'
  >
  chat: Pick<ChatService, 'listRooms' | 'findRoom' | 'readThread'>
  /** Posting in a heading's chat room (chat/posting.ts: the same rule as the REST API's). */
  chatPosting: ChatPosting
  /** find_documents' queries and paging snapshots. */
  search: SearchService
  reader: DocumentReader
  writer: DocumentWriter
  logger: Logger
  /** Per-tool metrics (calls by outcome, latency); absent in tests that do not need them. */
  observer?: ToolObserver
  /** Tool calls per minute per user; absent means unlimited. */
  rateLimiter?: RateLimiter
  /** Each user's share of the server's time for calls (infra/server-time.ts); absent means unlimited. */
  serverTime?: ServerTimeShares
  /**
   * Test seam (fault injection): awaited at named points of a call with the call's signal, so a test can
   * hold a call there until its client aborts. Absent in production.
   */
  hold?: HoldSeam
}

/** The module's dependencies for one caller. */
export type CallerContext = ToolDeps & {
  principal: Principal
  /** The log level this caller set on this server (logging/setLevel); absent: the default. */
  logLevel?: LogLevel
  /**
   * Aborted when the caller goes away: over HTTP the request's own signal (the client closed the
   * connection) or a notifications/cancelled naming the call (http/in-flight.ts). instrument() joins it
   * with the SDK's per-request signal into ToolContext.signal.
   */
  signal?: AbortSignal
}

/**
 * Where a call can be held by the test seam: after the rate limit (`call`), before a loaded stored
 * state is decoded (`decode`), before a write is applied (`write`).
 */
export type HoldPoint = 'call' | 'decode' | 'write'

export type HoldSeam = (point: HoldPoint, call: { tool: string; signal: AbortSignal }) => Promise<void>

export type ToolContext = CallerContext & {
  /** The name of the tool being called (set by the registration loop). */
  tool: string
  /** Progress and log messages of this one call (set by instrument() per call; absent outside a call). */
  report?: CallReport
}

/** What a call passes to DocumentReader.open: its signal, and the seam's `decode` point when set. */
export function readCall(ctx: ToolContext): { signal?: AbortSignal; beforeDecode?: () => Promise<void> } {
  const { signal, hold } = ctx
  if (!signal || !hold) return { signal }
  return { signal, beforeDecode: () => hold('decode', { tool: ctx.tool, signal }) }
}

export type ToolOutcome = 'ok' | 'refused' | 'error' | 'rate_limited' | 'unavailable' | 'cancelled'

/** Where instrument() reports each call (the app's Prometheus metrics). */
export type ToolObserver = (tool: string, outcome: ToolOutcome, seconds: number) => void
