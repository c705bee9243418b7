/**
 * POST /mcp: stateless Streamable HTTP. Each request gets a fresh McpServer (tools registered for the
 * caller's scopes) and a fresh transport answering with JSON (or SSE when the request asks for progress);
 * both are closed once the answer is out. Two requests skip them, answered here with the SDK's bytes: a
 * single plain tools/list (from the list it built once per scope set) and a single plain tools/call
 * (the handler the server would register, run directly). The stdio session's server is built here too
 * (with subscriptions). What does not depend on the caller (the JSON Schema validator, the tools/list
 * answer per scope set) is built once per module and shared by those servers.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { safeParse } from '@modelcontextprotocol/sdk/server/zod-compat.js'
import {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type ListToolsResult,
  LoggingLevelSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { z } from 'zod'
import { registerPrompts } from '../prompts/prompts.ts'
import { INSTRUCTIONS } from '../render/instructions.ts'
import { registerDocumentResources } from '../resources/documents.ts'
import { registerSubscriptions, type StoreWatch } from '../resources/subscriptions.ts'
import type { CallerContext } from '../tools/context.ts'
import { registerTools } from '../tools/register.ts'
import { createLogLevel, RememberedLogLevels } from '../tools/report.ts'
import type { Tool } from '../tools/tool.ts'

export const SERVER_INFO = { name: 'collab-documents', version: '0.1.0' }

/** Built once per module instance, shared by every per-request server. */
export type SharedServerParts = {
  validator: AjvJsonSchemaValidator
  /** The SDK's own tools/list answer, kept per scope set the first time it is built. */
  toolLists: Map<string, ListToolsResult>
  /** The log level each token set over HTTP, for its later requests (each has its own server). */
  logLevels: RememberedLogLevels
}

export function createSharedServerParts(): SharedServerParts {
  return {
    validator: new AjvJsonSchemaValidator(),
    toolLists: new Map(),
    logLevels: new RememberedLogLevels(),
  }
}

/** logging/setLevel with whatever params it carries (checked by logLevelOf). */
const AnySetLevelRequestSchema = z.object({ method: z.literal('logging/setLevel'), params: z.unknown() })

/** The level a logging/setLevel asks for, or an Invalid params error (-32602) naming the valid ones. */
export function logLevelOf(params: unknown) {
  const level = (params as { level?: unknown } | undefined)?.level
  const parsed = LoggingLevelSchema.safeParse(level)
  if (parsed.success) return parsed.data
  const shown = level === undefined ? 'missing' : JSON.stringify(level).slice(0, 40)
  throw new McpError(
    ErrorCode.InvalidParams,
    `level: ${shown} is not a log level; use one of ${LoggingLevelSchema.options.join(', ')}`,
  )
}

/** The key of a caller's tool list in SharedServerParts.toolLists. */
export function scopeSetOf(scopes: readonly string[]): string {
  return scopes.includes('write') ? 'read,write' : 'read'
}

/** A server with the tools this caller's token may use: read tools always, write tools with scope write. */
export function buildMcpServer(
  ctx: CallerContext,
  tools: readonly Tool[],
  shared: SharedServerParts = createSharedServerParts(),
  options: {
    listOnly?: boolean
    onlyTools?: readonly string[]
    /** A session that lives on (stdio): resources/subscribe, told through these store events. */
    watch?: StoreWatch
    /** Over HTTP: logging/setLevel holds for the token's later requests (shared.logLevels). */
    rememberLogLevel?: boolean
  } = {},
): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {}, logging: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: shared.validator,
  })
  // logging/setLevel decides which log messages the calls send (tools/report.ts): for this server's life
  // (the stdio session), and over HTTP for the token's later requests too.
  const logLevel = createLogLevel(
    options.rememberLogLevel ? { levels: shared.logLevels, key: ctx.principal.tokenId } : undefined,
  )
  // The SDK's own schema would refuse a bad level with -32603 and a raw zod dump: the method is matched
  // with any params here, and the level checked below, so a bad one is -32602 naming the valid levels.
  server.server.setRequestHandler(AnySetLevelRequestSchema, (request) => {
    logLevel.set(logLevelOf(request.params))
    return {}
  })
  const caller: CallerContext = { ...ctx, logLevel }
  // Tool definitions are static for a scope set: answer tools/list from the SDK's first answer.
  const scopeSet = scopeSetOf(caller.principal.scopes)
  const known = shared.toolLists.get(scopeSet)
  // A request that only lists tools (or pings) needs no tool registered once the list is known; one
  // that only calls tools needs those tools alone (and no resources or prompts): registering the rest
  // was a third of a warm call's server-side time. A call is answered the same either way (a name this
  // caller may not use is unknown in both), and tools/list, once known, is answered from the list.
  const onlyCalls = options.onlyTools !== undefined
  const registered = onlyCalls ? tools.filter((t) => options.onlyTools?.includes(t.name)) : tools
  if (!(known && options.listOnly)) registerTools(server, caller, registered, tools)
  if (!onlyCalls) registerPrompts(server, registerDocumentResources(server, caller))
  if (options.watch) {
    const endSubscriptions = registerSubscriptions(server, caller, options.watch)
    const onclose = server.server.onclose
    server.server.onclose = () => {
      endSubscriptions()
      onclose?.()
    }
  }
  if (known) {
    server.server.setRequestHandler(ListToolsRequestSchema, () => known)
  } else {
    // Private to the SDK: when absent (another SDK version), nothing is cached and the SDK answers as usual.
    const handler = (server.server as unknown as Partial<ServerInternals>)._requestHandlers?.get('tools/list')
    if (handler) {
      server.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
        const result = (await handler(request, extra)) as ListToolsResult
        shared.toolLists.set(scopeSet, result)
        return result
      })
    }
  }
  return server
}

