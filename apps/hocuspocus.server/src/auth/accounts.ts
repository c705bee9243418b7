/**
 * People's sign-in data beside their user row: the password (an `auth_accounts` row of provider
 * "credential", argon2id), invite links that let a person choose their own password, and the apps
 * (OAuth clients) they connected, with revocation. The CLI and the pages (routes/) both use this.
 */
import { createHash, randomBytes } from 'node:crypto'
import { ok, type Result, refuse } from '@collab/doc-schema'
import type { PrismaClient } from '../db/generated/client.ts'
import { INVITE_TTL_MS } from '../limits.ts'
import { hashPassword, passwordProblem } from './passwords.ts'
import { isScope } from './tokens.ts'

/**
 * Why an invite link no longer works, for the page and the refusal: it is single use, it expires, and it
 * ends when the account's password is set by any means (another invite, the CLI, a password change).
 */
export const INVITE_GONE =
  'this link is expired, was used, or was replaced: the password of this account was set since it was sent. If you set it, sign in; otherwise ask whoever sent the link for a new one'
const INVITE_PREFIX = 'invite:'
const CREDENTIAL = 'credential'

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url')
const newId = () => randomBytes(16).toString('base64url')

export type ConnectedApp = {
  clientId: string
  name: string
  /** Hosts of the client's registered redirect URIs (what the consent page showed). */
  redirectHosts: string[]
  scopes: string[]
  connectedAt: Date
}

/** The hosts of redirect URIs, for people to recognise an app by (never its self-declared logo). */
export function redirectHostsOf(uris: readonly string[]): string[] {
  const hosts = uris.map((uri) => {
    try {
      return new URL(uri).host || uri
    } catch {
      return uri
    }
  })
  return [...new Set(hosts)]
}

export function createAccountsService(prisma: PrismaClient, now: () => Date = () => new Date()) {
  return {
    /**
     * Sets (or replaces) a user's password, signs their browsers out and ends every invite still
     * outstanding for them: an older link must not set the password again over the one just chosen.
     */
    async setPassword(userId: string, password: string): Promise<Result<void>> {
      const problem = passwordProblem(password)
      if (problem) return refuse('invalid_input', `${problem}; choose another`, 'password')
      const hash = await hashPassword(password)
      const existing = await prisma.account.findFirst({ where: { userId, providerId: CREDENTIAL } })
      await prisma.$transaction([
        existing
          ? prisma.account.update({ where: { id: existing.id }, data: { password: hash, updatedAt: now() } })
          : prisma.account.create({
              data: { id: newId(), accountId: userId, providerId: CREDENTIAL, userId, password: hash },
            }),
        prisma.session.deleteMany({ where: { userId } }),
        this.endInvitesQuery(userId),
      ])
      return ok(undefined)
    },

    /** Ends every outstanding invite of this user (their password was set or changed another way). */
    async endInvites(userId: string): Promise<number> {
      return (await this.endInvitesQuery(userId)).count
    },

    endInvitesQuery(userId: string) {
      return prisma.verification.deleteMany({
        where: { identifier: { startsWith: INVITE_PREFIX }, value: userId },
      })
    },

    async hasPassword(userId: string): Promise<boolean> {
      const row = await prisma.account.findFirst({
        where: { userId, providerId: CREDENTIAL, password: { not: null } },
        select: { id: true },
      })
      return row !== null
    },

    /** Of all users, the ids of those who can sign in with a password (one query, for `user list`). */
    async withPassword(): Promise<Set<string>> {
      const rows = await prisma.account.findMany({
        where: { providerId: CREDENTIAL, password: { not: null } },
        select: { userId: true },
      })
      return new Set(rows.map((row) => row.userId))
    },

    /** A one-time invite secret for this user; only its SHA-256 is stored. */
    async createInvite(userId: string): Promise<{ token: string; expiresAt: Date }> {
      const token = randomBytes(32).toString('base64url')
      const expiresAt = new Date(now().getTime() + INVITE_TTL_MS)
      await prisma.verification.create({
        data: { id: newId(), identifier: `${INVITE_PREFIX}${sha256(token)}`, value: userId, expiresAt },
      })
      return { token, expiresAt }
    },

    /** The user an unexpired invite names, without using it up. */
    async inviteUser(token: string): Promise<{ id: string; handle: string } | null> {
      if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null
      const row = await prisma.verification.findFirst({
        where: { identifier: `${INVITE_PREFIX}${sha256(token)}`, expiresAt: { gt: now() } },
      })
      if (!row) return null
      return prisma.user.findUnique({ where: { id: row.value }, select: { id: true, handle: true } })
    },

    /** Uses an invite: sets the password and deletes the invite (only one request can do so). */
    async acceptInvite(token: string, password: string): Promise<Result<{ handle: string }>> {
      const problem = passwordProblem(password)
      if (problem) return refuse('invalid_input', `${problem}; choose another`, 'password')
      const user = await this.inviteUser(token)
      const gone = refuse('not_found', `invite: ${INVITE_GONE}`, 'invite')
      if (!user) return gone
      const deleted = await prisma.verification.deleteMany({
        where: { identifier: `${INVITE_PREFIX}${sha256(token)}` },
      })
      if (deleted.count === 0) return gone
      const set = await this.setPassword(user.id, password)
      return set.kind === 'error' ? set : ok({ handle: user.handle })
    },

    /** Apps this user approved (one consent per app), newest first. */
    async apps(userId: string): Promise<ConnectedApp[]> {
      const consents = await prisma.oauthConsent.findMany({
        where: { userId },
        include: { client: { select: { clientId: true, name: true, redirectUris: true } } },
        orderBy: { createdAt: 'desc' },
      })
      return consents.map((c) => ({
        clientId: c.client.clientId,
        name: c.client.name || 'Unnamed app',
        redirectHosts: redirectHostsOf(c.client.redirectUris),
        scopes: c.scopes.filter(isScope),
        connectedAt: c.createdAt,
      }))
    },

    /**
     * Disconnects an app from this user: its consent is deleted and every access and refresh token it
     * holds for them is marked revoked, in one transaction. /mcp looks each OAuth token up on every
     * call (oauth-access.ts), so the very next call is refused, on every instance.
     */
    async revokeApp(userId: string, clientId: string): Promise<Result<{ tokens: number }>> {
      const at = now()
      const [consents, access, refresh] = await prisma.$transaction([
        prisma.oauthConsent.deleteMany({ where: { userId, clientId } }),
        prisma.oauthAccessToken.updateMany({
          where: { userId, clientId, revoked: null },
          data: { revoked: at },
        }),
        prisma.oauthRefreshToken.updateMany({
          where: { userId, clientId, revoked: null },
          data: { revoked: at },
        }),
      ])
      if (consents.count === 0 && access.count === 0 && refresh.count === 0) {
        return refuse(
          'not_found',
          `CLIENT_ID: no app "${clientId}" is connected for this user; list them with: bun run cli -- app list HANDLE`,
          'CLIENT_ID',
        )
      }
      return ok({ tokens: access.count + refresh.count })
    },
  }
}

export type AccountsService = ReturnType<typeof createAccountsService>
