/**
 * The HTTP side of sign-in and OAuth: our pages (sign-in, consent, connected apps, invite, sign-out)
 * and the Better Auth endpoints clients use, forwarded one by one (an allow-list: the library's
 * other endpoints, such as client administration, are not reachable). Pages call Better Auth through
 * `auth.handler` with a real Request, as a browser would, and pass its cookies back.
 */
import type { Context } from 'hono'
import { Hono } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import type { PrismaClient } from '../db/generated/client.ts'
import type { HttpBindings } from '../http/app.ts'
import type { Logger } from '../logger.ts'
import { isLoopback } from '../modules/mcp/http/origin-host.ts'
import { accountSignInLock } from './account-lock.ts'
import type { AccountsService } from './accounts.ts'
import { INVITE_GONE, redirectHostsOf } from './accounts.ts'
import { AUTH_BASE_PATH, type BetterAuth, MCP_SCOPES, PEER_IP_HEADER } from './better-auth.ts'
import { CSRF_FIELD, csrfToken, csrfValid } from './csrf.ts'
import {
  appsPage,
  consentPage,
  invitePage,
  messagePage,
  PAGE_HEADERS,
  passwordPage,
  signInPage,
} from './pages.ts'
import { passwordProblem } from './passwords.ts'
import { databaseRateLimitStorage } from './shared-state.ts'

/** A form post is a few short fields; anything larger is refused before it is parsed. */
export const MAX_FORM_BYTES = 16 * 1024
/** A client registration (RFC 7591) is a small JSON document. */
export const MAX_REGISTRATION_BYTES = 16 * 1024
/**
 * Registrations accepted per hour from one source (an IPv4 address, or an IPv6 /64, which one host
 * usually has whole), beside Better Auth's REGISTRATIONS_PER_MINUTE per address. A client registers once
 * per install: 20 covers a busy office behind one address.
 */
export const REGISTRATIONS_PER_SOURCE_PER_HOUR = 20
/**
 * Registrations accepted per hour from everyone together: a ceiling on table growth, far above what the
 * per-source limit lets one source reach, so one source cannot close registration for everyone (it
 * would need MAX_REGISTRATIONS_PER_HOUR / REGISTRATIONS_PER_SOURCE_PER_HOUR = 50 sources).
 */
export const MAX_REGISTRATIONS_PER_HOUR = 1_000
/** Registered clients kept at most; a client nobody approved is deleted after a day (see registrationsFull). */
export const MAX_OAUTH_CLIENTS = 25_000
const UNUSED_CLIENT_TTL_MS = 24 * 60 * 60 * 1000

type Env = { Bindings: HttpBindings }

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

