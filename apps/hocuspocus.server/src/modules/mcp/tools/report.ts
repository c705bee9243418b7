/**
 * What one call tells its caller while it runs, besides its answer:
 * - progress notifications, only when the request carries a progress token (`_meta.progressToken`): one
 *   when the call reaches a stage the tool names, and one every PROGRESS_INTERVAL_MS while the call lasts
 *   ("still <stage>", or "still working" before any), so a host whose request timeout restarts on
 *   progress keeps waiting for a long call, whatever the tool;
 * - log messages (`notifications/message`) at or above the caller's level (logging/setLevel: for its
 *   session over stdio, for its token's later requests over HTTP), by default DEFAULT_LOG_LEVEL. Stages
 *   are `info`; a failure on the server is `error`.
 * Both travel with the call (related to its request): over HTTP they reach the caller when the answer is
 * a stream, which the route chooses when the request carries a progress token (http/mcp-route.ts).
 * Nothing a person wrote is ever in them: stage texts are the server's own words.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type {
  LoggingLevel,
  ProgressToken,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import { MAX_REMEMBERED_LOG_LEVELS, PROGRESS_INTERVAL_MS } from '../limits.ts'

/** The SDK's second argument to a tool, resource or prompt handler: the request it answers. */
export type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** The least severe level sent to a caller that has not called logging/setLevel. */
export const DEFAULT_LOG_LEVEL: LoggingLevel = 'notice'

/** The logger name on every log message. */
export const LOGGER_NAME = 'collab-documents'

const SEVERITY: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]

/** The level one server (one HTTP request, or one stdio session) sends log messages from. */
export type LogLevel = {
  get(): LoggingLevel
  set(level: LoggingLevel): void
}

/**
 * A server's level. Over stateless HTTP each request has its own server, so `remembered` carries the
 * level a token set to its later requests (RememberedLogLevels); a stdio session's server keeps its own.
 */
export function createLogLevel(remembered?: { levels: RememberedLogLevels; key: string }): LogLevel {
  let level = remembered?.levels.get(remembered.key) ?? DEFAULT_LOG_LEVEL
  return {
    get: () => level,
    set(next) {
      level = next
      remembered?.levels.set(remembered.key, next)
    },
  }
}

/**
 * The levels tokens set over HTTP, in this process's memory: at most MAX_REMEMBERED_LOG_LEVELS, the one
 * set longest ago forgotten first (it then falls back to DEFAULT_LOG_LEVEL).
 */
export class RememberedLogLevels {
  private readonly levels = new Map<string, LoggingLevel>()

  get(key: string): LoggingLevel | undefined {
    return this.levels.get(key)
  }

  set(key: string, level: LoggingLevel): void {
    this.levels.delete(key)
    this.levels.set(key, level)
    if (this.levels.size > MAX_REMEMBERED_LOG_LEVELS) {
      const oldest = this.levels.keys().next().value
      if (oldest !== undefined) this.levels.delete(oldest)
    }
  }
}

export const isAtLeast = (level: LoggingLevel, minimum: LoggingLevel): boolean =>
  SEVERITY.indexOf(level) >= SEVERITY.indexOf(minimum)

export type CallReport = {
  /** The call reached a stage (the server's words, e.g. "rendering up to 100000 characters"). */
  stage(message: string): void
  /** A log message to the caller, unless its level is below the caller's. */
  log(level: LoggingLevel, message: string): void
  /** The call has its answer: no more heartbeats. */
  end(): void
}

/**
 * The report of one call as `tool`. Without `extra` (a direct call in a test) it reports nothing.
 * Notifications that cannot be sent (the caller went away) are dropped: they never fail the call.
 * `intervalMs`: the heartbeat's period, PROGRESS_INTERVAL_MS but in a test of the heartbeat itself.
 */
export function callReport(
  tool: string,
  extra: CallExtra | undefined,
  level: LogLevel | undefined,
  intervalMs = PROGRESS_INTERVAL_MS,
): CallReport {
  if (!extra) return { stage() {}, log() {}, end() {} }
  const token: ProgressToken | undefined = extra._meta?.progressToken
  let progress = 0
  let current = 'working'
  let timer: ReturnType<typeof setInterval> | undefined
  let ended = false
  const send = (notification: ServerNotification) => {
    extra.sendNotification(notification).catch(() => {})
  }
  const tick = (message: string) => {
    if (token === undefined) return
    progress += 1
    send({ method: 'notifications/progress', params: { progressToken: token, progress, message } })
  }
  const log = (logLevel: LoggingLevel, message: string) => {
    if (!isAtLeast(logLevel, level?.get() ?? DEFAULT_LOG_LEVEL)) return
    send({
      method: 'notifications/message',
      params: { level: logLevel, logger: LOGGER_NAME, data: `${tool}: ${message}` },
    })
  }
  // From the call's start, so a tool that names no stage (an edit waiting for its store) is heard too.
  if (token !== undefined) {
    timer = setInterval(() => tick(`still ${current}`), intervalMs)
    timer.unref?.()
  }
  return {
    stage(message) {
      if (ended) return
      current = message
      tick(message)
      log('info', message)
    },
    log,
    end() {
      ended = true
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    },
  }
}
