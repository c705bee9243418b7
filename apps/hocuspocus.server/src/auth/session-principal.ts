/**
 * A person signed in through a browser (Better Auth's session cookie) as a principal, for the web
 * editor's calls to /api and its WebSocket. The principal acts with every scope (the person is present),
 * and its `tokenId` names the session (`session:<id>`), so open sockets follow a sign-out or an expired
 * session through the same re-check as a revoked token (tokens.usableIds).
 *
 * A cookie is sent by the browser whatever page started the request, so callers accept it only from our
 * own origin: the API for requests that change something, the WebSocket always (a page on another site
 * may open a WebSocket to us, and the browser attaches our cookies).
 */
import type { PrismaClient } from '../db/generated/client.ts'
import type { BetterAuth } from './better-auth.ts'
import { type Principal, SESSION_PRINCIPAL_PREFIX } from './tokens.ts'

/** What a browser sends as its WebSocket token when it signs in by cookie (the provider needs a string). */
export const SESSION_SOCKET_TOKEN = 'session'

export type SessionPrincipals = (headers: Headers) => Promise<Principal | null>

export function createSessionPrincipals(deps: {
  prisma: PrismaClient
  auth: () => Promise<BetterAuth>
  enabled: () => boolean
}): SessionPrincipals {
  return async function sessionPrincipal(headers) {
    const cookie = headers.get('cookie')
    // No session cookie, no lookup: API-token callers never pay for Better Auth.
    if (!cookie?.includes('session_token=') || !deps.enabled()) return null
    const auth = await deps.auth()
    const found = await auth.api.getSession({ headers: new Headers({ cookie }) }).catch(() => null)
    if (!found) return null
    const user = await deps.prisma.user.findUnique({
      where: { id: found.user.id },
      select: { id: true, handle: true, name: true, createdAt: true },
    })
    if (!user) return null
    return { user, tokenId: `${SESSION_PRINCIPAL_PREFIX}${found.session.id}`, scopes: ['read', 'write'] }
  }
}