/**
 * The client's address for the per-address limits: the peer, or, when the peer is a trusted proxy
 * (`loopback` or a listed address), the rightmost X-Forwarded-For entry that is not a trusted proxy.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: readonly string[],
): string | undefined {
  const isTrusted = (ip: string) =>
    !trusted.includes('none') &&
    ((trusted.includes('loopback') && isLoopback(ip.replace(/^::ffff:/, ''))) ||
      trusted.includes(ip.toLowerCase()))
  if (!peer || !forwardedFor || !isTrusted(peer)) return peer
  const hops = forwardedFor.split(',').map((hop) => hop.trim())
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (!/^[0-9a-fA-F:.]{2,45}$/.test(hop)) return peer // not an address: believe nothing of it
    if (!isTrusted(hop)) return hop
  }
  return peer
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

function html(c: Context, body: string, status = 200): Response {
  return c.body(body, status as 200, PAGE_HEADERS)
}

export function authRoutes(deps: AuthRoutesDeps): Hono<Env> {
  const { prisma, accounts, logger } = deps
  const router = new Hono<Env>()
  const accountLock = accountSignInLock(prisma)
  const registrationCounts = databaseRateLimitStorage(prisma)
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

  for (const path of [
    '/sign-in',
    '/sign-out',
    '/consent',
    '/apps',
    '/apps/*',
    '/account/*',
    '/invite/*',
    `${AUTH_BASE_PATH}/*`,
    '/.well-known/oauth-authorization-server/*',
    '/.well-known/openid-configuration/*',
  ]) {
    router.use(path, async (c, next) => {
      if (deps.enabled()) return next()
      return html(
        c,
        messagePage(
          'Sign-in is off',
          'Sign-in needs the server to be reached over https: its operator sets PUBLIC_URL to its https address.',
        ),
        503,
      )
    })
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

  // ---- Sign-in ------------------------------------------------------------------------------------

  router.get('/sign-in', (c) => {
    const search = new URL(c.req.url).searchParams
    return html(
      c,
      signInPage({
        csrf: csrfToken(c, secure()),
        oauthQuery: signedQueryOf(search),
        next: safeNext(search.get('next')),
      }),
    )
  })

  router.post('/sign-in', formLimit, async (c) => {
    const form = await c.req.parseBody()
    const csrf = csrfToken(c, secure())
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const handle = typeof form.handle === 'string' ? form.handle.trim().toLowerCase() : ''
    const password = typeof form.password === 'string' ? form.password : ''
    const oauthQuery = typeof form.oauth_query === 'string' ? form.oauth_query : ''
    const next = safeNext(form.next)
    const again = (error: string, status: number) =>
      html(c, signInPage({ csrf, oauthQuery, next, error, handle }), status)
    if (!handle || !password) return again('handle and password: both are required.', 400)
    // Counted per account before the password is checked, from whatever address (account-lock.ts).
    const attempt = await accountLock.attempt(handle)
    if (!attempt.allowed) {
      const until = new Date(Date.now() + attempt.retryAfter * 1000).toISOString().slice(11, 16)
      const minutes = Math.ceil(attempt.retryAfter / 60)
      const page = again(
        `Too many sign-in attempts for this account: sign-in to it is paused until ${until} UTC (in ${minutes} minute${minutes === 1 ? '' : 's'}), even with the right password. Try again then; if these attempts were not yours, someone is guessing your password.`,
        429,
      )
      page.headers.set('Retry-After', String(attempt.retryAfter))
      return page
    }
    const response = await callAuth(c, '/sign-in/username', {
      username: handle,
      password,
      ...(oauthQuery ? { oauth_query: oauthQuery } : {}),
    })
    if (response.status === 429) {
      await accountLock.notTried(handle)
      return again('Too many attempts from here: wait a minute, then try again.', 429)
    }
    if (response.ok) await accountLock.succeeded(handle)
    if (response.status === 400 && oauthQuery)
      return again('This sign-in request expired or was altered: start again from your app.', 400)
    if (!response.ok) return again('The handle or the password is wrong.', 401)
    const location = oauthQuery ? await nextLocation(response) : null
    return redirectWith(response, location ?? next)
  })

  router.post('/sign-out', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const session = await deps.sessionPrincipal?.(c.req.raw.headers)
    const response = await callAuth(c, '/sign-out', {})
    // The web editor's open sockets of this session close now, not at the next periodic re-check.
    if (session) deps.signedOut?.(session.tokenId)
    return redirectWith(response, '/sign-in')
  })

  // ---- Consent ------------------------------------------------------------------------------------

  router.get('/consent', async (c) => {
    const url = new URL(c.req.url)
    const user = await signedInUser(c)
    if (!user) return c.redirect(`/sign-in${url.search}`, 303)
    const search = url.searchParams
    const clientId = search.get('client_id') ?? ''
    const client = clientId
      ? await prisma.oauthClient.findUnique({
          where: { clientId },
          select: { name: true, redirectUris: true, disabled: true },
        })
      : null
    const oauthQuery = signedQueryOf(search)
    if (!client || client.disabled || !oauthQuery)
      return html(
        c,
        messagePage('Unknown request', 'This authorization request is not valid: start again from your app.'),
        400,
      )
    const asked = new Set((search.get('scope') ?? '').split(' '))
    const redirectUri = search.get('redirect_uri')
    const redirectHost =
      redirectUri && client.redirectUris.includes(redirectUri)
        ? redirectHostsOf([redirectUri])[0]!
        : redirectHostsOf(client.redirectUris).join(', ')
    return html(
      c,
      consentPage({
        csrf: csrfToken(c, secure()),
        oauthQuery,
        clientName: client.name || 'An unnamed app',
        clientId,
        redirectHost,
        handle: user.handle,
        askedWrite: asked.has('write'),
      }),
    )
  })

  router.post('/consent', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const oauthQuery = typeof form.oauth_query === 'string' ? form.oauth_query : ''
    const asked = new Set((new URLSearchParams(oauthQuery).get('scope') ?? '').split(' ').filter(Boolean))
    const chosen = new Set(typeof form.access === 'string' ? form.access.split(' ') : [])
    // The person may narrow what the app asked for, never widen it; read comes with any approval.
    const scopes = [...asked].filter(
      (s) => !(MCP_SCOPES as readonly string[]).includes(s) || s === 'read' || chosen.has(s),
    )
    const accept = form.decision === 'allow'
    const response = await callAuth(c, '/oauth2/consent', {
      accept,
      ...(accept ? { scope: scopes.join(' ') } : {}),
      oauth_query: oauthQuery,
    })
    const location = response.ok ? await nextLocation(response) : null
    if (!location) {
      logger.info({ status: response.status }, 'consent refused by the authorization server')
      return html(
        c,
        messagePage(
          'Request expired',
          'This authorization request expired or is not valid: start again from your app.',
        ),
        400,
      )
    }
    return redirectWith(response, location)
  })

  // ---- Connected apps -----------------------------------------------------------------------------

  router.get('/apps', async (c) => {
    const user = await signedInUser(c)
    if (!user) return c.redirect('/sign-in?next=/apps', 303)
    return html(
      c,
      appsPage({ csrf: csrfToken(c, secure()), handle: user.handle, apps: await accounts.apps(user.id) }),
    )
  })

  router.post('/apps/revoke', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const user = await signedInUser(c)
    if (!user) return c.redirect('/sign-in?next=/apps', 303)
    const clientId = typeof form.client_id === 'string' ? form.client_id : ''
    const result = await accounts.revokeApp(user.id, clientId)
    const notice =
      result.kind === 'ok'
        ? 'The app was disconnected: its next request is refused.'
        : 'That app was not connected.'
    return html(
      c,
      appsPage({
        csrf: csrfToken(c, secure()),
        handle: user.handle,
        apps: await accounts.apps(user.id),
        notice,
      }),
    )
  })

  // ---- Password change ----------------------------------------------------------------------------

  router.get('/account/password', async (c) => {
    const user = await signedInUser(c)
    if (!user) return c.redirect('/sign-in?next=/account/password', 303)
    return html(c, passwordPage({ csrf: csrfToken(c, secure()), handle: user.handle }))
  })

  router.post('/account/password', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const user = await signedInUser(c)
    if (!user) return c.redirect('/sign-in?next=/account/password', 303)
    const again = (error: string, status: number) =>
      html(c, passwordPage({ csrf: csrfToken(c, secure()), handle: user.handle, error }), status)
    const password = typeof form.password === 'string' ? form.password : ''
    if (password !== form.confirm)
      return again('confirm: the two new passwords differ; type the same one twice.', 400)
    const problem = passwordProblem(password)
    if (problem) return again(`${problem}; choose another.`, 400)
    const response = await callAuth(c, '/change-password', {
      currentPassword: typeof form.current === 'string' ? form.current : '',
      newPassword: password,
      revokeOtherSessions: true,
    })
    if (response.status === 429)
      return again('Too many attempts from here: wait a minute, then try again.', 429)
    if (!response.ok) return again('current: the current password is wrong.', 400)
    // A link sent before the change must not set the password back.
    await accounts.endInvites(user.id)
    return redirectWith(response, '/apps')
  })

  // ---- Invites ------------------------------------------------------------------------------------

  const inviteGone = (c: Context) =>
    html(
      c,
      messagePage(
        'Invite no longer valid',
        `This invite link no longer works: ${INVITE_GONE.replace(/^this link is /, 'it is ')}.`,
      ),
      410,
    )

  router.get('/invite/:token', async (c) => {
    const user = await accounts.inviteUser(c.req.param('token'))
    if (!user) return inviteGone(c)
    return html(c, invitePage({ csrf: csrfToken(c, secure()), handle: user.handle }))
  })

  router.post('/invite/:token', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const token = c.req.param('token')
    const user = await accounts.inviteUser(token)
    if (!user) return inviteGone(c)
    const password = typeof form.password === 'string' ? form.password : ''
    const again = (error: string) =>
      html(c, invitePage({ csrf: csrfToken(c, secure()), handle: user.handle, error }), 400)
    if (password !== form.confirm) return again('confirm: the two passwords differ; type the same one twice.')
    const result = await accounts.acceptInvite(token, password)
    if (result.kind === 'error') return result.code === 'not_found' ? inviteGone(c) : again(result.message)
    return html(
      c,
      signInPage({
        csrf: csrfToken(c, secure()),
        oauthQuery: '',
        next: '/',
        handle: result.value.handle,
        notice: 'Your password is set: sign in with it.',
      }),
    )
  })

  // ---- OAuth endpoints (Better Auth), allow-listed ----------------------------------------------

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

  router.on(['GET', 'POST'], `${issuerPath}/oauth2/authorize`, formLimit, (c) => forward(c))
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
    return html(
      c,
      messagePage(
        'Authorization failed',
        `The app's request was refused (${error.slice(0, 100)}). Start again from your app.`,
      ),
      400,
    )
  })
  // Everything else of the library stays unreachable.
  router.all(`${issuerPath}/*`, (c) =>
    c.json({ error: 'not_found', message: `No route for ${c.req.method} ${c.req.path}` }, 404),
  )
  return router
}

/** The library's endpoints this server forwards (below the issuer); every other one answers 404. */
export const SERVED_AUTH_ENDPOINTS = [
  '/oauth2/authorize',
  '/oauth2/token',
  '/oauth2/register',
  '/oauth2/revoke',
]

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
 * Whose registrations count together: an IPv4 address as is, an IPv6 address by its /64 (what one host
 * or one customer of a provider usually holds, so rotating within it gains nothing). Unknown: one bucket.
 */
