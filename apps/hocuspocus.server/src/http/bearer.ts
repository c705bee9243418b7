/** Bearer-token middleware: resolves the API token to a principal, or answers 401. */
import type { MiddlewareHandler } from 'hono'
import type { Principal, TokensService } from '../auth/tokens.ts'
import { httpRefusal } from './refusal.ts'

export type AuthVariables = { principal: Principal }

export function bearerAuth(options: {
  tokens: TokensService
  /** Extra WWW-Authenticate parameters (the MCP module points at its resource metadata). */
  challenge?: (requestUrl: string) => string
}): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async function bearer(c, next) {
    const header = c.req.header('authorization') ?? ''
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
    const principal = match ? await options.tokens.verify(match[1]) : null
    if (!principal) {
      const challenge = options.challenge ? `Bearer ${options.challenge(c.req.url)}` : 'Bearer realm="collab"'
      throw httpRefusal(
        'unauthorized',
        match
          ? 'The bearer token is unknown, revoked or expired; issue a new one with: bun run cli -- token issue HANDLE'
          : 'Send an API token as: Authorization: Bearer <token>',
        { headers: { 'WWW-Authenticate': challenge } },
      )
    }
    c.set('principal', principal)
    await next()
  }
}
