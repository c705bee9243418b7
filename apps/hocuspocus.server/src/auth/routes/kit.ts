/**
 * What every group of sign-in and OAuth routes shares: their dependencies, the request's environment,
 * and the helpers that call Better Auth as the browser behind a request (`auth.handler` with a real
 * Request, its cookies passed back), answer with one of our pages, and read a form.
 */
import type { Context } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { PrismaClient } from '../../db/generated/client.ts'
import type { Logger } from '../../logger.ts'
import type { AccountsService } from '../accounts.ts'
import { AUTH_BASE_PATH, type BetterAuth, PEER_IP_HEADER } from '../better-auth.ts'
import { messagePage, PAGE_HEADERS } from '../pages.ts'
import { clientAddress } from './client-address.ts'

/** A form post is a few short fields; anything larger is refused before it is parsed. */
export const MAX_FORM_BYTES = 16 * 1024

/** What the HTTP server passes with each request (server.ts): the peer's address, when known. */
export type Env = { Bindings: { ip?: string } }

export type AuthRoutesDeps = {
  prisma: PrismaClient
  auth: () => Promise<BetterAuth>
  accounts: AccountsService
  /** The public origin (PUBLIC_URL or the listening address). */
  baseUrl: () => string
  /** False when the origin cannot host sign-in (plain http off loopback): every route answers 503. */
  enabled: () => boolean
  /** TRUSTED_PROXIES: whose X-Forwarded-For names the client (see clientAddress). */
  trustedProxies: readonly string[]
  logger: Logger
  /** The browser's session as a principal (session-principal.ts), to tell who signs out. */
  sessionPrincipal?: (headers: Headers) => Promise<{ tokenId: string } | null>
  /** Told the session's principal id once it signed out (open sockets of it close). */
  signedOut?: (tokenId: string) => void
}

/** Only same-site paths are followed after sign-in: never another host (no open redirect). */
export function safeNext(raw: unknown): string {
  return typeof raw === 'string' && /^\/(?![/\\])[A-Za-z0-9\-._~/?=&%]*$/.test(raw) ? raw : '/'
}

/** The signed part of an authorization request that Better Auth sent to the sign-in or consent page. */
export function signedQueryOf(search: URLSearchParams): string {
  if (!search.has('sig')) return ''
  const names = new Set(search.getAll('ba_param'))
  if (names.size === 0) return ''
  const out = new URLSearchParams()
  for (const [key, value] of search)
    if (key === 'sig' || key === 'ba_param' || names.has(key)) out.append(key, value)
  return out.toString()
}

export function html(c: Context, body: string, status = 200): Response {
  return c.body(body, status as 200, PAGE_HEADERS)
}

export type RouteKit = ReturnType<typeof createRouteKit>

export function createRouteKit(deps: AuthRoutesDeps) {
  const { prisma } = deps
  const secure = () => deps.baseUrl().startsWith('https://')
  const origin = () => new URL(deps.baseUrl()).origin
  const formLimit = bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: (c) => html(c, messagePage('Too large', 'This form is larger than any of ours.'), 413),
  })

  const clientOf = (c: Context<Env>) =>
    clientAddress(c.env?.ip, c.req.header('x-forwarded-for'), deps.trustedProxies)

  /** The headers Better Auth sees: the browser's cookies and agent, our origin, the client's address. */
  function authHeaders(c: Context<Env>, extra: Record<string, string> = {}): Headers {
    const headers = new Headers(extra)
    const cookie = c.req.header('cookie')
    if (cookie) headers.set('cookie', cookie)
    const agent = c.req.header('user-agent')
    if (agent) headers.set('user-agent', agent)
    headers.set('origin', origin())
    const client = clientOf(c)
    if (client) headers.set(PEER_IP_HEADER, client)
    return headers
  }

  /** Calls one Better Auth endpoint as the browser behind `c`. */
  async function callAuth(c: Context<Env>, path: string, body?: unknown): Promise<Response> {
    const auth = await deps.auth()
    const request = new Request(`${deps.baseUrl()}${AUTH_BASE_PATH}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: authHeaders(
        c,
        body === undefined
          ? { accept: 'application/json' }
          : { 'content-type': 'application/json', accept: 'application/json' },
      ),
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return auth.handler(request)
  }

  /** A redirect that carries Better Auth's Set-Cookie headers. */
  function redirectWith(from: Response | null, location: string): Response {
    const headers = new Headers({ Location: location, 'Cache-Control': 'no-store' })
    for (const cookie of from?.headers.getSetCookie() ?? []) headers.append('Set-Cookie', cookie)
    return new Response(null, { status: 303, headers })
  }

  /** Where Better Auth sends the browser next: `{ url }`, `{ redirect_uri }` or a Location header. */
  async function nextLocation(response: Response): Promise<string | null> {
    const location = response.headers.get('location')
    if (location) return location
    const body = (await response
      .clone()
      .json()
      .catch(() => null)) as { url?: unknown; redirect_uri?: unknown } | null
    if (typeof body?.url === 'string') return body.url
    if (typeof body?.redirect_uri === 'string') return body.redirect_uri
    return null
  }

  async function signedInUser(c: Context<Env>): Promise<{ id: string; handle: string } | null> {
    const response = await callAuth(c, '/get-session')
    if (!response.ok) return null
    const data = (await response.json().catch(() => null)) as { user?: { id?: string } } | null
    const id = data?.user?.id
    return id ? prisma.user.findUnique({ where: { id }, select: { id: true, handle: true } }) : null
  }

  const refusedForm = (c: Context) =>
    html(
      c,
      messagePage(
        'Form expired',
        'This form was not sent from this site, or it expired. Go back, reload the page and try again.',
      ),
      403,
    )

  return {
    deps,
    secure,
    origin,
    formLimit,
    clientOf,
    callAuth,
    redirectWith,
    nextLocation,
    signedInUser,
    refusedForm,
  }
}
