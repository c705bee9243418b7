/**
 * Operators' views are not public. The attack: with HOST=0.0.0.0, anyone on the network read /metrics
 * (request and tool counts) and /health (the version, the database kind and latency). Now /metrics
 * answers loopback peers only, or only the bearer of METRICS_TOKEN when it is set; /health answers
 * everyone but tells others only `{ status }`.
 */
import { describe, expect, test } from 'bun:test'
import { networkInterfaces } from 'node:os'
import { DATABASE_KIND } from '@collab/test-support/database'
import { useTestServer } from '@collab/test-support/server'
import { ConfigError, loadConfig, METRICS_TOKEN_MIN_CHARS } from '../config.ts'
import { createHttpApp } from '../http/app.ts'
import { createLogger } from '../logger.ts'
import { isLoopback } from '../loopback.ts'
import type { RunningServer } from '../server.ts'

/** An address of this machine that is not loopback, if it has one (then a real non-loopback peer). */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address

const METRICS_TOKEN = 'metrics-secret-0123456789abcdef'

describe(`/metrics and /health off loopback (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer(
    (s) => {
      server = s
    },
    { host: '0.0.0.0' },
  )

  test.skipIf(!outsideAddress)(
    'a peer on a real non-loopback interface gets 403 from /metrics and only the status from /health',
    async () => {
      const outside = `http://${outsideAddress}:${server.port}`
      const metrics = await fetch(`${outside}/metrics`)
      expect(metrics.status).toBe(403)
      const body = await metrics.text()
      expect(body).not.toContain('http_requests_total')
      expect(JSON.parse(body).message).toContain('METRICS_TOKEN')
      const health = await fetch(`${outside}/health`)
      expect(health.status).toBe(200)
      expect(await health.json()).toEqual({ status: 'ok' })
      // The same server over loopback: everything, as before.
      const local = `http://127.0.0.1:${server.port}`
      expect((await fetch(`${local}/metrics`)).status).toBe(200)
      expect(await (await fetch(`${local}/health`)).json()).toMatchObject({
        status: 'ok',
        version: expect.any(String),
        database: { kind: server.services.db.kind },
      })
    },
  )

  /** The real app over this server's real services; `ip` is what server.ts passes from Bun's requestIP. */
  const appWith = (metricsToken?: string) =>
    createHttpApp({
      services: server.services,
      mcp: server.mcp,
      metrics: server.metrics,
      logger: createLogger('silent'),
      version: '9.9.9',
      metricsToken,
    })
  const ask = (app: ReturnType<typeof appWith>, path: string, ip: string, token?: string) =>
    app.fetch(
      new Request(`http://collab.example${path}`, {
        headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
      }),
      { ip },
    )

  test('without METRICS_TOKEN: a non-loopback peer is refused /metrics even with a token, loopback is served', async () => {
    const app = appWith()
    expect((await ask(app, '/metrics', '10.0.0.5')).status).toBe(403)
    expect((await ask(app, '/metrics', '10.0.0.5', METRICS_TOKEN)).status).toBe(403)
    expect((await ask(app, '/metrics', '::ffff:10.0.0.5')).status).toBe(403)
    expect((await ask(app, '/metrics', '127.0.0.1')).status).toBe(200)
    expect((await ask(app, '/metrics', '::1')).status).toBe(200)
    expect((await ask(app, '/metrics', '::ffff:127.0.0.1')).status).toBe(200)
    const health = await ask(app, '/health', '10.0.0.5')
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(await (await ask(app, '/health', '127.0.0.1')).json()).toMatchObject({ version: '9.9.9' })
  })

  test('with METRICS_TOKEN: its bearer reads /metrics from anywhere; anyone else gets 401, loopback too', async () => {
    const app = appWith(METRICS_TOKEN)
    const served = await ask(app, '/metrics', '10.0.0.5', METRICS_TOKEN)
    expect(served.status).toBe(200)
    expect(await served.text()).toContain('http_requests_total')
    for (const [ip, token] of [
      ['10.0.0.5', undefined],
      ['10.0.0.5', 'wrong'],
      ['10.0.0.5', `${METRICS_TOKEN}x`],
      ['127.0.0.1', undefined], // behind a local reverse proxy every request comes from loopback
    ] as const) {
      const refused = await ask(app, '/metrics', ip, token)
      expect(refused.status).toBe(401)
      expect(refused.headers.get('www-authenticate')).toBe('Bearer')
      expect(await refused.text()).not.toContain('http_requests_total')
    }
    expect(await (await ask(app, '/health', '10.0.0.5')).json()).toEqual({ status: 'ok' })
    expect(await (await ask(app, '/health', '10.0.0.5', METRICS_TOKEN)).json()).toMatchObject({
      version: '9.9.9',
    })
  })

  test('loopback means localhost, 127.0.0.0/8 and ::1 only (bracketed or IPv4-mapped too)', () => {
    const local = ['127.0.0.1', '127.8.9.10', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost', 'LocalHost']
    expect(local.filter((host) => !isLoopback(host))).toEqual([])
    const remote = ['10.0.0.5', '::ffff:10.0.0.5', '128.0.0.1', '::2', '[::2]', 'localhost.evil.example', '']
    expect([...remote, undefined].filter((host) => isLoopback(host))).toEqual([])
  })
})

describe(`METRICS_TOKEN on a real server (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer(
    (s) => {
      server = s
    },
    { metricsToken: METRICS_TOKEN },
  )

  test('the server asks for the token even on loopback, and serves its bearer', async () => {
    const refused = await fetch(`${server.url}/metrics`)
    expect(refused.status).toBe(401)
    expect(await refused.text()).not.toContain('http_requests_total')
    const served = await fetch(`${server.url}/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    })
    expect(served.status).toBe(200)
    expect(await served.text()).toContain('http_requests_total')
    expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ status: 'ok' })
  })

  test('METRICS_TOKEN is read from the environment; a short or spaced one names the variable', () => {
    expect(loadConfig({ METRICS_TOKEN: ` ${METRICS_TOKEN} ` }).metricsToken).toBe(METRICS_TOKEN)
    expect(loadConfig({}).metricsToken).toBeUndefined()
    const short = 'x'.repeat(METRICS_TOKEN_MIN_CHARS - 1)
    expect(() => loadConfig({ METRICS_TOKEN: short })).toThrow(ConfigError)
    expect(() => loadConfig({ METRICS_TOKEN: short })).toThrow(/METRICS_TOKEN/)
    expect(() => loadConfig({ METRICS_TOKEN: `${METRICS_TOKEN} two` })).toThrow(/METRICS_TOKEN/)
  })
})
