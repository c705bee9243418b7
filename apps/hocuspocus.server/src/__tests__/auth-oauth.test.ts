/**
 * OAuth 2.1 for /mcp with real clients on a real server: the MCP TypeScript SDK's client auth flow
 * (an OAuthClientProvider, discovery from the 401 challenge, dynamic registration, PKCE) completes
 * sign-in and consent through the HTML forms, then lists tools with the token it got; and the attacks
 * the authorization server must refuse, each driven by hand against the same endpoints.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import {
  Browser,
  hiddenFields,
  signInAndConsent,
  TestOAuthProvider,
  toolsListStatus,
} from '@collab/test-support/browser'
import { DATABASE_KIND } from '@collab/test-support/database'
import { connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { useTestServer } from '@collab/test-support/server'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { REGISTRATIONS_PER_MINUTE } from '../auth/better-auth.ts'
import { consentPage } from '../auth/pages.ts'
import { clientAddress } from '../auth/routes/client-address.ts'
import {
  MAX_REGISTRATIONS_PER_HOUR,
  REGISTRATIONS_PER_SOURCE_PER_HOUR,
  registrationSourceOf,
} from '../auth/routes/registration-limits.ts'
import { runCommand } from '../cli/run.ts'
import { TOOLS } from '../modules/mcp/tools/index.ts'
import type { RunningServer } from '../server.ts'

const PASSWORD = 'correct horse battery staple'
const CALLBACK = 'http://127.0.0.1:33418/callback'
const READ_TOOLS = TOOLS.filter((t) => t.kind === 'read')
  .map((t) => t.name)
  .sort()
const ALL_TOOLS = TOOLS.map((t) => t.name).sort()

async function addPerson(server: RunningServer, handle: string) {
  const user = await server.services.users.add(handle)
  if (user.kind === 'error') throw new Error(user.message)
  const set = await server.auth.accounts.setPassword(user.value.id, PASSWORD)
  if (set.kind === 'error') throw new Error(set.message)
  return user.value
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

async function register(
  server: RunningServer,
  name = 'Hand-made app',
  redirect = CALLBACK,
): Promise<Response> {
  return fetch(`${server.url}/auth/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirect],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  })
}

function authorizeUrl(
  server: RunningServer,
  clientId: string,
  options: { challenge?: string; method?: string; redirect?: string; resource?: string; scope?: string } = {},
): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: options.redirect ?? CALLBACK,
    scope: options.scope ?? 'read write offline_access',
    state: 'hand-made-state',
    resource: options.resource ?? mcpUrlOf(server),
  })
  if (options.challenge !== undefined) {
    query.set('code_challenge', options.challenge)
    query.set('code_challenge_method', options.method ?? 'S256')
  }
  return `${server.url}/auth/oauth2/authorize?${query}`
}

function tokenRequest(server: RunningServer, fields: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
}

/** What /mcp answers to tools/list with this bearer token (status only: 200 or 401). */
const mcpStatus = (server: RunningServer, token: string) => toolsListStatus(mcpUrlOf(server), token)

