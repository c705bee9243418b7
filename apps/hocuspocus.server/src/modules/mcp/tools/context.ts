/** What every tool handler receives: the caller, the shared services, and document access. */
import type { Hocuspocus } from '@hocuspocus/server'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Principal } from '../../../auth/tokens.ts'
import type { Logger } from '../../../logger.ts'
import type { Services } from '../../../services.ts'
import type { DocumentReader } from '../infra/documents.ts'
import type { RateLimiter } from '../infra/rate-limit.ts'
import type { DocumentWriter } from '../infra/writer.ts'

export type ToolContext = {
  principal: Principal
  services: Services
  hocuspocus: Hocuspocus
  reader: DocumentReader
  writer: DocumentWriter
  logger: Logger
  /** Per-tool metrics (calls by outcome, latency); absent in tests that do not need them. */
  observer?: ToolObserver
  /** Tool calls per minute per user; absent means unlimited. */
  rateLimiter?: RateLimiter
}

export type ToolOutcome = 'ok' | 'refused' | 'error' | 'rate_limited' | 'unavailable'

/** Where instrument() reports each call (the app's Prometheus metrics). */
export type ToolObserver = (tool: string, outcome: ToolOutcome, seconds: number) => void

/** A tool module: which scope it needs, and how it registers itself on a fresh server. */
export type ToolModule = {
  name: string
  /** `read` tools are listed for every token; `write` tools only for tokens with the write scope. */
  needs: 'read' | 'write'
  register(server: McpServer, ctx: ToolContext): void
}

/** A successful answer: text only (the list tools return no structuredContent). */
export function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] }
}

/** An expected refusal: `message` starts with the field at fault and names the next step. */
export function refusal(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true }
}
