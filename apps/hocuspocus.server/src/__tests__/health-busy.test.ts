/**
 * /health behind a busy database (issue 24): PGlite runs one query at a time, so a long statement (a
 * 22 MB state written, ~2 s) held /health's `SELECT 1` as long. /health now answers from the last probe
 * while one is in flight (`busy`, with its age), and still reports a database that fails or stops
 * answering. The hold is a real interactive transaction on the server's own client: on PGlite its one
 * connection is taken, so every other query waits, as behind a large write. PostgreSQL serves `SELECT 1` on
 * another connection meanwhile, so the HTTP case is PGlite's.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { eventually, useTestServer } from '@collab/test-support/server'
import { createHealthProbe, type DatabaseHealth } from '../http/health-probe.ts'
import type { RunningServer } from '../server.ts'

type Health = { status: string; database: DatabaseHealth & { kind: string } }

/** Holds the server's database in an open transaction until `release()`; `taken` once it holds it. */
function holdDatabase(server: RunningServer) {
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let taken = () => {}
  const holding = new Promise<void>((resolve) => {
    taken = resolve
  })
  const done = server.services.db.prisma.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT 1`
      taken()
      await released
    },
    { maxWait: 10_000, timeout: 30_000 },
  )
  return { holding, release, done }
}

// One server for the file: each test's hold ends with it, and the probe test makes a probe of its own.
let server: RunningServer
useTestServer((s) => {
  server = s
})

describe.skipIf(DATABASE_KIND !== 'pglite')('/health behind a busy embedded database', () => {
  const health = async () => {
    const res = await fetch(`${server.url}/health`)
    return { status: res.status, body: (await res.json()) as Health }
  }

  test('answers from the last probe while the database is held, and fresh once it is free', async () => {
    const before = await health()
    expect(before.status).toBe(200)
    expect(before.body.database.status).toBe('ok')

    const hold = holdDatabase(server)
    await hold.holding
    try {
      // Without the last probe to fall back on, this request waited as long as the hold lasted and said ok.
      const held = await health()
      expect(held.status).toBe(200)
      expect(held.body.status).toBe('ok')
      expect(held.body.database).toMatchObject({ kind: 'pglite', status: 'busy' })
      const busy = held.body.database as Extract<DatabaseHealth, { status: 'busy' }>
      expect(busy.lastAnswerAgoMs).toBeGreaterThanOrEqual(0)
      expect(busy.waitingMs).toBeGreaterThanOrEqual(0)
    } finally {
      hold.release()
      await hold.done
    }
    // The probe begun during the hold may still be in flight (its answer comes once the database has
    // served it): a request that joins it answers from the last probe for HEALTH_PROBE_JOIN_WAIT_MS. Once
    // that probe is answered, /health is fresh again.
    await eventually(async () => {
      const after = await health()
      expect(after.status).toBe(200)
      expect(after.body.database.status).toBe('ok')
    }, 10_000)
  })

  test('a request that finds a probe in flight answers from the last probe without waiting for it', async () => {
    // The starter waits for its probe as long as the hold lasts (a long wait); a request after it joins the
    // probe in flight and must answer `busy` while the database is still held. Before, it waited for the
    // probe as long as the starter did, so this test never released the hold and timed out.
    const probe = createHealthProbe(() => server.services.db.prisma.$queryRaw`SELECT 1`, {
      waitMs: 120_000,
      timeoutMs: 120_000,
    })
    expect((await probe.check()).status).toBe('ok')
    const hold = holdDatabase(server)
    await hold.holding
    let starterAnswered = false
    const starter = probe.check().then((answer) => {
      starterAnswered = true
      return answer
    })
    try {
      const joiner = await probe.check()
      expect(joiner.status).toBe('busy')
      expect(starterAnswered).toBe(false)
    } finally {
      hold.release()
      await hold.done
    }
    expect((await starter).status).toBe('ok')
  })

  test('a database that stops answering is reported unreachable once the last answer is too old', async () => {
    // The probe as /health builds it, on the server's real database, with a clock the test moves: how old
    // the last answer is depends on the test's steps, not on how slowly a loaded machine takes the hold
    // (with the real clock, a hold taken later than the grace made the first check `unreachable`).
    let clock = 0
    const probe = createHealthProbe(() => server.services.db.prisma.$queryRaw`SELECT 1`, {
      waitMs: 50,
      graceMs: 300,
      timeoutMs: 2_000,
      now: () => clock,
    })
    expect((await probe.check()).status).toBe('ok')
    const hold = holdDatabase(server)
    await hold.holding
    try {
      clock = 100
      expect((await probe.check()).status).toBe('busy')
      clock = 1_000 // past the grace: the last answer is too old to stand for the database
      const gone = await probe.check()
      expect(gone.status).toBe('unreachable')
      expect(gone.status === 'unreachable' && gone.reason).toStartWith('no answer to SELECT 1 within 2 s')
    } finally {
      hold.release()
      await hold.done
    }
    clock = 5_000
    // A new probe is started after the timeout, so the database is seen again once it answers: `ok`, or
    // `busy` when the abandoned probe's answer came after the clock moved (a fresh success) and the new
    // one is still queued behind it on a loaded machine.
    expect(['ok', 'busy']).toContain((await probe.check()).status)
  })
})

describe(`/health's probe on a failing database (${DATABASE_KIND})`, () => {
  test('a query that fails is reported unreachable at once, even right after a success', async () => {
    let fail = false
    // A long wait: the failure, not its speed, is what is reported (a loaded machine fails slowly).
    const probe = createHealthProbe(
      () =>
        fail
          ? server.services.db.prisma.$queryRaw`SELECT * FROM no_such_table_for_health`
          : server.services.db.prisma.$queryRaw`SELECT 1`,
      { waitMs: 10_000 },
    )
    expect((await probe.check()).status).toBe('ok')
    fail = true
    const failed = await probe.check()
    expect(failed.status).toBe('unreachable')
    expect(failed.status === 'unreachable' && failed.reason).toContain('no_such_table_for_health')
  })
})