export function registrationSourceOf(address: string | undefined): string {
  if (!address) return 'unknown'
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
  if (!plain.includes(':')) return plain
  const [head = '', tail] = plain.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '') || '0')
    .join(':')}::/64`
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

/**
 * Unauthenticated registration is bounded: clients nobody approved are deleted after a day, at most
 * MAX_REGISTRATIONS_PER_HOUR new ones per hour and MAX_OAUTH_CLIENTS in all. Returns why registration
 * is closed now, or null.
 */
async function registrationsFull(prisma: PrismaClient): Promise<string | null> {
  const now = Date.now()
  await prisma.$executeRaw`
    DELETE FROM oauth_clients c
     WHERE c.created_at < ${new Date(now - UNUSED_CLIENT_TTL_MS)} AND c.user_id IS NULL
       AND NOT EXISTS (SELECT 1 FROM oauth_consents k WHERE k.client_id = c.client_id)
       AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.client_id = c.client_id)
       AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens a WHERE a.client_id = c.client_id)`
  const [recent, total] = await Promise.all([
    prisma.oauthClient.count({ where: { createdAt: { gt: new Date(now - 3_600_000) } } }),
    prisma.oauthClient.count(),
  ])
  if (recent >= MAX_REGISTRATIONS_PER_HOUR)
    return `registration: ${MAX_REGISTRATIONS_PER_HOUR} clients registered in the last hour; try again later`
  if (total >= MAX_OAUTH_CLIENTS)
    return `registration: ${MAX_OAUTH_CLIENTS} clients are registered; try again later`
  return null
}
