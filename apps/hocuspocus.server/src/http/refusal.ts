/**
 * Every HTTP refusal (REST, bearer, metrics, the MCP route's non-JSON-RPC answers) has one body,
 * `{ error: code, message, field? }`, and its status follows from the code through one table. Handlers
 * and middleware `throw httpRefusal(…)` (a Hono HTTPException carrying its response), and one `onError`
 * answers it; a service's refusal becomes one with `throw refusalToHttp(result)`.
 */

import type { Refusal, RefusalCode } from '@collab/doc-schema'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'

/** The refusal codes plus those only the HTTP edge has (a cancelled request has nobody to answer). */
export type HttpRefusalCode =
  | Exclude<RefusalCode, 'cancelled'>
  | 'unauthorized'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'database_unavailable'
  | 'internal'

/** The one mapping from a refusal code to an HTTP status. */
export const HTTP_STATUS: Record<HttpRefusalCode, ContentfulStatusCode> = {
  invalid_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  database_unavailable: 503,
}

export type HttpRefusalBody = { error: HttpRefusalCode; message: string; field?: string }

/** The response for a refusal: the status from its code, the one body shape. */
export function refusalResponse(
  code: HttpRefusalCode,
  message: string,
  options: { field?: string; headers?: Record<string, string> } = {},
): Response {
  const body: HttpRefusalBody =
    options.field === undefined ? { error: code, message } : { error: code, message, field: options.field }
  return Response.json(body, { status: HTTP_STATUS[code], headers: options.headers })
}

/** A refusal to throw from a handler or middleware; Hono (or our onError) answers its response. */
export function httpRefusal(
  code: HttpRefusalCode,
  message: string,
  options: { field?: string; headers?: Record<string, string> } = {},
): HTTPException {
  return new HTTPException(HTTP_STATUS[code], {
    message,
    res: refusalResponse(code, message, options),
  })
}

/** A service's refusal, as it goes out over HTTP. */
export const refusalToHttp = (refusal: Refusal): HTTPException =>
  httpRefusal(refusal.code === 'cancelled' ? 'unavailable' : refusal.code, refusal.message, {
    field: refusal.field,
  })