/** The SDK's request handler table (Protocol._requestHandlers), read once per scope set. */
type ServerInternals = {
  _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<unknown>>
}

/**
 * Runs one tool call as the caller's server would (tools/register.ts callToolDirectly); undefined, having
 * run nothing, when the SDK must answer it instead.
 */
export type DirectToolCall = (
  name: string,
  args: Record<string, unknown>,
) => Promise<CallToolResult | undefined>

/**
 * Answers one POST. `build` makes the server for it, told whether the body only lists tools, pings or
 * notifies (`listOnly`), so such a request can skip registering the tools.
 */
export async function handleMcpRequest(
  request: Request,
  build: (needs: { listOnly: boolean; onlyTools?: string[] }) => McpServer,
  /** The caller's tools/list answer once known (SharedServerParts.toolLists): a plain list is served from it. */
  knownToolList?: ListToolsResult,
  /** A single plain tool call is run with this, without a server and transport, when it accepts it. */
  callDirectly?: DirectToolCall,
  /**
   * Called with the parsed body before anything runs (http/in-flight.ts: cancellations it carries are
   * applied, its requests registered); the release it returns is called once the answer is out.
   */
  track?: (body: unknown) => () => void,
): Promise<Response> {
  // The body is already bounded (MAX_BODY_BYTES) by the route's body limit.
  const text = await request.text()
  let parsedBody: unknown
  try {
    parsedBody = JSON.parse(text)
  } catch {
    parsedBody = undefined // the transport answers the parse error itself
  }
  const release = parsedBody === undefined ? undefined : track?.(parsedBody)
  let streaming = false
  try {
    const response = await answer(request, text, parsedBody, build, knownToolList, callDirectly, release)
    streaming = response.streaming
    return response.response
  } finally {
    if (!streaming) release?.()
  }
}

/** handleMcpRequest once the body is parsed; `streaming` when the answer is a stream that calls `release` at its end. */
async function answer(
  request: Request,
  text: string,
  parsedBody: unknown,
  build: (needs: { listOnly: boolean; onlyTools?: string[] }) => McpServer,
  knownToolList: ListToolsResult | undefined,
  callDirectly: DirectToolCall | undefined,
  release: (() => void) | undefined,
): Promise<{ response: Response; streaming: boolean }> {
  const plain = (response: Response) => ({ response, streaming: false })
  const refused = parsedBody === undefined ? undefined : refuseMalformedToolCalls(parsedBody)
  if (refused) return plain(refused)
  if (knownToolList) {
    const listed = answerToolListFromCache(request, parsedBody, knownToolList)
    if (listed) return plain(listed)
  }
  if (callDirectly) {
    const answered = await answerToolCallDirectly(request, parsedBody, callDirectly)
    if (answered) return plain(answered)
  }
  const server = build({
    listOnly: parsedBody !== undefined && onlyListsTools(parsedBody),
    onlyTools: parsedBody === undefined ? undefined : onlyCallsTools(parsedBody),
  })
  // JSON unless the caller asked for progress: then a stream (SSE) carries the call's progress and log
  // messages before its answer (tools/report.ts). Either way the server is closed once the answer is out.
  const stream = parsedBody !== undefined && asksForProgress(parsedBody)
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !stream,
  })
  await server.connect(transport)
  const close = () => {
    release?.()
    return server.close().catch(() => {})
  }
  let response: Response
  try {
    const forwarded =
      parsedBody === undefined
        ? new Request(request.url, { method: request.method, headers: request.headers, body: text })
        : request
    response = await transport.handleRequest(forwarded, parsedBody === undefined ? undefined : { parsedBody })
  } catch (error) {
    await close()
    throw error
  }
  if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await close()
    return plain(response)
  }
  // The stream ends after the last answer (the transport closes it), or when the caller goes away.
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read()
      if (!done) return controller.enqueue(value)
      controller.close()
      await close()
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {})
      await close()
    },
  })
  return {
    response: new Response(body, { status: response.status, headers: response.headers }),
    streaming: true,
  }
}

