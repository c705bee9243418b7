/**
 * API tokens: `ctk_<id>_<secret>`. The id is public (it names the row); only SHA-256 of the secret is
 * stored, and it is compared in constant time. Tokens carry scopes `read` and/or `write`, may expire and
 * may be revoked; a revoked or expired token is refused exactly like an unknown one.
 */

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { ok, type Result, refuse } from '@collab/doc-schema'
import type { AccessChanges } from '../access-changes.ts'
import type { PrismaClient } from '../db/generated/client.ts'
import { storableText } from '../db/storable-text.ts'
import { MAX_EXPIRES_DAYS, MAX_LABEL_CHARS } from '../limits.ts'
import { ALL_SCOPES, type Scope, scopesOf } from './scopes.ts'
import type { UserRecord } from './users.ts'

export const TOKEN_PREFIX = 'ctk'
/** Hex, so the id never contains the `_` that separates the token's parts (easier to read and select). */
const ID_BYTES = 6 // 12 hex characters
const SECRET_BYTES = 32 // 43 base64url characters
const TOKEN_PATTERN = /^ctk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/
/** Writing last_used_at on every request would turn reads into writes; once a minute is precise enough. */
const LAST_USED_RESOLUTION_MS = 60_000
/**
 * How long a verified token is trusted without asking the database again. Every MCP and REST request
 * verifies its token, and one database query costs more than the rest of a small request (tools/list).
 * Revoking through this process (the CLI reaches a running server through its admin socket) takes
 * effect at once; so does a revoke on another instance or a CLI process when REDIS_URL is set (it is
 * published, see access-changes.ts, and `forget` drops the entry). Without Redis, another instance
 * sharing the database sees a revocation within this time.
 */
export const PRINCIPAL_CACHE_TTL_MS = 10_000
/**
 * A cached principal older than this still answers, and the token is verified again in the background,
 * so a busy token's entry is renewed before it lapses: at its expiry every request in flight missed at
 * once and queued one query each on the database (50 concurrent MCP reads waited ~200 ms on PGlite's one
 * session, the bench's p99). A revocation the background query sees drops the entry then, sooner than
 * the TTL would.
 */
export const PRINCIPAL_REFRESH_AFTER_MS = 8_000
/** Verified tokens kept at most; the oldest entry goes first. */
export const MAX_CACHED_PRINCIPALS = 10_000

export { ALL_SCOPES, type Scope } from './scopes.ts'

/** Whether a stored scope is one this server knows (a row may hold one from a newer version). */
export const isScope = (s: string): s is Scope => (ALL_SCOPES as readonly string[]).includes(s)

/**
 * Who acts: a user, with the scopes of the credential. `tokenId` names the credential: an API token's id,
 * or SESSION_PRINCIPAL_PREFIX and a browser session's id (session-principal.ts).
 */
export type Principal = { user: UserRecord; tokenId: string; scopes: readonly Scope[] }

/** The id prefix that marks a session principal's `tokenId`. */
export const SESSION_PRINCIPAL_PREFIX = 'session:'

export type TokenRecord = {
  id: string
  label: string
  scopes: Scope[]
  createdAt: Date
  lastUsedAt: Date | null
  expiresAt: Date | null
  revokedAt: Date | null
}

type VerifyRow = {
  secretHash: Uint8Array
  scopes: string[]
  revokedAt: Date | null
  expiresAt: Date | null
  lastUsedAt: Date | null
  userId: string
  handle: string
  name: string | null
  userCreatedAt: Date
}

const hashSecret = (secret: string) => createHash('sha256').update(secret).digest()

/** The one rule for a stored token that exists: usable unless revoked or expired. */
const isUsable = (row: { revokedAt: Date | null; expiresAt: Date | null }, at: Date) =>
  !row.revokedAt && !(row.expiresAt && row.expiresAt <= at)

/** A `--scope` value as scopes (auth/scopes.ts's rule), or an invalid_input refusal naming `--scope`. */
export function parseScopes(raw: string): Result<Scope[]> {
  const read = scopesOf(raw)
  return 'wrong' in read ? refuse('invalid_input', read.wrong, '--scope') : ok(read.scopes)
}

type CachedPrincipal = {
  principal: Principal
  secretHash: Buffer
  expiresAt: number | null
  verifiedAt: number
}

