/**
 * What a POST to /mcp must be, checked by the route itself for every POST before anything answers it
 * (Streamable HTTP, stateless): its headers, and which messages the route answers without building an
 * McpServer (mcp-route.ts). These are the route's own rules, written from the MCP specification, not a
 * guess at what the SDK's transport would accept: a POST that passes them reaches the SDK's transport or
 * the route's own answer, and one that fails them is refused here, the same way on both paths.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'

/** JSON-RPC's code for a server-defined error, which the Streamable HTTP transport uses for its refusals. */
const HEADER_REFUSED = -32000

/**
 * A refusal of the POST's headers, or undefined when they are fine:
 * - `Accept` must list both `application/json` and `text/event-stream` (the answer may be either): 406;
 * - `Content-Type` must be `application/json` (the media type, parameters aside): 415;
 * - `MCP-Protocol-Version`, when sent, must be a version the SDK speaks; not checked on a POST holding
 *   `initialize`, which negotiates the version in its body: 400.
 * `body` is the parsed body (undefined when it is not JSON: the SDK then answers the parse error).
 */
export function refuseHeaders(request: Request, body: unknown): Response | undefined {
  const accept = request.headers.get('accept') ?? ''
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    return refusal(
      406,
      'accept: must list both application/json and text/event-stream (an answer is JSON, or a stream when the request asks for progress).',
    )
  const contentType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (contentType !== 'application/json')
    return refusal(415, 'content-type: must be application/json; send the JSON-RPC message as JSON.')
  const version = request.headers.get('mcp-protocol-version')
  if (
    version !== null &&
    body !== undefined &&
    !holdsInitialize(body) &&
    !SUPPORTED_PROTOCOL_VERSIONS.includes(version)
  )
    return refusal(
      400,
      `mcp-protocol-version: ${JSON.stringify(version.slice(0, 40))} is not supported; send one of ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')} (the one initialize answered).`,
    )
  return undefined
}

function refusal(status: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code: HEADER_REFUSED, message }, id: null }, { status })
}

const holdsInitialize = (body: unknown) =>
  (Array.isArray(body) ? body : [body]).some((m) => isObject(m) && m.method === 'initialize')

/** One JSON-RPC request, exactly: the members the specification names and nothing else. */
export type SingleRequest = { id: string | number; method: string; params: unknown }

/**
 * The body as a single JSON-RPC 2.0 request (not a batch, not a notification): `jsonrpc: "2.0"`, an id
 * that is a string or an integer, a method, and no member besides jsonrpc, id, method and params.
 * Undefined for anything else, which the route leaves to the SDK (its answers, refusals included).
 */
export function singleRequest(body: unknown): SingleRequest | undefined {
  if (!isObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') return undefined
  const { id, method, params } = body
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined
  for (const key of Object.keys(body))
    if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return undefined
  return { id, method, params }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
