/**
 * The tools/list answer of a caller with scopes read and write, as the SDK builds it from the registry:
 * the same registration loop (tools/register.ts) on an McpServer, asked over an in-memory transport. The
 * reference script writes it to docs/mcp/tools-list.json; a test compares a live server's answer with it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js'
import type { CallerContext } from '../tools/context.ts'
import { TOOLS } from '../tools/index.ts'
import { registerTools } from '../tools/register.ts'

/** Where the checked-in answer lives, from the repository's root. */
export const TOOLS_LIST_PATH = 'docs/mcp/tools-list.json'

/**
 * Listing calls no handler, so the caller needs only its scopes: no tool is ever run here (a call would
 * fail on the missing services, loudly).
 */
const LISTING_CALLER = {
  principal: { scopes: ['read', 'write'], user: { id: 'tools-list' } },
} as unknown as CallerContext

export async function listedTools(): Promise<ListedTool[]> {
  const server = new McpServer({ name: 'tools-list', version: '0' }, { capabilities: { tools: {} } })
  registerTools(server, LISTING_CALLER, TOOLS)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'tools-list', version: '0' })
  await client.connect(clientSide)
  try {
    return (await client.listTools()).tools
  } finally {
    await client.close()
    await server.close()
  }
}

/** The file's text: the answer's `tools`, two-space JSON, one newline at the end. */
export function toolsListFile(tools: readonly ListedTool[]): string {
  return `${JSON.stringify({ tools }, null, 2)}\n`
}
