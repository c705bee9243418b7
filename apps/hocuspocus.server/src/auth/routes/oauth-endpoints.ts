/**
 * The Better Auth endpoints OAuth clients use, forwarded one by one (an allow-list: the library's other
 * endpoints, such as client administration, are not reachable): the authorization-server metadata
 * (trimmed to what is served), authorize, token, revoke, registration (bounded: registration-limits.ts)
 * and the error page.
 */
import type { Context, Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { isLoopback } from '../../loopback.ts'
import { AUTH_BASE_PATH, PEER_IP_HEADER } from '../better-auth.ts'
import { databaseRateLimitStorage } from '../shared-state.ts'
import { type Env, html, type RouteKit } from './kit.ts'
import { asErrorPage, oauthErrorPage } from './oauth-errors.ts'
import {
  MAX_REGISTRATION_BYTES,
  REGISTRATIONS_PER_SOURCE_PER_HOUR,
  registrationSourceOf,
  registrationsFull,
} from './registration-limits.ts'

/** The library's endpoints this server forwards (below the issuer); every other one answers 404. */
export const SERVED_AUTH_ENDPOINTS = [
  '/oauth2/authorize',
  '/oauth2/token',
  '/oauth2/register',
  '/oauth2/revoke',
]

export function oauthEndpointRoutes(router: Hono<Env>, kit: RouteKit): void {
  const { deps, formLimit, clientOf } = kit
  const { prisma } = deps
  const registrationCounts = databaseRateLimitStorage(prisma)

  async function forward(c: Context<Env>, pathname?: string, body?: string): Promise<Response> {
    const auth = await deps.auth()
    const url = new URL(c.req.url)
    if (pathname) url.pathname = pathname
    const headers = new Headers(c.req.raw.headers)
    headers.delete(PEER_IP_HEADER)
    const client = clientOf(c)
    if (client) headers.set(PEER_IP_HEADER, client)
    const method = c.req.method
    const payload = method === 'GET' || method === 'HEAD' ? undefined : (body ?? (await c.req.arrayBuffer()))
    if (body !== undefined) headers.delete('content-length')
    return auth.handler(new Request(url, { method, headers, body: payload }))
  }

  const issuerPath = AUTH_BASE_PATH
  /** The metadata without the endpoints this server does not serve (see servedOnly). */
  const metadata = async (c: Context<Env>, pathname?: string) =>
    servedOnly(await forward(c, pathname), `${deps.baseUrl()}${issuerPath}`)
  // RFC 8414 (both placements clients try) and OpenID discovery (both placements too).
  for (const path of [
    `/.well-known/oauth-authorization-server${issuerPath}`,
    `${issuerPath}/.well-known/oauth-authorization-server`,
    `${issuerPath}/.well-known/openid-configuration`,
  ]) {
    router.get(path, (c) => metadata(c))
  }
  router.get(`/.well-known/openid-configuration${issuerPath}`, (c) =>
    metadata(c, `${issuerPath}/.well-known/openid-configuration`),
  )

  // A person's browser is here: a refusal the library answers as JSON becomes a page (oauth-errors.ts).
  router.on(['GET', 'POST'], `${issuerPath}/oauth2/authorize`, formLimit, async (c) =>
    asErrorPage(c.req.raw, await forward(c), `${deps.baseUrl()}/mcp`),
  )
  router.post(`${issuerPath}/oauth2/token`, formLimit, (c) => forward(c))
  router.post(`${issuerPath}/oauth2/revoke`, formLimit, (c) => forward(c))
  router.post(
    `${issuerPath}/oauth2/register`,
    bodyLimit({
      maxSize: MAX_REGISTRATION_BYTES,
      onError: (c) =>
        c.json(
          {
            error: 'invalid_client_metadata',
            error_description: `registration: at most ${MAX_REGISTRATION_BYTES} bytes`,
          },
          413,
        ),
    }),
    async (c) => {
      const source = registrationSourceOf(clientOf(c))
      const own = await registrationCounts.consume(`register-source:${source}`, {
        window: 3600,
        max: REGISTRATIONS_PER_SOURCE_PER_HOUR,
      })
      if (!own.allowed)
        return c.json(
          {
            error: 'temporarily_unavailable',
            error_description: `registration: ${REGISTRATIONS_PER_SOURCE_PER_HOUR} clients registered from this address in the last hour; try again in ${Math.ceil((own.retryAfter ?? 60) / 60)} minutes`,
          },
          429,
          { 'Retry-After': String(own.retryAfter ?? 60) },
        )
      const full = await registrationsFull(prisma)
      if (full)
        return c.json({ error: 'temporarily_unavailable', error_description: full }, 429, {
          'Retry-After': '3600',
        })
      const text = await c.req.text()
      return forward(c, undefined, nativeWhenLoopback(text))
    },
  )
  router.get(`${issuerPath}/error`, (c) => {
    const error = c.req.query('error') ?? 'invalid_request'
    const description = c.req.query('error_description') ?? ''
    return html(c, oauthErrorPage(error, description, `${deps.baseUrl()}/mcp`), 400)
  })
  // Everything else of the library stays unreachable.
  router.all(`${issuerPath}/*`, (c) =>
    c.json({ error: 'not_found', message: `No route for ${c.req.method} ${c.req.path}` }, 404),
  )
}

/**
 * Authorization-server metadata lists only endpoints this server answers: the library advertises its
 * introspection, userinfo and end-session endpoints, which the allow-list above keeps unreachable (404).
 * Any `*_endpoint` or `*_uri` under the issuer that is not served is dropped, with its `*_auth_*` fields.
 */
export async function servedOnly(response: Response, issuer: string): Promise<Response> {
  if (!response.ok) return response
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as Record<string, unknown> | null
  if (!body || typeof body !== 'object' || Array.isArray(body)) return response
  for (const [key, value] of Object.entries(body)) {
    if (!/_(endpoint|uri)$/.test(key) || typeof value !== 'string' || !value.startsWith(`${issuer}/`))
      continue
    if (SERVED_AUTH_ENDPOINTS.includes(value.slice(issuer.length))) continue
    const name = key.replace(/_(endpoint|uri)$/, '')
    for (const field of Object.keys(body))
      if (field === key || field.startsWith(`${name}_endpoint_auth_`)) delete body[field]
  }
  const headers = new Headers(response.headers)
  headers.delete('content-length')
  return new Response(JSON.stringify(body), { status: response.status, headers })
}

/**
 * MCP clients register without `application_type`, which RFC 7591 defaults to "web", and web clients
 * may not use plain-http redirects; a client whose redirects are all loopback http is a native app.
 */
export function nativeWhenLoopback(body: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return body // the library answers the malformed body itself
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return body
  const metadata = parsed as Record<string, unknown>
  const uris = metadata.redirect_uris
  if (metadata.application_type !== undefined || !Array.isArray(uris) || uris.length === 0) return body
  const allLoopback = uris.every((uri) => {
    try {
      const url = new URL(String(uri))
      return url.protocol === 'http:' && isLoopback(url.hostname)
    } catch {
      return false
    }
  })
  return allLoopback ? JSON.stringify({ ...metadata, application_type: 'native' }) : body
}
