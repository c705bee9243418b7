/**
 * OAuth access tokens at /mcp: the token is opaque, stored as its SHA-256 by the authorization server
 * (better-auth.ts), and looked up on every call, together with the grant behind it. A token is accepted
 * only while all of these hold: it exists, is not revoked, has not expired, names this server's /mcp as
 * its resource (RFC 8707), its client is not disabled, and the person's consent for that client still
 * exists. Revoking an app (accounts.ts) deletes the consent and marks its tokens revoked, so the very
 * next call is refused on every instance; there is deliberately no cache here.
 */
import type { PrismaClient } from '../db/generated/client.ts'
import { storedTokenHash } from './better-auth.ts'
import { isScope, type Principal } from './tokens.ts'

/** Longer bearer values are not OAuth tokens of ours (they are 32 characters); refused without a query. */
const MAX_OAUTH_TOKEN_CHARS = 512

type GrantRow = {
  id: string
  scopes: string[]
  resources: string[] | null
  expiresAt: Date
  revoked: Date | null
  clientDisabled: boolean | null
  granted: boolean
  userId: string
  handle: string
  name: string | null
  userCreatedAt: Date
}

export function createOAuthAccess(prisma: PrismaClient, now: () => Date = () => new Date()) {
  return {
    /** The principal of an OAuth access token for `resource`, or null (unknown, revoked, expired, other resource). */
    async verify(raw: string, resource: string): Promise<Principal | null> {
      if (!raw || raw.length > MAX_OAUTH_TOKEN_CHARS || !/^[\x21-\x7e]+$/.test(raw)) return null
      const rows = await prisma.$queryRaw<GrantRow[]>`
        SELECT t.id, t.scopes, t.resources, t.expires_at AS "expiresAt", t.revoked,
               c.disabled AS "clientDisabled",
               EXISTS (SELECT 1 FROM oauth_consents k
                        WHERE k.client_id = t.client_id AND k.user_id = t.user_id) AS granted,
               u.id::text AS "userId", u.handle, u.name, u.created_at AS "userCreatedAt"
          FROM oauth_access_tokens t
          JOIN oauth_clients c ON c.client_id = t.client_id
          JOIN users u ON u.id = t.user_id
         WHERE t.token = ${storedTokenHash(raw)}`
      const row = rows[0]
      if (!row || row.revoked || row.expiresAt <= now() || row.clientDisabled || !row.granted) return null
      if (!(row.resources ?? []).includes(resource)) return null
      const scopes = row.scopes.filter(isScope)
      // A grant without `read` gives nothing: every tool needs at least read.
      if (!scopes.includes('read')) return null
      return {
        user: { id: row.userId, handle: row.handle, name: row.name, createdAt: row.userCreatedAt },
        tokenId: `oauth:${row.id}`,
        scopes,
      }
    },
  }
}

export type OAuthAccess = ReturnType<typeof createOAuthAccess>
