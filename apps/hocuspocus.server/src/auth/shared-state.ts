/**
 * State Better Auth keeps that must be the same on every instance: its signing secret and its request
 * counts (rate limits). Both live in the database, so any instance can complete any step of a sign-in
 * or an OAuth flow another instance started, with no setting to copy between them.
 */
import { randomBytes } from 'node:crypto'
import type { PrismaClient } from '../db/generated/client.ts'

/** Rate-limit rows older than this are deleted now and then (every window is far shorter). */
const RATE_LIMIT_ROW_TTL_MS = 24 * 60 * 60 * 1000
/** One consume in this many also deletes stale rows, so the table stays bounded without a timer. */
const RATE_LIMIT_SWEEP_EVERY = 200

/**
 * The secret that signs session cookies and the OAuth request a sign-in page carries. AUTH_SECRET when
 * set; otherwise generated once, stored in `server_secrets` and read by every instance (the first
 * instance to start wins the insert).
 */
export async function sharedSecret(prisma: PrismaClient, name: string): Promise<string> {
  const candidate = randomBytes(32).toString('base64url')
  await prisma.$executeRaw`INSERT INTO server_secrets (name, value) VALUES (${name}, ${candidate})
                           ON CONFLICT (name) DO NOTHING`
  const row = await prisma.serverSecret.findUniqueOrThrow({ where: { name } })
  return row.value
}

/**
 * Better Auth's rate-limit storage: one atomic statement per request (a fixed window per key), so
 * concurrent requests on several instances cannot all pass a stale count.
 */
export function databaseRateLimitStorage(prisma: PrismaClient, now: () => number = Date.now) {
  let calls = 0
  return {
    async consume(key: string, rule: { window: number; max: number }) {
      const at = now()
      const windowStart = at - rule.window * 1000
      const rows = await prisma.$queryRaw<Array<{ count: number; lastRequest: bigint }>>`
        INSERT INTO auth_rate_limits (key, count, last_request) VALUES (${key}, 1, ${at})
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN auth_rate_limits.last_request <= ${windowStart} THEN 1
                       ELSE auth_rate_limits.count + 1 END,
          last_request = CASE WHEN auth_rate_limits.last_request <= ${windowStart} THEN ${at}
                              ELSE auth_rate_limits.last_request END
        RETURNING count, last_request AS "lastRequest"`
      if (++calls % RATE_LIMIT_SWEEP_EVERY === 0) {
        await prisma.$executeRaw`DELETE FROM auth_rate_limits WHERE last_request < ${at - RATE_LIMIT_ROW_TTL_MS}`
      }
      const row = rows[0]!
      if (row.count <= rule.max) return { allowed: true, retryAfter: null }
      const freeAt = Number(row.lastRequest) + rule.window * 1000
      return { allowed: false, retryAfter: Math.max(1, Math.ceil((freeAt - at) / 1000)) }
    },
  }
}
