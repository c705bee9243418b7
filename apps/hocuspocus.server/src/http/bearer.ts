/** Bearer-token middleware: resolves the API token (or an OAuth access token) to a principal, or answers 401. */
import type { MiddlewareHandler } from 'hono'
import { type Principal, TOKEN_PREFIX, type TokensService } from '../auth/tokens.ts'
import { httpRefusal } from './refusal.ts'

export type AuthVariables = { principal: Principal }

export function bearerAuth(options: {
  tokens: TokensService
  /** Extra WWW-Authenticate parameters (the MCP module points at its resource metadata). */
  challenge?: (requestUrl: string) => string
  /** OAuth access tokens (auth/oauth-access.ts), tried for a bearer value that is not an API token. */
  verifyOAuth?: (token: string) => Promise<Principal | null>
  /**
   * A browser's sign-in session (the web editor), tried when no Authorization header is sent. A request
   * that changes something must then come from `origin` (the browser's Origin header): a cookie is
   * attached whatever site made the request.
   */
  session?: { principal: (headers: Headers) => Promise<Principal | null>; origin: () => string }
}): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async function bearer(c, next) {
    const header = c.req.header('authorization') ?? ''
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
    const raw = match?.[1]
    let principal = raw ? await options.tokens.verify(raw) : null
    if (!principal && raw && options.verifyOAuth && !raw.startsWith(`${TOKEN_PREFIX}_`)) {
      principal = await options.verifyOAuth(raw)
    }
    if (!principal && !header && options.session) {
      principal = await options.session.principal(c.req.raw.headers)
      const safe = c.req.method === 'GET' || c.req.method === 'HEAD'
      if (principal && !safe && c.req.header('origin') !== options.session.origin()) {
        throw httpRefusal(
          'forbidden',
          `Origin: a signed-in browser's request that changes something must come from ${options.session.origin()}`,
        )
      }
    }
    if (!principal) {
      const challenge = options.challenge ? `Bearer ${options.challenge(c.req.url)}` : 'Bearer realm="collab"'
      throw httpRefusal(
        'unauthorized',
        match
          ? 'The bearer token is unknown, revoked or expired; issue a new one with: bun run cli -- token issue HANDLE (or sign in again through OAuth)'
          : 'Send an API token as: Authorization: Bearer <token>',
        { headers: { 'WWW-Authenticate': challenge } },
      )
    }
    c.set('principal', principal)
    await next()
  }
}
