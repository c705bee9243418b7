/**
 * Tool calls per minute per user: a fixed window (the wall-clock minute). In memory for one instance;
 * in Redis (INCR + PEXPIRE on a key per user and minute) when several instances share REDIS_URL, so the
 * limit holds across them. A Redis failure lets the call through (logged): the limit protects the server,
 * it must not take the MCP endpoint down with Redis.
 */
import IORedis from 'ioredis'
import type { Logger } from '../../../logger.ts'

export const WINDOW_MS = 60_000

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number }

export type RateLimiter = {
  /** Calls per minute per user; 0 means off. */
  readonly limit: number
  /** Counts one call for `userId` and says whether it is within the limit. */
  take(userId: string): Promise<RateDecision>
  close(): Promise<void>
}

const decide = (count: number, limit: number, windowEnd: number, now: number): RateDecision =>
  count <= limit
    ? { ok: true }
    : { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)) }

/** A limit of 0 (or less) turns limiting off. */
export function createMemoryRateLimiter(limit: number, now: () => number = Date.now): RateLimiter {
  const counts = new Map<string, { window: number; count: number }>()
  return {
    limit: Math.max(0, limit),
    async take(userId) {
      if (limit <= 0) return { ok: true }
      const t = now()
      const window = Math.floor(t / WINDOW_MS)
      const entry = counts.get(userId)
      if (!entry || entry.window !== window) {
        // A new minute: drop every stale window so the map holds at most this minute's users.
        if (entry) for (const [id, e] of counts) if (e.window !== window) counts.delete(id)
        counts.set(userId, { window, count: 1 })
        return decide(1, limit, (window + 1) * WINDOW_MS, t)
      }
      entry.count++
      return decide(entry.count, limit, (window + 1) * WINDOW_MS, t)
    },
    async close() {
      counts.clear()
    },
  }
}

export function createRedisRateLimiter(
  limit: number,
  redisUrl: string,
  logger: Logger,
  now: () => number = Date.now,
  prefix = 'collab:mcp:calls',
): RateLimiter {
  if (limit <= 0) return createMemoryRateLimiter(0)
  const redis = new IORedis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
  })
  redis.on('error', (err) => logger.warn({ err: err.message }, 'rate limit: redis error'))
  return {
    limit,
    async take(userId) {
      const t = now()
      const window = Math.floor(t / WINDOW_MS)
      const key = `${prefix}:${userId}:${window}`
      try {
        const [[incrErr, count] = [null, 0], [expireErr] = [null]] =
          (await redis
            .multi()
            .incr(key)
            .pexpire(key, WINDOW_MS * 2)
            .exec()) ?? []
        if (incrErr || expireErr) throw incrErr ?? expireErr
        return decide(Number(count), limit, (window + 1) * WINDOW_MS, t)
      } catch (error) {
        logger.warn({ err: (error as Error).message }, 'rate limit: redis unavailable, call allowed')
        return { ok: true }
      }
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}

/** The wording an agent sees (and the docs quote). */
export const rateLimitMessage = (limit: number, retryAfterSeconds: number) =>
  `rate limit: ${limit} tool calls per minute; try again in ${retryAfterSeconds} s.`
