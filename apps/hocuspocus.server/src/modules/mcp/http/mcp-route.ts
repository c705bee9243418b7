/**
 * POST /mcp: stateless Streamable HTTP, on the SDK's public API. Every POST meets the route's own rules
 * first (post-contract.ts: its headers). Then two kinds of request are answered by the route itself, with
 * the bytes the SDK would send (tested equal): a single plain tools/list, from the scope set's list learnt
 * once from the SDK (tool-lists.ts), and a single plain tools/call, run by the tool layer
 * (tools/register.ts callToolDirectly, whose result JSON answer.ts gives). Every other POST gets a fresh
 * McpServer (tools registered for the caller's scopes) and a fresh SDK transport answering with JSON (or
 * SSE when the request asks for progress), both closed once the answer is out. The stdio session's server
 * is built here too (with subscriptions). What does not depend on the caller (the JSON Schema validator,
 * the tool list per scope set, the log levels tokens set) is built once per module and shared.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import {
  ErrorCode,
  ListToolsRequestSchema,
  LoggingLevelSchema,
  McpError,
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
import { isObject, refuseHeaders, singleRequest } from './post-contract.ts'
import { type KnownToolList, scopeSetOf, ToolLists } from './tool-lists.ts'

export { scopeSetOf } from './tool-lists.ts'

export const SERVER_INFO = { name: 'collab-documents', version: '0.1.0' }

/** Built once per module instance, shared by every per-request server. */
export type SharedServerParts = {
  validator: AjvJsonSchemaValidator
  /** The SDK's own tools/list answer per scope set, learnt once (tool-lists.ts). */
  toolLists: ToolLists
  /** The log level each token set over HTTP, for its later requests (each has its own server). */
  logLevels: RememberedLogLevels
}

export function createSharedServerParts(): SharedServerParts {
  return {
    validator: new AjvJsonSchemaValidator(),
    toolLists: new ToolLists(),
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
    capabilities: { tools: { listChanged: false }, logging: {} },
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
  // Tool definitions are static for a scope set: once its list is learnt, tools/list is answered from it.
  const known = shared.toolLists.get(scopeSetOf(caller.principal.scopes))
  if (!known) shared.toolLists.learn(caller, tools)
  // A request that only lists tools (or pings) needs no tool registered once the list is known; one
  // that only calls tools needs those tools alone (and no resources or prompts): registering the rest
  // was a third of a warm call's server-side time. A call is answered the same either way (a name this
  // caller may not use is unknown in both), and tools/list, once known, is answered from the list.
  const onlyCalls = options.onlyTools !== undefined
  const registered = onlyCalls ? tools.filter((t) => options.onlyTools?.includes(t.name)) : tools
  if (!(known && options.listOnly)) registerTools(server, caller, registered, tools)
  if (!onlyCalls) registerPrompts(server, registerDocumentResources(server, caller))
  // Registering tools and prompts declares listChanged: true, but no list_changed notice is ever sent:
  // a token's tools and prompts are registered before its server connects and never change, over HTTP
  // (where a stateless POST could not carry one anyway) and over stdio alike. Say so.
  server.server.registerCapabilities({
    tools: { listChanged: false },
    ...(onlyCalls ? {} : { prompts: { listChanged: false } }),
  })
  if (options.watch) {
    const endSubscriptions = registerSubscriptions(server, caller, options.watch)
    const onclose = server.server.onclose
    server.server.onclose = () => {
      endSubscriptions()
      onclose?.()
    }
  }
  if (known) server.server.setRequestHandler(ListToolsRequestSchema, () => known.result)
  return server
}

/**
 * Runs one tool call as the caller's server would (tools/register.ts callToolDirectly) and gives its
 * result's JSON; undefined, having run nothing, when the SDK must answer it instead.
 */
export type DirectToolCall = (name: string, args: Record<string, unknown>) => Promise<Uint8Array | undefined>

/**
 * Answers one POST. `build` makes the server for it, told whether the body only lists tools, pings or
 * notifies (`listOnly`), so such a request can skip registering the tools.
 */
export async function handleMcpRequest(
  request: Request,
  build: (needs: { listOnly: boolean; onlyTools?: string[] }) => McpServer,
  /** The caller's tools/list answer once known (SharedServerParts.toolLists): a plain list is served from it. */
  knownToolList?: KnownToolList,
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
  const refused = refuseHeaders(request, parsedBody)
  if (refused) return refused
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
  knownToolList: KnownToolList | undefined,
  callDirectly: DirectToolCall | undefined,
  release: (() => void) | undefined,
): Promise<{ response: Response; streaming: boolean }> {
  const plain = (response: Response) => ({ response, streaming: false })
  const refused = parsedBody === undefined ? undefined : refuseMalformedToolCalls(parsedBody)
  if (refused) return plain(refused)
  const single = singleRequest(parsedBody)
  if (single && knownToolList) {
    const listed = answerToolList(single, knownToolList)
    if (listed) return plain(listed)
  }
  if (single && callDirectly) {
    const answered = await answerToolCall(single, callDirectly)
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
 * The most frequent request, a single tools/list without params (or with empty ones), answered from the
 * scope set's known list: the JSON-RPC answer the SDK sends, its result serialised once.
 */
function answerToolList(
  request: { id: string | number; method: string; params: unknown },
  list: KnownToolList,
) {
  if (request.method !== 'tools/list') return undefined
  const { params } = request
  if (params !== undefined && !(isObject(params) && Object.keys(params).length === 0)) return undefined
  return resultResponse(list.json, request.id)
}

/**
 * A single tool call with nothing but a name and arguments (no progress token, no task) answered without
 * an McpServer and transport: building, connecting and closing those was most of a warm read's time on
 * the server. The tool layer runs the handler the server would register and gives the result's JSON
 * (tools/register.ts callToolDirectly); the answer is the JSON-RPC response the SDK sends. A call the
 * tool layer declines (an unknown tool, arguments the schema refuses) is left to the SDK, which words
 * the refusal; nothing has run then. Tested equal to the SDK's answers.
 */
async function answerToolCall(
  request: { id: string | number; method: string; params: unknown },
  callDirectly: DirectToolCall,
): Promise<Response | undefined> {
  const { id, method, params } = request
  if (method !== 'tools/call' || !isObject(params) || typeof params.name !== 'string') return undefined
  if (Object.keys(params).some((key) => key !== 'name' && key !== 'arguments')) return undefined
  const args = params.arguments ?? {}
  if (!isObject(args)) return undefined
  const json = await callDirectly(params.name, args)
  return json === undefined ? undefined : resultResponse(json, id)
}

const RESULT_HEAD = new TextEncoder().encode('{"result":')

/** The JSON-RPC answer `{ result, jsonrpc: '2.0', id }` as the SDK's transport writes it, from the result's JSON. */
function resultResponse(resultJson: Uint8Array, id: string | number): Response {
  const tail = new TextEncoder().encode(`,"jsonrpc":"2.0","id":${JSON.stringify(id)}}`)
  const bytes = new Uint8Array(RESULT_HEAD.length + resultJson.length + tail.length)
  bytes.set(RESULT_HEAD)
  bytes.set(resultJson, RESULT_HEAD.length)
  bytes.set(tail, RESULT_HEAD.length + resultJson.length)
  return new Response(bytes, { status: 200, headers: { 'Content-Type': 'application/json' } })
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

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}
