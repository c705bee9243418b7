/**
 * Operations through the whole server (the app's router, its metrics): per-tool metrics on GET /metrics,
 * and the per-user rate limit (in memory; in Redis when TEST_REDIS_URL is set).
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { seriesValue } from '@collab/test-support/metrics'
import { TEST_REDIS_URL, userWithToken, useTestServer } from '@collab/test-support/server'
import { ConfigError, loadConfig } from '../../../config.ts'
import { createLogger } from '../../../logger.ts'
import type { RunningServer } from '../../../server.ts'
import { createMemoryRateLimiter, createRedisRateLimiter, WINDOW_MS } from '../infra/rate-limit.ts'

const LIMIT = 3

describe('per-tool metrics and the rate limit, through the running server', () => {
  let server: RunningServer
  let alice: string
  let bob: string

  useTestServer(
    (s) => {
      server = s
    },
    { mcpCallsPerMinute: LIMIT },
  )
  beforeAll(async () => {
    alice = (await userWithToken(server, 'alice')).token
    bob = (await userWithToken(server, 'bob')).token
  }, 60_000)

  test('calls are counted by tool and outcome, timed by tool; the limit refuses the call over it', async () => {
    // The window is the wall-clock minute: do not start just before it turns.
    const msLeft = WINDOW_MS - (Date.now() % WINDOW_MS)
    if (msLeft < 5_000) await Bun.sleep(msLeft + 50)
    const client = await connectClient(mcpUrlOf(server), alice)
    expect((await call(client, 'find_documents', {})).isError).toBe(false)
    expect((await call(client, 'find_documents', {})).isError).toBe(false)
    const refused = await call(client, 'get_outline', { slug: 'no-such-document' })
    expect(refused.isError).toBe(true)

    const limited = await call(client, 'find_documents', {})
    expect(limited.isError).toBe(true)
    expect(limited.text).toMatch(
      new RegExp(`^rate limit: ${LIMIT} tool calls per minute; try again in \\d+ s\\.$`),
    )
    const wait = Number(/in (\d+) s/.exec(limited.text)?.[1])
    expect(wait).toBeGreaterThanOrEqual(1)
    expect(wait).toBeLessThanOrEqual(60)

    // tools/list (and initialize, done by connect) are not limited; another user has their own budget.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
    const other = await connectClient(mcpUrlOf(server), bob)
    expect((await call(other, 'find_documents', {})).isError).toBe(false)
    await client.close()
    await other.close()

    const text = await (await fetch(`${server.url}/metrics`)).text()
    expect(seriesValue(text, 'mcp_tool_calls_total{tool="find_documents",outcome="ok"}')).toBe(3)
    expect(seriesValue(text, 'mcp_tool_calls_total{tool="get_outline",outcome="refused"}')).toBe(1)
    expect(seriesValue(text, 'mcp_tool_calls_total{tool="find_documents",outcome="rate_limited"}')).toBe(1)
    expect(seriesValue(text, 'mcp_tool_call_duration_seconds_count{tool="find_documents"}')).toBe(4)
    expect(seriesValue(text, 'mcp_tool_call_duration_seconds_bucket{tool="get_outline",le="+Inf"}')).toBe(1)
    expect(text).toContain('# TYPE mcp_tool_call_duration_seconds histogram')
  })
})

describe('configuration', () => {
  test('MCP_CALLS_PER_MINUTE defaults to 60, 0 turns it off, a bad value names the variable', () => {
    expect(loadConfig({}).mcpCallsPerMinute).toBe(60)
    expect(loadConfig({ MCP_CALLS_PER_MINUTE: '0' }).mcpCallsPerMinute).toBe(0)
    expect(() => loadConfig({ MCP_CALLS_PER_MINUTE: 'lots' })).toThrow(ConfigError)
    expect(() => loadConfig({ MCP_CALLS_PER_MINUTE: 'lots' })).toThrow(/MCP_CALLS_PER_MINUTE/)
    expect(loadConfig({ MCP_TOKEN: ' ctk_abc ' }).mcpToken).toBe('ctk_abc')
    expect(loadConfig({}).mcpToken).toBeUndefined()
  })
})

describe('rate limiter in memory', () => {
  test('a fixed window per user and minute; the wait is what is left of the minute', async () => {
    let now = 10 * WINDOW_MS + 48_000 // 12 s before the minute ends
    const limiter = createMemoryRateLimiter(2, () => now)
    expect(await limiter.take('u1')).toEqual({ ok: true })
    expect(await limiter.take('u1')).toEqual({ ok: true })
    expect(await limiter.take('u1')).toEqual({ ok: false, retryAfterSeconds: 12 })
    expect(await limiter.take('u2')).toEqual({ ok: true })
    now += 11_500
    expect(await limiter.take('u1')).toEqual({ ok: false, retryAfterSeconds: 1 })
    now += 500 // the next minute
    expect(await limiter.take('u1')).toEqual({ ok: true })
  })

  test('0 turns the limit off', async () => {
    const limiter = createMemoryRateLimiter(0)
    for (let i = 0; i < 500; i++) expect((await limiter.take('u')).ok).toBe(true)
  })
})

describe.skipIf(!TEST_REDIS_URL)('rate limiter in Redis', () => {
  test('two instances share one count per user and minute', async () => {
    const logger = createLogger('silent')
    const prefix = `test:mcp:calls:${crypto.randomUUID()}`
    let now = 20 * WINDOW_MS + 30_000
    const a = createRedisRateLimiter(3, TEST_REDIS_URL!, logger, () => now, prefix)
    const b = createRedisRateLimiter(3, TEST_REDIS_URL!, logger, () => now, prefix)
    try {
      expect(await a.take('u1')).toEqual({ ok: true })
      expect(await b.take('u1')).toEqual({ ok: true })
      expect(await a.take('u1')).toEqual({ ok: true })
      expect(await b.take('u1')).toEqual({ ok: false, retryAfterSeconds: 30 })
      expect(await b.take('u2')).toEqual({ ok: true })
      now += 30_000
      expect(await a.take('u1')).toEqual({ ok: true })
    } finally {
      await a.close()
      await b.close()
    }
  })
})