/** True when a request in the body carries a progress token (`params._meta.progressToken`). */
function asksForProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body]
  return messages.some((m) => {
    if (!isObject(m) || !('id' in m) || !isObject(m.params) || !isObject(m.params._meta)) return false
    const token = m.params._meta.progressToken
    return typeof token === 'string' || typeof token === 'number'
  })
}

/**
 * The most frequent request, a single plain tools/list, answered from the known list without an MCP
 * server and transport. Only when every check the SDK's transport makes would pass (Accept,
 * Content-Type, protocol version, a well-formed JSON-RPC request): anything else, including every
 * error, goes to the SDK. The answer is the one the SDK gives (tested equal).
 */
function answerToolListFromCache(
  request: Request,
  body: unknown,
  list: ListToolsResult,
): Response | undefined {
  const plain = plainRequest(request, body, 'tools/list')
  if (!plain) return undefined
  const { params } = plain
  if (params !== undefined && !(isObject(params) && Object.keys(params).length === 0)) return undefined
  return resultResponse(list, plain.id)
}

/**
 * A single JSON-RPC request for `method` that the SDK's transport would accept as it is: its headers
 * (Accept, Content-Type, protocol version), an id it echoes, and no member besides jsonrpc, id, method
 * and params. Undefined for anything else (the SDK answers it, refusals included).
 */
function plainRequest(
  request: Request,
  body: unknown,
  method: string,
): { id: string | number; params: unknown } | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || body.method !== method) return undefined
  const { id, params } = body
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined
  if (
    Object.keys(body).some((key) => key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params')
  )
    return undefined
  return transportWouldAccept(request) ? { id, params } : undefined
}

/** The checks the SDK's transport makes of a POST's headers (Accept, Content-Type, protocol version). */
function transportWouldAccept(request: Request): boolean {
  const accept = request.headers.get('accept') ?? ''
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return false
  const contentType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (contentType !== 'application/json') return false
  const version = request.headers.get('mcp-protocol-version')
  return version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version)
}

/**
 * A single plain tool call (no progress token, no task, nothing but name and arguments) answered without
 * an McpServer and transport: building, connecting and closing those was most of a warm read's time on
 * the server. The call runs the handler the server would register (tools/register.ts), and the answer
 * is the bytes the SDK sends: the result checked against CallToolResultSchema, in a JSON-RPC response.
 * Whatever else — a batch, an unknown tool, arguments the schema refuses, headers the transport would
 * refuse — is left to the SDK (undefined), before anything runs. Tested equal to the SDK's answers.
 */
async function answerToolCallDirectly(
  request: Request,
  body: unknown,
  callDirectly: DirectToolCall,
): Promise<Response | undefined> {
  const plain = plainRequest(request, body, 'tools/call')
  if (!plain) return undefined
  const { id, params } = plain
  if (!isObject(params) || typeof params.name !== 'string') return undefined
  if (Object.keys(params).some((key) => key !== 'name' && key !== 'arguments')) return undefined
  const args = params.arguments ?? {}
  if (!isObject(args)) return undefined
  const result = await callDirectly(params.name, args)
  if (!result) return undefined
  // A kept answer's result (frozen, tools/answer.ts) was checked when it was first serialised.
  if (serialisedResults.has(result)) return resultResponse(result, id)
  // What the SDK's Server does with a tool's result before sending it (server/index.js).
  const checked = safeParse(CallToolResultSchema, result)
  if (checked.success && Object.isFrozen(result))
    return resultResponse(result, id, () => JSON.stringify(checked.data))
  const message = checked.success
    ? { result: checked.data, jsonrpc: '2.0', id }
    : {
        jsonrpc: '2.0',
        id,
        error: {
          code: ErrorCode.InvalidParams,
          message: new McpError(
            ErrorCode.InvalidParams,
            `Invalid tools/call result: ${checked.error instanceof Error ? checked.error.message : String(checked.error)}`,
          ).message,
        },
      }
  return new Response(JSON.stringify(message), { status: 200, headers: JSON_HEADERS })
}

