/**
 * Sign-in attempts per account, whatever address they come from: the per-address limit
 * (SIGN_INS_PER_MINUTE, Better Auth's) does not stop one guesser rotating addresses. Each attempt at a
 * handle is counted before its password is checked (one atomic upsert in `auth_rate_limits`, shared by
 * every instance, so concurrent guesses cannot all pass a stale count); a successful sign-in clears the
 * count. Past SIGN_IN_ATTEMPTS_PER_ACCOUNT attempts in SIGN_IN_LOCK_WINDOW_SECONDS, sign-in to that
 * account is refused, the right password included, until the window ends.
 *
 * The trade-off (docs/auth.md): anyone who knows a handle can keep its owner from signing in with a
 * password for up to one window at a time (sessions already open and API tokens keep working). The
 * window is short enough for that to be a nuisance, and long enough that guessing is slow: at most
 * 10 guesses per 15 minutes (960 a day) against an argon2id hash of a 12+ character password.
 */
import type { PrismaClient } from '../db/generated/client.ts'
import { databaseRateLimitStorage } from './shared-state.ts'

/** Sign-in attempts allowed per account per window before its sign-in pauses. */
export const SIGN_IN_ATTEMPTS_PER_ACCOUNT = 10
/** How long one account's window lasts (and so the longest its sign-in is paused). */
export const SIGN_IN_LOCK_WINDOW_SECONDS = 15 * 60

const keyOf = (handle: string) => `sign-in-account:${handle.toLowerCase()}`

export type AccountLock = {
  /** Counts an attempt at this handle; `retryAfter` seconds when its sign-in is paused. */
  attempt(handle: string): Promise<{ allowed: true } | { allowed: false; retryAfter: number }>
  /** The password was right: the account's count starts again. */
  succeeded(handle: string): Promise<void>
  /** The attempt was refused before its password was checked (per-address limit): not counted. */
  notTried(handle: string): Promise<void>
}

export function accountSignInLock(prisma: PrismaClient, now: () => number = Date.now): AccountLock {
  const storage = databaseRateLimitStorage(prisma, now)
  const rule = { window: SIGN_IN_LOCK_WINDOW_SECONDS, max: SIGN_IN_ATTEMPTS_PER_ACCOUNT }
  return {
    async attempt(handle) {
      const result = await storage.consume(keyOf(handle), rule)
      return result.allowed ? { allowed: true } : { allowed: false, retryAfter: result.retryAfter ?? 1 }
    },
    async succeeded(handle) {
      await prisma.$executeRaw`DELETE FROM auth_rate_limits WHERE key = ${keyOf(handle)}`
    },
    async notTried(handle) {
      await prisma.$executeRaw`UPDATE auth_rate_limits SET count = count - 1
                               WHERE key = ${keyOf(handle)} AND count > 0`
    },
  }
}
