/**
 * POST /mcp: stateless Streamable HTTP. Each request gets a fresh McpServer (tools registered for the
 * caller's scopes) and a fresh transport answering with JSON; both are closed once the answer is built.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { INSTRUCTIONS } from '../domain/instructions.ts'
import type { ToolContext, ToolModule } from '../tools/context.ts'

export const SERVER_INFO = { name: 'collab-documents', version: '0.1.0' }

/** A server with the tools this caller's token may use: read tools always, write tools with scope write. */
export function buildMcpServer(ctx: ToolContext, tools: readonly ToolModule[]): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  const canWrite = ctx.principal.scopes.includes('write')
  for (const tool of tools) if (tool.needs === 'read' || canWrite) tool.register(server, ctx)
  return server
}

export async function handleMcpRequest(request: Request, server: McpServer): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request)
  } finally {
    await server.close().catch(() => {})
  }
}
