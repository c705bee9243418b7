/** The one registration loop: each tool the caller's token may use, with its annotations, instrumented. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { callerWords, toolResult } from './answer.ts'
import type { CallerContext, ToolContext } from './context.ts'
import { instrument } from './instrument.ts'
import { annotationsOf, mayUse, type Tool } from './tool.ts'

/** Per tool list: the rewrite of document-model names into the names a caller sends (built once). */
const wordsOf = new WeakMap<readonly Tool[], (text: string) => string>()

function refusalWords(tools: readonly Tool[]): (text: string) => string {
  let words = wordsOf.get(tools)
  if (!words) {
    words = callerWords(tools.flatMap((tool) => [tool.name, ...Object.keys(tool.inputSchema)]))
    wordsOf.set(tools, words)
  }
  return words
}

export function registerTools(server: McpServer, caller: CallerContext, tools: readonly Tool[]): void {
  const words = refusalWords(tools)
  for (const tool of tools) {
    if (!mayUse(caller.principal.scopes, tool.kind)) continue
    const ctx: ToolContext = { ...caller, tool: tool.name }
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: annotationsOf(tool),
      },
      instrument(ctx, async (args, call) => toolResult(await tool.handler(args, call), words)),
    )
  }
}
