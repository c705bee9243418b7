/**
 * The tools/list answer per scope set, learnt once from the SDK itself through its public API: an
 * McpServer with the scope set's tools registered is asked tools/list over an in-memory transport, and
 * its answer (and that answer's JSON) is kept. A token's tool list depends on its scopes only, and the
 * tools never change while the process runs, so every later tools/list of that scope set is this answer.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { JSONRPCMessage, ListToolsResult } from '@modelcontextprotocol/sdk/types.js'
import type { CallerContext } from '../tools/context.ts'
import { registerTools } from '../tools/register.ts'
import type { Tool } from '../tools/tool.ts'

/** A scope set's tools/list answer and its UTF-8 JSON (made once). */
export type KnownToolList = { readonly result: ListToolsResult; readonly json: Uint8Array }

/**
 * The key of a caller's tool list: read tools always, the others with scope write, the proposing edits
 * with scope suggest (tools/tool.ts mayUse).
 */
export function scopeSetOf(scopes: readonly string[]): string {
  return scopes.includes('write') ? 'read,write' : scopes.includes('suggest') ? 'read,suggest' : 'read'
}

export class ToolLists {
  private readonly known = new Map<string, KnownToolList>()
  private readonly learning = new Set<string>()

  /** The scope set's answer once learnt; undefined before (the SDK then answers, and learn() is due). */
  get(scopeSet: string): KnownToolList | undefined {
    return this.known.get(scopeSet)
  }

  /**
   * Starts learning the answer of `caller`'s scope set unless it is known or being learnt. Runs beside the
   * request that asked (which the SDK answers as usual); a failure leaves it unknown, to be tried again.
   */
  learn(caller: CallerContext, tools: readonly Tool[]): void {
    const scopeSet = scopeSetOf(caller.principal.scopes)
    if (this.known.has(scopeSet) || this.learning.has(scopeSet)) return
    this.learning.add(scopeSet)
    listedBySdk(caller, tools)
      .then((result) =>
        this.known.set(scopeSet, { result, json: new TextEncoder().encode(JSON.stringify(result)) }),
      )
      .catch(() => {})
      .finally(() => this.learning.delete(scopeSet))
  }
}

/**
 * The SDK's own tools/list answer for the tools `caller` may use: its McpServer, the same registration
 * loop as every server (tools/register.ts), one request over an in-memory transport. No tool is run.
 */
async function listedBySdk(caller: CallerContext, tools: readonly Tool[]): Promise<ListToolsResult> {
  const server = new McpServer({ name: 'tool-list', version: '0' }, { capabilities: { tools: {} } })
  registerTools(server, caller, tools)
  const [ours, its] = InMemoryTransport.createLinkedPair()
  const answered = new Promise<JSONRPCMessage>((resolve) => {
    ours.onmessage = resolve
  })
  await server.connect(its)
  try {
    await ours.start()
    await ours.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })
    const answer = await answered
    if (!('result' in answer)) throw new Error('tools/list: the SDK answered no result')
    return answer.result as ListToolsResult
  } finally {
    await server.close()
  }
}
