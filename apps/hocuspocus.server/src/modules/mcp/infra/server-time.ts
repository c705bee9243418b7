/**
 * Each user's share of the server's time for MCP calls (issue 24, fair share; MCP_SERVER_SHARE_PERCENT,
 * default 25): besides the count of calls per minute (rate-limit.ts), the time calls take is drawn from a
 * bucket per user (user-shares.ts), refilled at
 * SERVER_MS_PER_SECOND up to SERVER_MS_BURST. A call is refused while its user's bucket is empty, saying
 * when it refills. The time charged is the call's duration from its start to its answer: its rendering on
 * the event loop and its waits for the database, which every user shares too (PGlite is one session).
 *
 * Calls are each bounded (read budgets, write ceilings), but content can make a bounded call dear (a
 * paragraph of thousands of marks: ~0.2-0.6 s a whole read here), and 60 of them a minute would take half
 * of the event loop. With this share one user takes at most ~25% of it however their calls are made;
 * ordinary agents (60 calls of 5-50 ms a minute, at most ~3 s) never meet it. In memory per instance.
 */
import { UserShares } from '../../../user-shares.ts'

export const SERVER_MS_PER_SECOND = 250
/** What a user may spend at once: a burst of large reads after a quiet spell. */
export const SERVER_MS_BURST = 15_000

/** The shares for MCP_SERVER_SHARE_PERCENT (10 ms a second and a 600 ms burst per percent); 0: none. */
export function serverTimeShares(percent: number): ServerTimeShares | undefined {
  if (percent <= 0) return undefined
  return new ServerTimeShares({ msPerSecond: percent * 10, burstMs: percent * 600 })
}

export type ShareDecision = { ok: true } | { ok: false; retryAfterSeconds: number }

/** Each user's share of call time (UserShares in ms), asked before a call and charged after it. */
export class ServerTimeShares {
  private readonly shares: UserShares

  constructor(
    options: { msPerSecond?: number; burstMs?: number } = {},
    now: () => number = () => performance.now(),
  ) {
    this.shares = new UserShares(
      options.msPerSecond ?? SERVER_MS_PER_SECOND,
      options.burstMs ?? SERVER_MS_BURST,
      now,
    )
  }

  /** Whether `userId` may start a call now (their share is not spent). */
  check(userId: string): ShareDecision {
    if (this.shares.left(userId) > 0) return { ok: true }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(this.shares.owedMs(userId) / 1000)) }
  }

  /** Charges `ms` of a finished call to `userId`. */
  charge(userId: string, ms: number): void {
    this.shares.spend(userId, ms)
  }
}

export const serverTimeMessage = (retryAfterSeconds: number) =>
  `server time: your calls used your share of the server's time; try again in ${retryAfterSeconds} s.`