const JSON_HEADERS = { 'Content-Type': 'application/json' }

/**
 * The UTF-8 JSON of a result that does not change while it is answered, up to its id: a tool list (built
 * once per scope set) or a kept answer's frozen result (the same object while its tool keeps it). Made
 * once: serialising and encoding a 30 KB outline took longer than the rest of the call.
 */
const serialisedResults = new WeakMap<object, Uint8Array>()

/** The bytes of JSON.stringify({ result, jsonrpc: '2.0', id }), with `result` serialised once. */
function resultResponse(
  result: object,
  id: string | number,
  json: () => string = () => JSON.stringify(result),
): Response {
  let head = serialisedResults.get(result)
  if (!head) {
    head = new TextEncoder().encode(`{"result":${json()},"jsonrpc":"2.0","id":`)
    serialisedResults.set(result, head)
  }
  const tail = new TextEncoder().encode(`${JSON.stringify(id)}}`)
  const bytes = new Uint8Array(head.length + tail.length)
  bytes.set(head)
  bytes.set(tail, head.length)
  return new Response(bytes, { status: 200, headers: JSON_HEADERS })
}

/** True when every message is tools/list, ping or a notification: nothing that needs a registered tool. */
function onlyListsTools(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body]
  return (
    messages.length > 0 &&
    messages.every(
      (m) =>
        isObject(m) &&
        typeof m.method === 'string' &&
        (m.method === 'tools/list' || m.method === 'ping' || m.method.startsWith('notifications/')),
    )
  )
}

/**
 * The names of the tools a body calls, when it holds nothing but tool calls (and pings or
 * notifications); undefined otherwise (the server then registers everything).
 */
function onlyCallsTools(body: unknown): string[] | undefined {
  const messages = Array.isArray(body) ? body : [body]
  const names: string[] = []
  for (const m of messages) {
    if (!isObject(m) || typeof m.method !== 'string') return undefined
    if (m.method === 'ping' || m.method.startsWith('notifications/')) continue
    if (m.method !== 'tools/call' || !isObject(m.params) || typeof m.params.name !== 'string')
      return undefined
    names.push(m.params.name)
  }
  return names.length > 0 ? names : undefined
}

const INVALID_PARAMS = -32602

/**
 * A `tools/call` whose `params` or `arguments` is not an object is the caller's mistake: -32602 (invalid
 * params) with a message that starts with the field at fault and names the next step (the SDK would
 * answer -32603 "Internal error" with a raw schema dump).
 */
export function refuseMalformedToolCalls(body: unknown): Response | undefined {
  const messages = Array.isArray(body) ? body : [body]
  const problems: Array<{ id: unknown; message: string }> = []
  for (const message of messages) {
    if (!isObject(message) || message.method !== 'tools/call' || !('id' in message)) continue
    const params = message.params
    let problem: string | undefined
    if (!isObject(params)) {
      problem = `params: must be an object holding the tool's name and arguments, {"name": …, "arguments": {…}}.`
    } else if (typeof params.name !== 'string') {
      problem = `name: must be the tool's name as a string. Call tools/list for the names.`
    } else if (params.arguments !== undefined && !isObject(params.arguments)) {
      problem = `arguments: must be an object of named fields (got ${kindOf(params.arguments)}). Call tools/list for the fields of each tool.`
    }
    if (problem) problems.push({ id: message.id, message: problem })
  }
  if (problems.length === 0) return undefined
  const answers = problems.map(({ id, message }) => ({
    jsonrpc: '2.0',
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    error: { code: INVALID_PARAMS, message },
  }))
  if (Array.isArray(body) && body.length > 1) {
    // One malformed call refuses the batch: answering only part of it would leave requests unanswered.
    return Response.json(
      { jsonrpc: '2.0', id: null, error: { code: INVALID_PARAMS, message: answers[0]!.error.message } },
      { status: 400 },
    )
  }
  return Response.json(Array.isArray(body) ? answers : answers[0], { status: 200 })
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}
