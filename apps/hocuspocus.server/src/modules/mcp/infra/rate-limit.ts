/**
 * Tool calls, and on their own count completion requests, per minute per user: a fixed window (the
 * wall-clock minute). In memory for one instance;
 * in Redis (INCR + PEXPIRE on a key per user and minute) when several instances share REDIS_URL, so the
 * limit holds across them. A Redis failure lets the call through (logged): the limit protects the server,
 * it must not take the MCP endpoint down with Redis.
 */
import type IORedis from 'ioredis'
import type { Logger } from '../../../logger.ts'

export const WINDOW_MS = 60_000

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number }

/**
 * What is counted. `calls`: tools/call, resources/read and prompts/get (each reads or writes documents).
 * `completions`: completion/complete, its own count of the same size (MCP_CALLS_PER_MINUTE), because a
 * host asks for completions as a person types in an @-mention picker: sharing the count, typing a slug
 * would use up the agent's tool calls for the minute (and an agent's burst would break the picker). A
 * completion costs at most two search pages (resources/documents.ts), so the two counts together bound
 * a user's work at twice the setting.
 */
export type RateKind = 'calls' | 'completions'

export type RateLimiter = {
  /** Calls per minute per user; 0 means off. */
  readonly limit: number
  /** Counts one call (or completion, `kind`) for `userId` and says whether it is within the limit. */
  take(userId: string, kind?: RateKind): Promise<RateDecision>
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
    async take(userId, kind = 'calls') {
      if (limit <= 0) return { ok: true }
      const key = `${kind}:${userId}`
      const t = now()
      const window = Math.floor(t / WINDOW_MS)
      const entry = counts.get(key)
      if (!entry || entry.window !== window) {
        // A new minute: drop every stale window so the map holds at most this minute's users.
        if (entry) for (const [id, e] of counts) if (e.window !== window) counts.delete(id)
        counts.set(key, { window, count: 1 })
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
  prefix = 'collab:mcp',
): RateLimiter {
  if (limit <= 0) return createMemoryRateLimiter(0)
  // The Redis client (ioredis: ~0.1 s and several MB of a start) is imported at the first counted call.
  let client: Promise<IORedis> | undefined
  const connect = () => {
    client ??= import('ioredis').then(({ default: Redis }) => {
      const redis = new Redis(redisUrl, {
        lazyConnect: true,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: true,
      })
      redis.on('error', (err) => logger.warn({ err: err.message }, 'rate limit: redis error'))
      return redis
    })
    return client
  }
  return {
    limit,
    async take(userId, kind = 'calls') {
      const t = now()
      const window = Math.floor(t / WINDOW_MS)
      const key = `${prefix}:${kind}:${userId}:${window}`
      try {
        const redis = await connect()
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
      if (!client) return
      const redis = await client
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}

/** The wording an agent sees (and the docs quote). */
export const rateLimitMessage = (limit: number, retryAfterSeconds: number, kind: RateKind = 'calls') =>
  `rate limit: ${limit} ${kind === 'calls' ? 'tool calls' : 'completion requests'} per minute; try again in ${retryAfterSeconds} s.`

/**
 * The JSON-RPC error code of a limited request that has no tool result to carry the refusal
 * (completion/complete, resources/read, prompts/get): -32000, the first of JSON-RPC's server-defined
 * codes, as the HTTP edge's "database unavailable"; `data.retryAfterSeconds` says when to come back.
 */
export const RATE_LIMITED_ERROR_CODE = -32000
