/**
 * The HTTP edge of /mcp: Origin/Host checks, then the auth challenge, then method and body limits;
 * protocol versions. The server runs the default configuration (no MCP_ALLOWED_ORIGINS, bound to
 * 127.0.0.1); a second module checks the allowed list.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js'
import { createLogger } from '../../../logger.ts'
import { init } from '../index.ts'
import { MAX_BODY_BYTES } from '../limits.ts'

let token: string

// The process's shared server: its configuration is the default one, which this file checks.
const share = useSharedServer()
beforeAll(async () => {
  token = (await userWithToken(share.server, share.handle('alice'))).token
})

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
})
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

describe('POST /mcp at the HTTP edge', () => {
  test('no token: 401 whose challenge points at the served protected-resource metadata', async () => {
    const res = await share.server.mcp.router.request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: mcpHeaders,
      body: initialize,
    })
    expect(res.status).toBe(401)
    const challenge = res.headers.get('www-authenticate') ?? ''
    // scope: what OAuth clients should ask for (offline_access brings a refresh token), see docs/auth.md.
    expect(challenge).toBe(
      'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", scope="read write offline_access"',
    )
    const meta = await share.server.mcp.router.request(
      'http://127.0.0.1/.well-known/oauth-protected-resource/mcp',
    )
    expect(meta.status).toBe(200)
    const body = (await meta.json()) as {
      resource: string
      scopes_supported: string[]
      authorization_servers: string[]
    }
    expect(body.resource).toBe('http://127.0.0.1/mcp')
    expect(body.scopes_supported).toEqual(['read', 'write', 'suggest'])
    expect(body.authorization_servers).toEqual([`${share.server.url}/auth`])
  })

  test('a bad token is 401 too', async () => {
    const res = await share.server.mcp.router.request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: 'Bearer ctk_nope' },
      body: initialize,
    })
    expect(res.status).toBe(401)
  })

  test('loopback Host + loopback Origin (any port) pass on the default configuration', async () => {
    // The conformance suite's dns-rebinding-protection "valid" case: it failed (403) before loopback
    // origins were accepted without MCP_ALLOWED_ORIGINS.
    const own = new URL(share.server.url).host // 127.0.0.1:PORT
    const port = new URL(share.server.url).port
    for (const origin of [
      `http://${own}`,
      `http://localhost:${port}`,
      `http://[::1]:${port}`,
      'http://localhost:6274',
      'http://127.0.0.1',
    ]) {
      const res = await fetch(mcpUrlOf(share.server), {
        method: 'POST',
        headers: { ...mcpHeaders, authorization: `Bearer ${token}`, origin },
        body: initialize,
      })
      expect({ origin, status: res.status }).toEqual({ origin, status: 200 })
    }
  })

  test('a rebinding Origin is 403 before auth; look-alike loopback names are not loopback', async () => {
    for (const origin of [
      'http://evil.example',
      'http://localhost.evil.example',
      'http://127.0.0.1.evil.example',
      'file://localhost',
      'null',
    ]) {
      // No token: the Origin check answers before authentication (it needs no principal).
      const res = await fetch(mcpUrlOf(share.server), {
        method: 'POST',
        headers: { ...mcpHeaders, origin },
        body: initialize,
      })
      expect({ origin, status: res.status }).toEqual({ origin, status: 403 })
    }
  })

  test('MCP_ALLOWED_ORIGINS adds origins; bound to a non-loopback interface, loopback origins need it', async () => {
    const moduleFor = (bindHost: string, allowedOrigins: string[]) =>
      init({
        services: share.server.services,
        chatPosting: share.server.chatPosting,
        hocuspocus: share.server.collab.hocuspocus,
        logger: createLogger('silent'),
        config: { bindHost, allowedOrigins },
      }).router
    const status = async (router: ReturnType<typeof moduleFor>, origin: string) =>
      (
        await router.request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: { ...mcpHeaders, authorization: `Bearer ${token}`, origin },
          body: initialize,
        })
      ).status
    const listed = moduleFor('127.0.0.1', ['https://agent.example'])
    expect(await status(listed, 'https://agent.example')).toBe(200)
    expect(await status(listed, 'http://evil.example')).toBe(403)
    const open = moduleFor('0.0.0.0', [])
    expect(await status(open, 'http://localhost:6274')).toBe(403)
    expect(await status(moduleFor('0.0.0.0', ['http://localhost:6274']), 'http://localhost:6274')).toBe(200)
  })

  test('a foreign Host while bound to loopback is 403', async () => {
    const res = await fetch(mcpUrlOf(share.server), {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}`, host: 'evil.example' },
      body: initialize,
    })
    expect(res.status).toBe(403)
  })

  test('GET, DELETE and POST without a token: 401 with the challenge (before 405 or 413)', async () => {
    for (const method of ['GET', 'DELETE', 'POST']) {
      const res = await fetch(mcpUrlOf(share.server), {
        method,
        headers: mcpHeaders,
        body: method === 'POST' ? 'x'.repeat(MAX_BODY_BYTES + 1) : undefined,
      })
      expect({ method, status: res.status }).toEqual({ method, status: 401 })
      expect(res.headers.get('www-authenticate')).toStartWith('Bearer resource_metadata="')
    }
  })

  test('GET and DELETE with a token are 405 (stateless: no SSE stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await share.server.mcp.router.request('http://127.0.0.1/mcp', {
        method,
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('POST')
    }
  })

  test('initialize negotiates every protocol version the SDK supports; an unknown one gets the newest', async () => {
    const negotiated = async (protocolVersion: string) => {
      const res = await fetch(mcpUrlOf(share.server), {
        method: 'POST',
        headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion
    }
    expect(SUPPORTED_PROTOCOL_VERSIONS).toContain(LATEST_PROTOCOL_VERSION)
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) expect(await negotiated(version)).toBe(version)
    expect(await negotiated('2099-01-01')).toBe(LATEST_PROTOCOL_VERSION)
  })

  test('logging/setLevel is answered (capability logging), not "method not found"', async () => {
    const client = await connectClient(mcpUrlOf(share.server), token)
    expect(client.getServerCapabilities()?.logging).toEqual({})
    expect(await client.setLoggingLevel('warning')).toEqual({})
    await client.close()
  })

  test('every POST meets the same header rules, refused with the header at fault first', async () => {
    const post = async (body: string, headers: Record<string, string>) => {
      const res = await share.server.mcp.router.request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { ...mcpHeaders, authorization: `Bearer ${token}`, ...headers },
        body,
      })
      const answer = (await res.json()) as { error?: { code: number; message: string } }
      return { status: res.status, code: answer.error?.code, field: answer.error?.message.split(':')[0] }
    }
    const list = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' })
    // initialize goes to the SDK, a plain tools/list may be answered by the route: the same refusals.
    for (const body of [initialize, list]) {
      expect(await post(body, { accept: 'application/json' })).toEqual({
        status: 406,
        code: -32000,
        field: 'accept',
      })
      expect(await post(body, { 'content-type': 'text/plain' })).toEqual({
        status: 415,
        code: -32000,
        field: 'content-type',
      })
    }
    expect(await post(list, { 'mcp-protocol-version': '1999-01-01' })).toEqual({
      status: 400,
      code: -32000,
      field: 'mcp-protocol-version',
    })
    // initialize negotiates its version in the body: the header is not checked there.
    expect((await post(initialize, { 'mcp-protocol-version': '1999-01-01' })).status).toBe(200)
  })

  test('a body over the limit is 413 before parsing', async () => {
    const res = await share.server.mcp.router.request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
      body: 'x'.repeat(MAX_BODY_BYTES + 1),
    })
    expect(res.status).toBe(413)
  })

  test('initialize over real HTTP sends instructions and lists the read tools', async () => {
    const client = await connectClient(mcpUrlOf(share.server), token)
    expect(client.getInstructions()).toContain('get_outline')
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['find_documents', 'get_outline', 'read_document']),
    )
    for (const tool of tools.filter((t) =>
      ['find_documents', 'get_outline', 'read_document'].includes(t.name),
    )) {
      expect(tool.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        openWorldHint: false,
      })
    }
    await client.close()
  })

  test('tools/list is built once per scope set: later answers equal the first, scopes never mix', async () => {
    // A module of its own, so the first answer of each scope set is the SDK's own build.
    const { router } = init({
      services: share.server.services,
      chatPosting: share.server.chatPosting,
      hocuspocus: share.server.collab.hocuspocus,
      logger: createLogger('silent'),
      config: {},
    })
    const reader = (await userWithToken(share.server, share.handle('lister-r'), ['read'])).token
    const writer = (await userWithToken(share.server, share.handle('lister-w'), ['read', 'write'])).token
    const list = async (bearer: string) => {
      const res = await router.request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { ...mcpHeaders, authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/json')
      const answer = (await res.json()) as {
        jsonrpc: string
        id: number
        result: { tools: Array<{ name: string }> }
      }
      expect(answer).toMatchObject({ jsonrpc: '2.0', id: 7 })
      return answer.result
    }
    const firstRead = await list(reader)
    const firstWrite = await list(writer)
    expect(firstRead.tools.map((t) => t.name)).not.toContain('edit_blocks')
    expect(firstWrite.tools.map((t) => t.name)).toContain('edit_blocks')
    expect(await list(reader)).toEqual(firstRead)
    expect(await list(writer)).toEqual(firstWrite)
    expect(await list(reader)).toEqual(firstRead)
    // A batch that only lists and pings is answered without registering tools: the same list.
    const res = await router.request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${writer}` },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} },
        { jsonrpc: '2.0', id: 9, method: 'ping' },
      ]),
    })
    const answers = (await res.json()) as Array<{ id: number; result: unknown }>
    expect(answers.find((a) => a.id === 8)?.result).toEqual(firstWrite)
    expect(answers.find((a) => a.id === 9)?.result).toEqual({})
    // With the list known, a request whose headers break the route's rules (post-contract.ts) is still refused.
    const refusedWith = async (headers: Record<string, string>) =>
      (
        await router.request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: { ...mcpHeaders, authorization: `Bearer ${writer}`, ...headers },
          body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list', params: {} }),
        })
      ).status
    expect(await refusedWith({ accept: 'application/json' })).toBe(406)
    expect(await refusedWith({ 'content-type': 'text/plain' })).toBe(415)
    expect(await refusedWith({ 'mcp-protocol-version': '1999-01-01' })).toBe(400)
  })
})