describe(`OAuth for /mcp with the MCP SDK client (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })
  const clients: Client[] = []
  afterAll(async () => {
    for (const client of clients.splice(0)) await client.close()
  }, 60_000)

  /** The SDK client is sent to sign in (401 -> discovery -> registration -> authorize); the person approves `access`. */
  async function connectThroughOAuth(
    browser: Browser,
    handle: string,
    access: 'read' | 'read write',
    provider = new TestOAuthProvider(),
  ) {
    const url = new URL(mcpUrlOf(server))
    const first = new Client({ name: 'oauth-test', version: '1.0.0' })
    await expect(
      first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })),
    ).rejects.toThrow(UnauthorizedError)
    const back = await signInAndConsent(
      browser,
      provider.authorizationUrl!,
      { handle, password: PASSWORD },
      { access },
    )
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK)
    expect(back.searchParams.get('state')).toBe('state-of-the-test')
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider })
    await transport.finishAuth(back.searchParams.get('code')!)
    const client = new Client({ name: 'oauth-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
    clients.push(client)
    return { client, provider }
  }

  beforeAll(async () => {
    await addPerson(server, 'alice')
    await addPerson(server, 'bob')
  }, 60_000)

  test('discovery: /mcp answers 401 pointing at metadata that lists this authorization server (RFC 9728, 8414, OpenID)', async () => {
    const unauthenticated = await fetch(mcpUrlOf(server), { method: 'GET' })
    expect(unauthenticated.status).toBe(401)
    const challenge = unauthenticated.headers.get('www-authenticate') ?? ''
    expect(challenge).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`)
    const resource = (await (
      await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as {
      resource: string
      authorization_servers: string[]
    }
    expect(resource.resource).toBe(mcpUrlOf(server))
    expect(resource.authorization_servers).toEqual([`${server.url}/auth`])
    for (const path of [
      '/.well-known/oauth-authorization-server/auth',
      '/.well-known/openid-configuration/auth',
      '/auth/.well-known/openid-configuration',
    ]) {
      const response = await fetch(`${server.url}${path}`)
      expect(response.status).toBe(200)
      const metadata = (await response.json()) as Record<string, unknown>
      expect(metadata.issuer).toBe(`${server.url}/auth`)
      expect(metadata.code_challenge_methods_supported).toEqual(['S256'])
      expect(metadata.registration_endpoint).toBe(`${server.url}/auth/oauth2/register`)
    }
    // The library's administration endpoints are not reachable (allow-list).
    expect((await fetch(`${server.url}/auth/oauth2/create-client`, { method: 'POST' })).status).toBe(404)
  })

  test('every endpoint the authorization-server metadata advertises answers (none is a 404)', async () => {
    // Caught: the metadata advertised the library's introspection, userinfo and end-session endpoints,
    // which the allow-list keeps unreachable, so a client following the metadata got 404.
    const via = { 'x-forwarded-for': '198.51.100.70' } // its own address: the per-address limits
    const advertised = new Set<string>()
    for (const path of [
      '/.well-known/oauth-authorization-server/auth',
      '/auth/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration/auth',
      '/auth/.well-known/openid-configuration',
    ]) {
      const metadata = (await (await fetch(`${server.url}${path}`)).json()) as Record<string, unknown>
      for (const [key, value] of Object.entries(metadata))
        if (/_(endpoint|uri)$/.test(key) && typeof value === 'string') advertised.add(value)
    }
    expect([...advertised].length).toBeGreaterThanOrEqual(4) // authorize, token, register, revoke
    const answers: Record<string, number[]> = {}
    for (const url of advertised) {
      const get = await fetch(url, { headers: via, redirect: 'manual' })
      const post = await fetch(url, {
        method: 'POST',
        headers: { ...via, 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
        redirect: 'manual',
      })
      answers[url.replace(server.url, '')] = [get.status, post.status]
    }
    for (const [url, statuses] of Object.entries(answers))
      expect({ url, found: statuses.some((s) => s !== 404) }).toEqual({ url, found: true })
  })

  test('a person approves read only: the SDK client lists only the read tools, and the consent page named the app', async () => {
    const browser = new Browser(server.url)
    const { client, provider } = await connectThroughOAuth(browser, 'alice', 'read')
    expect(provider.saved?.scope?.split(' ')).not.toContain('write')
    const names = (await client.listTools()).tools.map((t) => t.name).sort()
    expect(names).toEqual(READ_TOOLS)
    expect(names.length).toBeLessThan(ALL_TOOLS.length)
    // Not listed, and not callable either: a write tool called by name is refused.
    const write = await client.callTool({ name: 'create_document', arguments: { title: 'Sneaky' } })
    expect(write.isError).toBe(true)
    expect(await server.services.db.prisma.document.count({ where: { title: 'Sneaky' } })).toBe(0)
    const apps = await (await browser.fetch('/apps')).text()
    expect(apps).toContain('Test MCP app')
    expect(apps).toContain('127.0.0.1:33418')
  })

  test('read and write approved: every tool, a short-lived access token and a refresh token that rotates', async () => {
    const { client, provider } = await connectThroughOAuth(new Browser(server.url), 'bob', 'read write')
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS)
    const tokens = provider.saved!
    expect(tokens.expires_in).toBeLessThanOrEqual(600)
    expect(tokens.refresh_token).toBeString()
    const clientId = provider.information!.client_id
    const refresh = () =>
      tokenRequest(server, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: clientId,
        resource: mcpUrlOf(server),
      })
    const refreshed = await refresh()
    expect(refreshed.status).toBe(200)
    const next = (await refreshed.json()) as { access_token: string; refresh_token: string }
    expect(next.refresh_token).not.toBe(tokens.refresh_token)
    expect(await mcpStatus(server, next.access_token)).toBe(200)
    // Replay of the rotated refresh token: refused.
    const replay = await refresh()
    expect(replay.status).toBe(400)
  })

  describe('attacks on the authorization server', () => {
    let clientId: string
    let browser: Browser

    beforeAll(async () => {
      const registered = await register(server)
      expect(registered.status).toBe(201)
      clientId = ((await registered.json()) as { client_id: string }).client_id
      browser = new Browser(server.url)
    }, 60_000)

    /** A code for this client, through sign-in and consent (read and write). */
    async function codeFor(challenge: string, options: { resource?: string } = {}) {
      const back = await signInAndConsent(
        browser,
        authorizeUrl(server, clientId, { challenge, ...options }),
        {
          handle: 'alice',
          password: PASSWORD,
        },
      )
      const code = back.searchParams.get('code')
      if (!code) throw new Error(`no code: ${back}`)
      return code
    }

    const exchange = (code: string, verifier: string, redirect = CALLBACK) =>
      tokenRequest(server, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirect,
        client_id: clientId,
        resource: mcpUrlOf(server),
      })

    /** An access token issued through the whole flow (PKCE, consent, exchange), which /mcp accepts. */
    async function workingToken(): Promise<{ access_token: string }> {
      const { verifier, challenge } = pkce()
      const issued = (await (await exchange(await codeFor(challenge), verifier)).json()) as {
        access_token: string
      }
      expect(await mcpStatus(server, issued.access_token)).toBe(200)
      return issued
    }

    test('an app that asks for suggest is offered it at consent: the grant proposes edits and writes nothing else', async () => {
      const { verifier, challenge } = pkce()
      const url = authorizeUrl(server, clientId, { challenge, scope: 'read write suggest offline_access' })
      const page = consentPage({
        csrf: 'c',
        oauthQuery: 'q',
        clientName: 'App',
        clientId: 'id',
        redirectHost: 'h',
        handle: 'alice',
        askedWrite: true,
        askedSuggest: true,
      })
      expect(page).toContain('value="read suggest"')
      const back = await signInAndConsent(
        browser,
        url,
        { handle: 'alice', password: PASSWORD },
        { access: 'read suggest' },
      )
      const issued = (await (await exchange(back.searchParams.get('code')!, verifier)).json()) as {
        access_token: string
        scope: string
      }
      expect(issued.scope.split(' ')).toContain('suggest')
      expect(issued.scope.split(' ')).not.toContain('write')
      const client = await connectClient(mcpUrlOf(server), issued.access_token)
      try {
        const names = (await client.listTools()).tools.map((t) => t.name)
        expect(names).toContain('replace_text')
        expect(names).not.toContain('create_document')
        expect(names).not.toContain('decide_suggestions')
      } finally {
        await client.close()
      }
    })

    test('code reuse: the second exchange is refused, and the tokens of the first stop working', async () => {
      const { verifier, challenge } = pkce()
      const code = await codeFor(challenge)
      const first = await exchange(code, verifier)
      expect(first.status).toBe(200)
      const { access_token } = (await first.json()) as { access_token: string }
      expect(await mcpStatus(server, access_token)).toBe(200)
      const second = await exchange(code, verifier)
      expect(second.status).toBe(400)
      expect(((await second.json()) as { error: string }).error).toBe('invalid_grant')
      expect(await mcpStatus(server, access_token)).toBe(401)
    })

    test('wrong PKCE verifier: refused, and the code is spent (the right verifier cannot follow)', async () => {
      const { verifier, challenge } = pkce()
      const code = await codeFor(challenge)
      const response = await exchange(code, pkce().verifier)
      // The library answers 401 invalid_request "code verification failed" (RFC 6749 would say 400 invalid_grant).
      expect([400, 401]).toContain(response.status)
      expect(((await response.json()) as { access_token?: string }).access_token).toBeUndefined()
      expect((await exchange(code, verifier)).status).toBe(400)
    })

    test('PKCE is required, and only S256', async () => {
      for (const url of [
        authorizeUrl(server, clientId),
        authorizeUrl(server, clientId, { challenge: 'a'.repeat(43), method: 'plain' }),
      ]) {
        const response = await browser.fetch(url)
        const location = response.headers.get('location') ?? ''
        // Never a code: an error to the client (or our error page), and no sign-in or consent step.
        expect(location).not.toContain('code=')
        expect(location).not.toContain('/consent')
      }
    })

    test('mismatched redirect URI: authorize never sends the browser there, and the token exchange refuses another one', async () => {
      for (const evil of ['https://evil.example/callback', 'http://127.0.0.1:33418/other', `${CALLBACK}/x`]) {
        const response = await browser.fetch(
          authorizeUrl(server, clientId, { challenge: pkce().challenge, redirect: evil }),
        )
        const location = response.headers.get('location') ?? ''
        expect(location.startsWith(evil)).toBe(false)
        expect(location).not.toContain('evil.example')
      }
      const { verifier, challenge } = pkce()
      const code = await codeFor(challenge)
      const response = await exchange(code, verifier, 'http://127.0.0.1:33418/other')
      expect(response.status).toBe(400)
    })

    test('token for another resource: not issued, and a token bound elsewhere is refused at /mcp', async () => {
      const other = 'http://127.0.0.1:9/mcp'
      const response = await browser.fetch(
        authorizeUrl(server, clientId, { challenge: pkce().challenge, resource: other }),
      )
      expect(response.headers.get('location') ?? '').not.toContain('code=')
      const { verifier, challenge } = pkce()
      const code = await codeFor(challenge)
      const wrongResource = await tokenRequest(server, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: CALLBACK,
        client_id: clientId,
        resource: other,
      })
      expect(wrongResource.status).toBe(400)
      // A token the authorization server bound to another resource (rebinding ours in the database).
      const issued = await workingToken()
      await server.services.db.prisma.oauthAccessToken.updateMany({
        where: { resources: { has: mcpUrlOf(server) }, revoked: null, clientId },
        data: { resources: [other] },
      })
      expect(await mcpStatus(server, issued.access_token)).toBe(401)
    })

    test('expired access token: refused', async () => {
      const issued = await workingToken()
      await server.services.db.prisma.oauthAccessToken.updateMany({
        where: { clientId, revoked: null },
        data: { expiresAt: new Date(Date.now() - 1000) },
      })
      expect(await mcpStatus(server, issued.access_token)).toBe(401)
    })

    test('revoked by the client (RFC 7009): the next call is refused', async () => {
      const issued = await workingToken()
      const revoked = await fetch(`${server.url}/auth/oauth2/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: issued.access_token,
          token_type_hint: 'access_token',
          client_id: clientId,
        }).toString(),
      })
      expect(revoked.status).toBe(200)
      expect(await mcpStatus(server, issued.access_token)).toBe(401)
    })

    test('deny sends the app an error and no code; an approval is remembered for the same scopes', async () => {
      const bobs = new Browser(server.url)
      const url = () => authorizeUrl(server, clientId, { challenge: pkce().challenge, scope: 'read' })
      const denied = await signInAndConsent(
        bobs,
        url(),
        { handle: 'bob', password: PASSWORD },
        { decision: 'deny' },
      )
      expect(`${denied.origin}${denied.pathname}`).toBe(CALLBACK)
      expect(denied.searchParams.get('error')).toBe('access_denied')
      expect(denied.searchParams.get('code')).toBeNull()
      const approved = await signInAndConsent(
        bobs,
        url(),
        { handle: 'bob', password: PASSWORD },
        { access: 'read' },
      )
      expect(approved.searchParams.get('code')).toBeString()
      // Asked again for no more than was approved: straight back to the app, no consent page.
      const again = await bobs.fetch(url())
      expect(again.headers.get('location') ?? '').toStartWith(`${CALLBACK}?code=`)
    })

    test('CSRF on consent: a post without the page token, with another one, or from another origin gives no code', async () => {
      const url = authorizeUrl(server, clientId, { challenge: pkce().challenge, scope: 'read openid' })
      const first = await browser.fetch(url)
      const consentUrl = first.headers.get('location')!
      expect(new URL(consentUrl, server.url).pathname).toBe('/consent')
      const fields = {
        ...hiddenFields(await (await browser.fetch(consentUrl)).text()),
        decision: 'allow',
        access: 'read',
      }
      const forged = await browser.post('/consent', { ...fields, csrf: 'B'.repeat(43) })
      expect(forged.status).toBe(403)
      const foreign = await browser.post('/consent', fields, { origin: 'https://evil.example' })
      expect(foreign.status).toBe(403)
      // A cross-site page posting for the victim: it cannot send the CSRF cookie's value.
      const attacker = new Browser(server.url)
      for (const [name, value] of browser.cookies)
        if (!name.includes('csrf')) attacker.cookies.set(name, value)
      expect((await attacker.post('/consent', { ...fields, csrf: '' })).status).toBe(403)
      for (const response of [forged, foreign]) expect(response.headers.get('location')).toBeNull()
      const allowed = await browser.post('/consent', fields)
      expect(allowed.status).toBe(303)
      expect(allowed.headers.get('location')).toContain('code=')
    })
  })

  test('revocation: disconnecting an app on the apps page (or with the CLI) refuses its very next call', async () => {
    const browser = new Browser(server.url)
    const { client, provider } = await connectThroughOAuth(browser, 'bob', 'read')
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
    const token = provider.saved!.access_token
    const page = await (await browser.fetch('/apps')).text()
    const clientId = provider.information!.client_id
    expect(page).toContain(clientId)
    const fields = hiddenFields(page)
    const revoked = await browser.post('/apps/revoke', { csrf: fields.csrf!, client_id: clientId })
    expect(revoked.status).toBe(200)
    expect(await revoked.text()).toContain('was disconnected')
    expect(await mcpStatus(server, token)).toBe(401)
    // The refresh token went with it: the SDK cannot get a new access token either.
    await expect(client.listTools()).rejects.toThrow()

    // The CLI: app list shows a connected app, app revoke disconnects it.
    const again = await connectThroughOAuth(new Browser(server.url), 'alice', 'read')
    const id = again.provider.information!.client_id
    let out = ''
    const io = {
      out: (s: string) => {
        out += s
      },
      err: () => {},
    }
    expect(await runCommand({ argv: ['app', 'list', 'alice'] }, server.services, io)).toBe(0)
    expect(out).toContain(id)
    expect(await runCommand({ argv: ['app', 'revoke', 'alice', id] }, server.services, io)).toBe(0)
    expect(await mcpStatus(server, again.provider.saved!.access_token)).toBe(401)
  })
})

describe(`OAuth client registration is bounded (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('registration flood: over the global hourly bound, then over the per-address limit, registration is refused', async () => {
    const prisma = server.services.db.prisma
    await prisma.oauthClient.createMany({
      data: Array.from({ length: MAX_REGISTRATIONS_PER_HOUR }, (_, i) => ({
        id: `flood-${i}`,
        clientId: `flood-${i}`,
        redirectUris: [CALLBACK],
        scopes: ['read'],
      })),
    })
    const closed = await register(server)
    expect(closed.status).toBe(429)
    expect(((await closed.json()) as { error: string }).error).toBe('temporarily_unavailable')
    await prisma.oauthClient.deleteMany({ where: { clientId: { startsWith: 'flood-' } } })

    const statuses: number[] = []
    for (let i = 0; i < REGISTRATIONS_PER_MINUTE + 2; i++)
      statuses.push((await register(server, `Flood ${i}`)).status)
    expect(statuses.slice(0, REGISTRATIONS_PER_MINUTE)).toEqual(Array(REGISTRATIONS_PER_MINUTE).fill(201))
    expect(statuses.slice(REGISTRATIONS_PER_MINUTE)).toEqual([429, 429])
    expect(await prisma.oauthClient.count()).toBe(REGISTRATIONS_PER_MINUTE)
  })

  test('behind a proxy on this machine, the limit counts each forwarded client, not the proxy', async () => {
    const from = (ip: string) =>
      fetch(`${server.url}/auth/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.9, ${ip}` },
        body: JSON.stringify({
          client_name: `Via proxy ${ip}`,
          redirect_uris: [CALLBACK],
          token_endpoint_auth_method: 'none',
        }),
      })
    const statuses: number[] = []
    for (let i = 0; i <= REGISTRATIONS_PER_MINUTE; i++) statuses.push((await from('198.51.100.7')).status)
    expect(statuses.slice(0, REGISTRATIONS_PER_MINUTE)).toEqual(Array(REGISTRATIONS_PER_MINUTE).fill(201))
    expect(statuses[REGISTRATIONS_PER_MINUTE]).toBe(429)
    // Another client behind the same proxy is not refused for the first one's registrations.
    expect((await from('198.51.100.8')).status).toBe(201)
  })

  test('one source cannot close registration for everyone: past its hourly limit it alone is refused', async () => {
    // Caught: the only hourly bound was one global bucket (100), which one client rotating addresses
    // (5 a minute each) emptied, refusing every other client's registration for an hour.
    const prisma = server.services.db.prisma
    const from = (ip: string, name: string) =>
      fetch(`${server.url}/auth/oauth2/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify({
          client_name: name,
          redirect_uris: [CALLBACK],
          token_endpoint_auth_method: 'none',
        }),
      })
    // As many clients in the last hour as the old global bucket held, all from elsewhere.
    await prisma.oauthClient.createMany({
      data: Array.from({ length: 100 }, (_, i) => ({
        id: `rotating-${i}`,
        clientId: `rotating-${i}`,
        redirectUris: [CALLBACK],
        scopes: ['read'],
      })),
    })
    // One IPv6 host rotating its addresses inside its /64, a minute passing after every
    // REGISTRATIONS_PER_MINUTE (Better Auth's per-minute rows moved back, as time would).
    const registered: number[] = []
    let refusal: Response | undefined
    for (let i = 0; !refusal && i < 2 * REGISTRATIONS_PER_SOURCE_PER_HOUR; i++) {
      const response = await from(`2001:db8:5:7::${(i + 1).toString(16)}`, `Rotating ${i}`)
      if (response.status === 201) registered.push(i)
      else refusal = response
      if (registered.length % REGISTRATIONS_PER_MINUTE === 0)
        await prisma.$executeRaw`UPDATE auth_rate_limits SET last_request = last_request - 61000
                                  WHERE key LIKE '%|/oauth2/register'`
    }
    expect(registered.length).toBe(REGISTRATIONS_PER_SOURCE_PER_HOUR)
    expect(refusal?.status).toBe(429)
    expect(Number(refusal?.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(((await refusal!.json()) as { error_description: string }).error_description).toContain(
      `registration: ${REGISTRATIONS_PER_SOURCE_PER_HOUR} clients registered from this address in the last hour; try again in`,
    )
    // Everyone else still registers: another IPv4 client, and another IPv6 network.
    expect((await from('198.51.100.61', 'Someone else')).status).toBe(201)
    expect((await from('2001:db8:5:8::1', 'Another network')).status).toBe(201)
    await prisma.oauthClient.deleteMany({ where: { clientId: { startsWith: 'rotating-' } } })
  })

  test('registration sources: IPv4 addresses alone, IPv6 by /64', () => {
    expect(registrationSourceOf('198.51.100.7')).toBe('198.51.100.7')
    expect(registrationSourceOf('::ffff:198.51.100.7')).toBe('198.51.100.7')
    expect(registrationSourceOf('2001:db8:5:7::1')).toBe(registrationSourceOf('2001:0db8:0005:0007:ffff::2'))
    expect(registrationSourceOf('2001:db8:5:7::1')).not.toBe(registrationSourceOf('2001:db8:5:8::1'))
  })

  test('X-Forwarded-For is believed from trusted proxies only, and only its untrusted rightmost hop', () => {
    expect(clientAddress('198.51.100.1', '10.0.0.1', ['loopback'])).toBe('198.51.100.1') // a client spoofing it
    expect(clientAddress('127.0.0.1', '203.0.113.5, 198.51.100.2', ['loopback'])).toBe('198.51.100.2')
    expect(clientAddress('10.0.0.2', '198.51.100.3, 10.0.0.1', ['10.0.0.2', '10.0.0.1'])).toBe('198.51.100.3')
    expect(clientAddress('127.0.0.1', 'not-an-address', ['loopback'])).toBe('127.0.0.1')
    expect(clientAddress('127.0.0.1', '198.51.100.4', ['none'])).toBe('127.0.0.1')
  })

  test('a client nobody approved is deleted after a day, so the bound does not fill up for good', async () => {
    const prisma = server.services.db.prisma
    const old = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000)
    await prisma.oauthClient.create({
      data: { id: 'stale', clientId: 'stale', redirectUris: [CALLBACK], scopes: ['read'], createdAt: old },
    })
    // Registering prunes first (here the per-address limit of the test above may refuse the new one).
    const response = await register(server, 'After the prune')
    expect([201, 429]).toContain(response.status)
    expect(await prisma.oauthClient.findUnique({ where: { clientId: 'stale' } })).toBeNull()
  })

  test('a registration body over the bound is refused before it is parsed', async () => {
    const response = await fetch(`${server.url}/auth/oauth2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'x'.repeat(20_000), redirect_uris: [CALLBACK] }),
    })
    expect(response.status).toBe(413)
  })
})
