/**
 * Wraps a tool handler: one log line per call (tool, user id, duration, outcome, output size; never
 * arguments, text or tokens), and unexpected failures logged in full but answered with a generic message.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { ToolContext } from './context.ts'

export const GENERIC_FAILURE =
  'The call failed on the server. Try again in a moment; if it keeps failing, tell the person who runs the server.'

export function instrument<A>(
  ctx: ToolContext,
  tool: string,
  handler: (args: A) => Promise<CallToolResult>,
): (args: A) => Promise<CallToolResult> {
  return async function instrumented(args) {
    const started = performance.now()
    const userId = ctx.principal.user.id
    try {
      const result = await handler(args)
      const chars = result.content.reduce((n, part) => n + (part.type === 'text' ? part.text.length : 0), 0)
      ctx.logger.info(
        {
          tool,
          userId,
          durationMs: Math.round(performance.now() - started),
          outcome: result.isError ? 'refused' : 'ok',
          outputChars: chars,
        },
        'mcp tool call',
      )
      return result
    } catch (error) {
      ctx.logger.error(
        { tool, userId, durationMs: Math.round(performance.now() - started), outcome: 'error', err: error },
        'mcp tool call failed',
      )
      return { content: [{ type: 'text', text: GENERIC_FAILURE }], isError: true }
    }
  }
}
