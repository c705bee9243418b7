/**
 * Each user's share of the server's time for MCP calls (infra/server-time.ts): a user whose calls have
 * taken their share is refused, with when to come back, while other users' calls go on. The share here is
 * small (100 ms at once, 1 ms a second) and the first call is held 150 ms by the test seam, so the share is
 * spent by construction, not by how fast the machine is.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { testConfig, userWithToken } from '@collab/test-support/server'
import pino from 'pino'
import { type RunningServer, startServer } from '../../../server.ts'
import { SERVER_MS_BURST, SERVER_MS_PER_SECOND, ServerTimeShares } from '../infra/server-time.ts'
import { useOwnServer } from './setup.ts'

describe('a share of server time, on its own clock', () => {
  test('calls draw on it; when spent, the answer says when it has refilled; unknown users start whole', () => {
    let now = 0
    const shares = new ServerTimeShares({}, () => now)
    expect(shares.check('a')).toEqual({ ok: true })
    shares.charge('a', SERVER_MS_BURST + 2 * SERVER_MS_PER_SECOND)
    expect(shares.check('a')).toEqual({ ok: false, retryAfterSeconds: 2 })
    expect(shares.check('b')).toEqual({ ok: true })
    now += 2_001
    expect(shares.check('a')).toEqual({ ok: true })
  })
})

describe(`users' shares of server time over MCP (${DATABASE_KIND})`, () => {
  let server: RunningServer
  let held = false
  const clients = useOwnServer(
    (db) =>
      startServer(testConfig(db), pino({ level: 'silent' }), {
        mcpServerTime: new ServerTimeShares({ burstMs: 100, msPerSecond: 1 }),
        // The first get_outline takes 150 ms: more than the whole share.
        mcpHold: async (point, { tool }) => {
          if (point !== 'call' || tool !== 'get_outline' || held) return
          held = true
          await Bun.sleep(150)
        },
      }),
    (s) => {
      server = s
    },
  )

  test('a user past their share is refused with when to come back; another user is not', async () => {
    const ann = await userWithToken(server, 'ann')
    const bea = await userWithToken(server, 'bea')
    const created = await server.services.documents.create(ann.user.id, {
      title: 'Shared time',
      isPrivate: false,
    })
    if (created.kind === 'error') throw new Error(created.message)
    const annClient = await connectClient(mcpUrlOf(server), ann.token)
    const beaClient = await connectClient(mcpUrlOf(server), bea.token)
    clients.push(annClient, beaClient)

    const first = await callText(annClient, 'get_outline', { slug: created.value.slug })
    expect(first.isError).toBe(false)
    const second = await callText(annClient, 'get_outline', { slug: created.value.slug })
    expect(second.isError).toBe(true)
    expect(second.text).toMatch(
      /^server time: your calls used your share of the server's time; try again in \d+ s\.$/,
    )
    const other = await callText(beaClient, 'get_outline', { slug: created.value.slug })
    expect(other.isError).toBe(false)
  })
})
