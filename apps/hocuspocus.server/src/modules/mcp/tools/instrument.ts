/**
 * Wraps a tool handler: the per-user rate limit first, then one log line per call (tool, user id,
 * duration, outcome, output size; never arguments, text or tokens) and the per-tool metrics. Unexpected
 * failures are logged in full but answered with a generic message; a database that cannot be reached is
 * answered with "try again in a few seconds" (DATABASE_UNAVAILABLE_MESSAGE). Each call gets its own report
 * (progress and log messages to the caller, report.ts), ended when the call has its answer.
 *
 * A call whose caller goes away (the HTTP request aborted, the SDK's signal: notifications/cancelled or
 * the stream closed) stops at its next check point (stopIfCancelled: here after the rate limit, when a
 * document has been loaded, before a write is applied) and is logged and counted as `cancelled`, whatever
 * its work ended with: its answer reaches nobody. A write already applied stays applied.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../../../db/errors.ts'
import { CallCancelled, stopIfCancelled } from '../infra/cancel.ts'
import { rateLimitMessage } from '../infra/rate-limit.ts'
import { serverTimeMessage } from '../infra/server-time.ts'
import { toolResult } from './answer.ts'
import type { ToolContext, ToolOutcome } from './context.ts'
import { type CallExtra, callReport } from './report.ts'

export const GENERIC_FAILURE =
  'The call failed on the server. Try again in a moment; if it keeps failing, tell the person who runs the server.'

/**
 * The answer of a cancelled call: sent only while its POST is still open (a notifications/cancelled over
 * HTTP), where the cancelling client ignores it; a closed request or stream, or the SDK's own cancel, sends nothing.
 */
export const CANCELLED_MESSAGE = 'The call was cancelled by its caller; nothing more was done.'

/** A refusal instrument() answers itself, the handler not having answered (see `onRefusal`). */
export type WrapperRefusal =
  | { code: 'rate_limited'; retryAfterSeconds: number }
  | { code: 'unavailable' | 'internal' | 'cancelled' }

export function instrument<A>(
  ctx: ToolContext,
  handler: (args: A, call: ToolContext) => Promise<CallToolResult>,
  /** Told which refusal the wrapper answered (resources/read turns it into a JSON-RPC error code). */
  onRefusal?: (refusal: WrapperRefusal) => void,
): (args: A, extra?: CallExtra) => Promise<CallToolResult> {
  return async function instrumented(args, extra) {
    const started = performance.now()
    /** Whether the call ran (past the limits), so its time is charged to its user's share. */
    let charged = false
    const { tool } = ctx
    const report = callReport(tool, extra, ctx.logLevel)
    const userId = ctx.principal.user.id
    const signals = [ctx.signal, extra?.signal].filter((s): s is AbortSignal => s !== undefined)
    const signal = signals.length === 1 ? signals[0]! : AbortSignal.any(signals)
    const finish = (outcome: ToolOutcome, fields: Record<string, unknown> = {}) => {
      const ms = performance.now() - started
      ctx.observer?.(tool, outcome, ms / 1000)
      const line = { tool, userId, durationMs: Math.round(ms), outcome, ...fields }
      if (outcome === 'error') ctx.logger.error(line, 'mcp tool call failed')
      else if (outcome === 'unavailable') ctx.logger.warn(line, 'mcp tool call: database unavailable')
      else ctx.logger.info(line, 'mcp tool call')
    }
    try {
      if (ctx.rateLimiter) {
        const decision = await ctx.rateLimiter.take(userId)
        if (!decision.ok) {
          finish('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds })
          onRefusal?.({ code: 'rate_limited', retryAfterSeconds: decision.retryAfterSeconds })
          const message = rateLimitMessage(ctx.rateLimiter.limit, decision.retryAfterSeconds)
          return toolResult({ kind: 'error', code: 'rate_limited', message })
        }
      }
      const share = ctx.serverTime?.check(userId)
      if (share && !share.ok) {
        finish('rate_limited', { retryAfterSeconds: share.retryAfterSeconds, by: 'server_time' })
        onRefusal?.({ code: 'rate_limited', retryAfterSeconds: share.retryAfterSeconds })
        const message = serverTimeMessage(share.retryAfterSeconds)
        return toolResult({ kind: 'error', code: 'rate_limited', message })
      }
      charged = true
      stopIfCancelled(signal)
      await ctx.hold?.('call', { tool, signal })
      stopIfCancelled(signal)
      const result = await handler(args, { ...ctx, report, signal })
      const chars = result.content.reduce((n, part) => n + (part.type === 'text' ? part.text.length : 0), 0)
      if (signal.aborted) finish('cancelled', { outputChars: chars })
      else finish(result.isError ? 'refused' : 'ok', { outputChars: chars })
      return result
    } catch (error) {
      if (signal.aborted) {
        // The caller went away: the call stopped at a check point (or failed on the way). Nobody reads
        // this answer; the line says whether its write had landed, or keeps an error that is not the stop.
        finish(
          'cancelled',
          error instanceof CallCancelled ? (error.applied ? { applied: true } : {}) : { err: error },
        )
        onRefusal?.({ code: 'cancelled' })
        return toolResult({ kind: 'error', code: 'cancelled', message: CANCELLED_MESSAGE })
      }
      if (isDatabaseUnavailable(error)) {
        // Not a fault of the call: the database is away (stopped, restarting). Say when to come back.
        finish('unavailable')
        onRefusal?.({ code: 'unavailable' })
        report.log('warning', DATABASE_UNAVAILABLE_MESSAGE)
        return toolResult({ kind: 'error', code: 'unavailable', message: DATABASE_UNAVAILABLE_MESSAGE })
      }
      finish('error', { err: error })
      onRefusal?.({ code: 'internal' })
      report.log('error', GENERIC_FAILURE)
      return toolResult({ kind: 'error', code: 'internal', message: GENERIC_FAILURE })
    } finally {
      report.end()
      if (charged) ctx.serverTime?.charge(userId, performance.now() - started)
    }
  }
}
