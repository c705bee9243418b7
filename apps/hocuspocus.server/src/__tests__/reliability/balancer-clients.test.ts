/**
 * Who the client is, behind the front door (issue 29): one instance on PostgreSQL and Redis behind the
 * repository's nginx recipe (balancer-support.ts), clients connecting from different loopback addresses
 * (127.0.0.2, 127.0.0.3, … are this machine too). The per-address limits (here OAuth client registration,
 * REGISTRATIONS_PER_MINUTE) must count each client when TRUSTED_PROXIES names nginx, and nginx itself when
 * it does not; an X-Forwarded-For a client writes itself changes nothing. And a person signs in to an MCP
 * app through nginx: every redirect names PUBLIC_URL, and the token works at /mcp through nginx.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { join } from 'node:path'
import { Browser, signInAndConsent, TestOAuthProvider } from '@collab/test-support/browser'
import { runCli } from '@collab/test-support/process'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { REGISTRATIONS_PER_MINUTE } from '../../auth/better-auth.ts'
import { BALANCER_SKIP_REASON, type Front, startFront } from './balancer-support.ts'

const CALLBACK = 'http://127.0.0.1:33418/callback'

describe.skipIf(BALANCER_SKIP_REASON !== undefined)(
  'client addresses and OAuth through nginx (postgres)',
  () => {
    let front: Front
    beforeAll(async () => {
      // nginx on this machine connects from 127.0.0.1; only that address is a proxy.
      front = await startFront({ instances: 1, env: { TRUSTED_PROXIES: '127.0.0.1' } })
    }, 90_000)
    afterAll(() => front?.stop(), 60_000)

    /**
     * Registers an OAuth client from `from` (the connection's own address), through nginx, or straight to
     * the instance with `direct`; `forwardedFor` is an X-Forwarded-For the client writes itself.
     */
    function register(from: string, opts: { forwardedFor?: string; direct?: boolean } = {}): Promise<number> {
      const body = JSON.stringify({
        client_name: `From ${from}`,
        redirect_uris: [CALLBACK],
        token_endpoint_auth_method: 'none',
      })
      const options = {
        host: '127.0.0.1',
        port: opts.direct ? front.ports[0] : Number(new URL(front.url).port),
        localAddress: from,
        method: 'POST',
        path: '/auth/oauth2/register',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          ...(opts.forwardedFor ? { 'x-forwarded-for': opts.forwardedFor } : {}),
        },
      }
      return new Promise((resolve, reject) => {
        const done = (response: import('node:http').IncomingMessage) => {
          response.resume()
          response.on('end', () => resolve(response.statusCode ?? 0))
        }
        const req = opts.direct
          ? httpRequest(options, done)
          : httpsRequest({ ...options, ca: front.ca }, done)
        req.on('error', reject)
        req.end(body)
      })
    }

    async function registerMany(from: string, count: number): Promise<number[]> {
      const statuses: number[] = []
      for (let i = 0; i < count; i++) statuses.push(await register(from))
      return statuses
    }

    const accepted = Array(REGISTRATIONS_PER_MINUTE).fill(201)

    test('TRUSTED_PROXIES names nginx: each client address is limited on its own; a forged X-Forwarded-For changes nothing', async () => {
      expect(await registerMany('127.0.0.2', REGISTRATIONS_PER_MINUTE + 1)).toEqual([...accepted, 429])
      // Another client behind the same nginx is not limited by the first.
      expect(await register('127.0.0.3')).toBe(201)
      // The limited client names a fresh address itself: nginx appends the address it sees, and the server
      // takes the rightmost one that is not a proxy, so the forged one is never read.
      expect(await register('127.0.0.2', { forwardedFor: '198.51.100.20' })).toBe(429)
      // Straight to the instance, bypassing nginx: the peer is no proxy, its X-Forwarded-For is ignored.
      expect(await register('127.0.0.2', { forwardedFor: '198.51.100.21', direct: true })).toBe(429)
    })

    test('signing in to an MCP app through nginx: every redirect names PUBLIC_URL; the token works there', async () => {
      const env = { DATA_DIR: front.db.dataDir, DATABASE_URL: front.db.databaseUrl ?? '' }
      const password = 'correct horse battery staple'
      const file = join(front.db.dataDir, 'olga-password')
      writeFileSync(file, `${password}\n`)
      expect((await runCli(['user', 'add', 'olga'], env)).exitCode).toBe(0)
      expect((await runCli(['user', 'set-password', 'olga', file], env)).exitCode).toBe(0)

      // Every redirect the browser is sent: relative, or on the public origin (or the app's callback).
      const locations: string[] = []
      const recording = (async (url: string | URL | Request, init?: RequestInit) => {
        const response = await front.fetch(url, init)
        const location = response.headers.get('location')
        if (location) locations.push(location)
        return response
      }) as typeof fetch
      const provider = new TestOAuthProvider(CALLBACK, 'App behind nginx')
      const serverUrl = `${front.url}/mcp`
      expect(await auth(provider, { serverUrl, fetchFn: front.fetch })).toBe('REDIRECT')
      expect(provider.authorizationUrl!.href.startsWith(`${front.url}/auth/`)).toBe(true)
      const back = await signInAndConsent(
        new Browser(front.url, front.url, recording),
        provider.authorizationUrl!,
        { handle: 'olga', password },
        { access: 'read' },
      )
      expect(`${back.origin}${back.pathname}`).toBe(CALLBACK)
      expect(locations.length).toBeGreaterThan(1)
      for (const location of locations)
        expect({
          location,
          ok:
            /^\/(?!\/)/.test(location) ||
            location.startsWith(`${front.url}/`) ||
            location.startsWith(CALLBACK),
        }).toEqual({ location, ok: true })

      const code = back.searchParams.get('code')!
      expect(await auth(provider, { serverUrl, authorizationCode: code, fetchFn: front.fetch })).toBe(
        'AUTHORIZED',
      )
      const listed = await front.fetch(serverUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${provider.saved!.access_token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
      expect(listed.status).toBe(200)
      expect(await listed.text()).toContain('read_document')
    })

    // Last: it restarts the instance without trusting nginx.
    test('TRUSTED_PROXIES=none: every client through nginx counts as nginx', async () => {
      const instance = front.instances[0]!
      instance.proc.kill('SIGTERM')
      await instance.proc.exited
      front.instances[0] = undefined
      await front.start(0, { TRUSTED_PROXIES: 'none' })
      // One client uses up the limit (the sign-in test's app, through nginx from 127.0.0.1, took a share of
      // nginx's address already)...
      const statuses = await registerMany('127.0.0.4', REGISTRATIONS_PER_MINUTE + 1)
      expect(statuses.at(-1)).toBe(429)
      expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(0)
      // ...and a different client is refused with it: the same address as far as the server can tell, nginx's.
      expect(await register('127.0.0.5')).toBe(429)
    })
  },
)

if (BALANCER_SKIP_REASON)
  test.skip(`client addresses through nginx: skipped, ${BALANCER_SKIP_REASON}`, () => {})
