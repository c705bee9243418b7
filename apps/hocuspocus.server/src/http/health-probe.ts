/**
 * The database side of `/health`: asks the database (`SELECT 1`), but never makes a caller wait long
 * behind a database that is only busy. PGlite runs one query at a time, and writing a 22 MB state holds it
 * ~2 s, so a `/health` that waited for its own `SELECT 1` took up to 2.5 s during a large import (issue 24)
 * and a balancer with a one-second timeout would have taken a working instance out.
 *
 * One probe at a time: a request that starts a probe waits for it at most HEALTH_PROBE_WAIT_MS; one that
 * finds a probe in flight waits for it at most HEALTH_PROBE_JOIN_WAIT_MS, since that probe's starter already
 * waits for a failure (before, every request behind a busy database waited the full HEALTH_PROBE_WAIT_MS).
 * Answered: its result, fresh. Not answered yet: the last answer, when it was a success at most HEALTH_BUSY_GRACE_MS ago (reported as `busy`, with its age and how long the probe has
 * waited); otherwise the request waits for the probe until it has waited HEALTH_PROBE_TIMEOUT_MS and then
 * reports the database unreachable. A database that fails (PostgreSQL stopped, the embedded thread ended)
 * answers with an error at once and is reported unreachable at once; one that stops answering altogether
 * is reported unreachable HEALTH_BUSY_GRACE_MS after its last answer at the latest.
 */

import { CONTENT_TRANSACTION } from '../db/transactions.ts'

/**
 * How long a request waits for its probe before it answers from the last probe (ms): a database that is
 * away fails within it (a refused connection, an ended thread: a few ms), so a failure is reported as one.
 * It was 250 ms: behind PGlite's one session reading or writing a 20 MiB state in slices, the request that
 * started a probe waited most of it, and /health's p99 during a large import or export was 120–200 ms on
 * a quiet machine (issue 24 asks < 100 ms). A failure slower than this is reported by the next request.
 */
export const HEALTH_PROBE_WAIT_MS = 50
/**
 * How long a request that finds a probe already in flight waits for it (ms): time for a `SELECT 1` on an
 * idle database to answer. Past it, the request answers from the last probe as a starter would; a probe
 * that fails is still reported by every request after its failure (a failure clears the last success).
 */
export const HEALTH_PROBE_JOIN_WAIT_MS = 20
/**
 * How old the last successful answer may be when the probe in flight has not answered yet (ms): as long as
 * one interactive transaction may hold PGlite's one session (CONTENT_TRANSACTION.timeout; Prisma ends one
 * past it), so a database only working through a legitimate hold is never reported gone. 10 s was too
 * short on a loaded machine: with the load at ~25 on 2 cores, a 20 MiB import's ~2 s write took over 10 s
 * and /health answered 503 during it. A database that answers nothing at all is reported after it.
 */
export const HEALTH_BUSY_GRACE_MS = CONTENT_TRANSACTION.timeout
/** How long a probe may go unanswered before a request without a recent answer to fall back on gives up (ms). */
export const HEALTH_PROBE_TIMEOUT_MS = 5_000

export type DatabaseHealth =
  /** The probe answered within the wait: `latencyMs` is how long it took. */
  | { status: 'ok'; latencyMs: number }
  /**
   * The probe is still waiting (the database is working on something else); the last probe answered
   * `lastAnswerAgoMs` ago, and the one in flight has waited `waitingMs`.
   */
  | { status: 'busy'; lastAnswerAgoMs: number; waitingMs: number }
  /** The probe failed, or nothing answered for too long: `reason` says which. */
  | { status: 'unreachable'; reason: string }

export type HealthProbe = { check(): Promise<DatabaseHealth> }

type Settled = { ok: true; latencyMs: number } | { ok: false; error: string }

export function createHealthProbe(
  query: () => Promise<unknown>,
  options: {
    waitMs?: number
    joinWaitMs?: number
    graceMs?: number
    timeoutMs?: number
    now?: () => number
  } = {},
): HealthProbe {
  const waitMs = options.waitMs ?? HEALTH_PROBE_WAIT_MS
  const joinWaitMs = Math.min(waitMs, options.joinWaitMs ?? HEALTH_PROBE_JOIN_WAIT_MS)
  const graceMs = options.graceMs ?? HEALTH_BUSY_GRACE_MS
  const timeoutMs = options.timeoutMs ?? HEALTH_PROBE_TIMEOUT_MS
  const now = options.now ?? (() => performance.now())
  let inFlight: { started: number; settled: Promise<Settled> } | undefined
  let lastOk: number | undefined

  const start = () => {
    const started = now()
    const settled = query().then(
      (): Settled => {
        const at = now()
        lastOk = at
        return { ok: true, latencyMs: Math.round(at - started) }
      },
      (error: unknown): Settled => {
        lastOk = undefined // a failure is never hidden behind an older success
        return { ok: false, error: (error as Error)?.message ?? String(error) }
      },
    )
    const probe = { started, settled }
    void settled.then(() => {
      if (inFlight === probe) inFlight = undefined
    })
    inFlight = probe
    return probe
  }

  const within = (settled: Promise<Settled>, ms: number) => {
    let timer: Timer | undefined
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), Math.max(0, ms))
    })
    return Promise.race([settled, late]).finally(() => clearTimeout(timer))
  }

  const fromSettled = (result: Settled): DatabaseHealth =>
    result.ok
      ? { status: 'ok', latencyMs: result.latencyMs }
      : { status: 'unreachable', reason: result.error }

  return {
    async check() {
      // A probe unanswered past the timeout is left behind (its query may never come back): a new one
      // starts, at most one every HEALTH_PROBE_TIMEOUT_MS, so a database that recovers is seen again.
      const joined = inFlight && now() - inFlight.started < timeoutMs ? inFlight : undefined
      const probe = joined ?? start()
      const answered = await within(probe.settled, joined ? joinWaitMs : waitMs)
      if (answered) return fromSettled(answered)
      const at = now()
      if (lastOk !== undefined && at - lastOk <= graceMs) {
        return {
          status: 'busy',
          lastAnswerAgoMs: Math.round(at - lastOk),
          waitingMs: Math.round(at - probe.started),
        }
      }
      const late = await within(probe.settled, probe.started + timeoutMs - now())
      if (late) return fromSettled(late)
      return {
        status: 'unreachable',
        reason: `no answer to SELECT 1 within ${timeoutMs / 1000} s${lastOk === undefined ? '' : `; the last answer came ${Math.round((now() - lastOk) / 1000)} s ago`}`,
      }
    },
  }
}