/** `changes`: told of every revoke, so open connections and other instances follow it. */
export function createTokensService(
  prisma: PrismaClient,
  now: () => Date = () => new Date(),
  changes?: AccessChanges,
) {
  const verified = new Map<string, CachedPrincipal>()
  /**
   * The database query under way for a token id: requests that present the same secret meanwhile share
   * it rather than queueing one query each.
   */
  const flights = new Map<string, { secretHash: Buffer; answer: Promise<Principal | null> }>()
  /** Counts forgets and revokes: a query that began before one must not cache what it read. */
  let invalidations = 0

  /** Drops what is known of a token id: its cached principal and any query under way for it. */
  function drop(id: string): void {
    invalidations++
    verified.delete(id)
    flights.delete(id)
  }

  /** The cache entry verified less than PRINCIPAL_CACHE_TTL_MS ago for this exact token, if any. */
  function cached(id: string, secretHash: Buffer): CachedPrincipal | null {
    const entry = verified.get(id)
    if (!entry) return null
    const at = now().getTime()
    if (
      at - entry.verifiedAt >= PRINCIPAL_CACHE_TTL_MS ||
      (entry.expiresAt !== null && entry.expiresAt <= at)
    ) {
      verified.delete(id)
      return null
    }
    // Same id, other secret: not this token; the database path refuses it.
    return timingSafeEqual(secretHash, entry.secretHash) ? entry : null
  }

  /** One query for the token (joined with its user); a usable one is cached, an unusable one dropped. */
  async function lookUp(id: string, secretHash: Buffer): Promise<Principal | null> {
    const began = invalidations
    const rows = await prisma.$queryRaw<VerifyRow[]>`
      SELECT t.secret_hash AS "secretHash", t.scopes::text[] AS scopes, t.revoked_at AS "revokedAt",
             t.expires_at AS "expiresAt", t.last_used_at AS "lastUsedAt",
             u.id::text AS "userId", u.handle, u.name, u.created_at AS "userCreatedAt"
        FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.id = ${id}`
    const row = rows[0]
    const expected = row ? Buffer.from(row.secretHash) : randomBytes(32)
    const matches = timingSafeEqual(secretHash, expected)
    if (!row || !matches) return null
    if (!isUsable(row, now())) {
      // Revoked or expired since it was cached (a background renewal finds out): refused from now on.
      verified.delete(id)
      return null
    }
    const at = now()
    if (!row.lastUsedAt || at.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      // Best effort: a failed bookkeeping write must not refuse a valid token.
      await prisma.apiToken.update({ where: { id }, data: { lastUsedAt: at } }).catch(() => {})
    }
    const user = { id: row.userId, handle: row.handle, name: row.name, createdAt: row.userCreatedAt }
    const principal: Principal = { user, tokenId: id, scopes: row.scopes.filter(isScope) }
    if (invalidations === began)
      remember(id, {
        principal,
        secretHash,
        expiresAt: row.expiresAt?.getTime() ?? null,
        verifiedAt: at.getTime(),
      })
    return principal
  }

  /** `lookUp`, shared with a query already under way for the same token. */
  function shared(id: string, secretHash: Buffer): Promise<Principal | null> {
    const flight = flights.get(id)
    if (flight && timingSafeEqual(flight.secretHash, secretHash)) return flight.answer
    const answer = lookUp(id, secretHash).finally(() => {
      if (flights.get(id)?.answer === answer) flights.delete(id)
    })
    if (!flight) flights.set(id, { secretHash, answer })
    return answer
  }

  function remember(id: string, entry: CachedPrincipal): void {
    verified.delete(id)
    verified.set(id, entry)
    if (verified.size > MAX_CACHED_PRINCIPALS) {
      const oldest = verified.keys().next().value
      if (oldest !== undefined) verified.delete(oldest)
    }
  }

  return {
    /** Returns the token string once; it is not stored and cannot be shown again. */
    async issue(
      userId: string,
      options: { scopes: Scope[]; label?: string; expiresDays?: number },
    ): Promise<Result<{ token: string; record: TokenRecord }>> {
      const label = storableText(options.label ?? '').trim()
      if (label.length > MAX_LABEL_CHARS)
        return refuse('invalid_input', `--label: at most ${MAX_LABEL_CHARS} characters`, '--label')
      if (
        options.expiresDays !== undefined &&
        (!Number.isInteger(options.expiresDays) ||
          options.expiresDays < 1 ||
          options.expiresDays > MAX_EXPIRES_DAYS)
      ) {
        return refuse(
          'invalid_input',
          `--expires-days: must be a whole number from 1 to ${MAX_EXPIRES_DAYS}`,
          '--expires-days',
        )
      }
      const id = randomBytes(ID_BYTES).toString('hex')
      const secret = randomBytes(SECRET_BYTES).toString('base64url')
      const expiresAt =
        options.expiresDays === undefined
          ? null
          : new Date(now().getTime() + options.expiresDays * 86_400_000)
      const record = await prisma.apiToken.create({
        data: { id, userId, label, secretHash: hashSecret(secret), scopes: options.scopes, expiresAt },
        select: tokenSelect,
      })
      return ok({ token: `${TOKEN_PREFIX}_${id}_${secret}`, record })
    },

    /** The principal behind a raw token, or null for anything unusable (unknown, malformed, revoked, expired). */
    async verify(raw: string | undefined | null): Promise<Principal | null> {
      const match = raw ? TOKEN_PATTERN.exec(raw.trim()) : null
      if (!match) return null
      const [, id, secret] = match as unknown as [string, string, string]
      const secretHash = hashSecret(secret)
      const hit = cached(id, secretHash)
      if (!hit) return shared(id, secretHash)
      if (now().getTime() - hit.verifiedAt >= PRINCIPAL_REFRESH_AFTER_MS && !flights.has(id)) {
        // Renewed in the background; a failure (the database away) leaves the entry to lapse as before.
        shared(id, secretHash).catch(() => {})
      }
      return hit.principal
    },

    /**
     * Of these token ids, the ones still usable (one query, for re-checking open connections); the
     * cached principal of every other one is dropped, so requests refuse it at once too.
     */
    async usableIds(ids: readonly string[]): Promise<Set<string>> {
      const unique = [...new Set(ids)]
      if (unique.length === 0) return new Set()
      // A browser's session (`session:<id>`, auth/session-principal.ts) is usable while its row lives.
      const sessionIds = unique
        .filter((id) => id.startsWith(SESSION_PRINCIPAL_PREFIX))
        .map((id) => id.slice(SESSION_PRINCIPAL_PREFIX.length))
      const tokenIds = unique.filter((id) => !id.startsWith(SESSION_PRINCIPAL_PREFIX))
      const at = now()
      const [rows, sessions] = await Promise.all([
        tokenIds.length
          ? prisma.apiToken.findMany({
              where: { id: { in: tokenIds } },
              select: { id: true, revokedAt: true, expiresAt: true },
            })
          : [],
        sessionIds.length
          ? prisma.session.findMany({
              where: { id: { in: sessionIds }, expiresAt: { gt: at } },
              select: { id: true },
            })
          : [],
      ])
      const usable = new Set(rows.filter((row) => isUsable(row, at)).map((row) => row.id))
      for (const session of sessions) usable.add(`${SESSION_PRINCIPAL_PREFIX}${session.id}`)
      for (const id of unique) if (!usable.has(id)) drop(id)
      return usable
    },

    /** Drops a token's cached principal: the next use asks the database (a revoke heard from elsewhere). */
    forget(id: string): void {
      drop(id)
    },

    list(userId: string): Promise<TokenRecord[]> {
      return prisma.apiToken.findMany({
        where: { userId },
        select: tokenSelect,
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      })
    },

    async revoke(id: string): Promise<Result<TokenRecord>> {
      const row = await prisma.apiToken.findUnique({
        where: { id: storableText(id).trim() },
        select: tokenSelect,
      })
      if (!row)
        return refuse(
          'not_found',
          `ID: no token "${id}"; list them with: bun run cli -- token list HANDLE`,
          'ID',
        )
      drop(row.id)
      if (row.revokedAt) {
        // Told again: a connection or instance that missed the first time closes now.
        changes?.emit({ kind: 'token', tokenId: row.id })
        return ok(row)
      }
      const revoked = await prisma.apiToken.update({
        where: { id: row.id },
        data: { revokedAt: now() },
        select: tokenSelect,
      })
      // Again after the write: a request verified while it ran must not keep the token alive.
      drop(row.id)
      changes?.emit({ kind: 'token', tokenId: row.id })
      return ok(revoked)
    },
  }
}

const tokenSelect = {
  id: true,
  label: true,
  scopes: true,
  createdAt: true,
  lastUsedAt: true,
  expiresAt: true,
  revokedAt: true,
} as const

export type TokensService = ReturnType<typeof createTokensService>
