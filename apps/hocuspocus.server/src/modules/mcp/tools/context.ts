/** What every tool handler receives: the caller and the module's narrow dependencies (never storage or Hocuspocus). */
import type { Principal } from '../../../auth/tokens.ts'
import type { ChatService } from '../../../chat/service.ts'
import type { SearchService } from '../../../documents/search.ts'
import type { DocumentsService } from '../../../documents/service.ts'
import type { Logger } from '../../../logger.ts'
import type { DocumentReader } from '../infra/documents.ts'
import type { RateLimiter } from '../infra/rate-limit.ts'
import type { DocumentWriter } from '../infra/writer.ts'
import type { CallReport, LogLevel } from './report.ts'

export type ToolDeps = {
  documents: Pick<DocumentsService, 'resolve' | 'create'>
  chat: Pick<ChatService, 'listRooms' | 'findRoom' | 'readThread' | 'post'>
  /** find_documents' queries and paging snapshots. */
  search: SearchService
  reader: DocumentReader
  writer: DocumentWriter
  /** Tells everyone with the document `room` open (a stateless message); a no-op when nobody has it open. */
  notify(room: string, payload: string): void
  logger: Logger
  /** Per-tool metrics (calls by outcome, latency); absent in tests that do not need them. */
  observer?: ToolObserver
  /** Tool calls per minute per user; absent means unlimited. */
  rateLimiter?: RateLimiter
}

/** The module's dependencies for one caller. */
export type CallerContext = ToolDeps & {
  principal: Principal
  /** The log level this caller set on this server (logging/setLevel); absent: the default. */
  logLevel?: LogLevel
}

export type ToolContext = CallerContext & {
  /** The name of the tool being called (set by the registration loop). */
  tool: string
  /** Progress and log messages of this one call (set by instrument() per call; absent outside a call). */
  report?: CallReport
}

export type ToolOutcome = 'ok' | 'refused' | 'error' | 'rate_limited' | 'unavailable'

/** Where instrument() reports each call (the app's Prometheus metrics). */
export type ToolObserver = (tool: string, outcome: ToolOutcome, seconds: number) => void
