/**
 * The one registration loop: each tool the caller's token may use, with its annotations, instrumented.
 * The same handler also answers a plain tool call without an McpServer (callToolDirectly).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { callerWords, resultJson, toolResult } from './answer.ts'
import type { CallerContext, ToolContext } from './context.ts'
import { instrument } from './instrument.ts'
import type { CallExtra } from './report.ts'
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

/** What the SDK calls for one tool: the tool's handler as `caller`, instrumented, answering in caller words. */
function handlerFor(
  caller: CallerContext,
  tool: Tool,
  words: (text: string) => string,
): (args: Record<string, unknown>, extra?: CallExtra) => Promise<CallToolResult> {
  const ctx: ToolContext = { ...caller, tool: tool.name }
  return instrument(ctx, async (args, call) => toolResult(await tool.handler(args as never, call), words))
}

/**
 * Registers on `server` each of `tools` the caller may use. `wordsFrom` is the whole tool list the
 * refusal words are made from (kept per list: a per-request subset would rebuild them every time).
 */
export function registerTools(
  server: McpServer,
  caller: CallerContext,
  tools: readonly Tool[],
  wordsFrom: readonly Tool[] = tools,
): void {
  const words = refusalWords(wordsFrom)
  for (const tool of tools) {
    if (!mayUse(caller.principal.scopes, tool)) continue
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: annotationsOf(tool),
      },
      handlerFor(caller, tool, words),
    )
  }
}

/** Each tool's arguments as an object schema: what McpServer makes of a raw input shape (made once per tool). */
const argumentSchemas = new WeakMap<Tool, z.ZodType<Record<string, unknown>>>()

function argumentSchemaOf(tool: Tool): z.ZodType<Record<string, unknown>> {
  let schema = argumentSchemas.get(tool)
  if (!schema) {
    schema = z.object(tool.inputSchema)
    argumentSchemas.set(tool, schema)
  }
  return schema
}

/**
 * Runs a call of `name` as the McpServer that registerTools fills would, without building one, and gives
 * the UTF-8 JSON of its result (answer.ts resultJson). The same arguments schema (the tool's input shape as
 * an object), the same instrumented handler (rate limit, log line, metrics). Undefined, having run
 * nothing, when the SDK's answer would be a refusal: a tool this caller cannot use (its server does not
 * know it) or arguments the schema refuses; the SDK then words it. No progress or log messages reach the
 * caller, as none do over a JSON answer (http/mcp-route.ts).
 */
export async function callToolDirectly(
  caller: CallerContext,
  tools: readonly Tool[],
  name: string,
  args: Record<string, unknown>,
): Promise<Uint8Array | undefined> {
  const tool = tools.find((t) => t.name === name)
  if (!tool || !mayUse(caller.principal.scopes, tool)) return undefined
  const parsed = await argumentSchemaOf(tool).safeParseAsync(args)
  if (!parsed.success) return undefined
  return resultJson(await handlerFor(caller, tool, refusalWords(tools))(parsed.data))
}
