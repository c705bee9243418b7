/**
 * Client ID Metadata Documents (the MCP-preferred registration): a client names itself by an https
 * URL and the authorization server fetches that document. The fetch's SSRF rules are tested against
 * the real resolver and real address forms; the whole flow runs on a real server with the MCP SDK
 * client, with the document served from memory by the transport seam (no public https host is reachable
 * from the tests: the only part not real here is the internet).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Browser, hiddenFields, TestOAuthProvider } from '@collab/test-support/browser'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { testConfig } from '@collab/test-support/server'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  createMetadataFetch,
  isPublicAddress,
  MAX_METADATA_DOCUMENT_BYTES,
  readBounded,
} from '../auth/metadata-fetch.ts'
import { createLogger } from '../logger.ts'
import { TOOLS } from '../modules/mcp/tools/index.ts'
import { type RunningServer, startServer } from '../server.ts'

const PASSWORD = 'correct horse battery staple'
const CLIENT_ID = 'https://docs-app.example/mcp-client.json'
const CALLBACK = 'http://127.0.0.1:33419/callback'

describe('the metadata fetch refuses this network (SSRF)', () => {
  test('special-use addresses are not public, IPv4 and IPv6, mapped and embedded forms included', () => {
    const notPublic = [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '203.0.113.80',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'fe80::1',
      'fd00::1',
      'fc00::1',
      '2001:db8::1',
      '2002:7f00:1::1',
      '64:ff9b::7f00:1',
      'ff02::1',
      '2001::1',
      'localhost',
      'example.com',
    ]
    for (const ip of notPublic) expect([ip, isPublicAddress(ip)]).toEqual([ip, false])
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '::ffff:8.8.8.8', '2606:4700:4700::1111']) {
      expect([ip, isPublicAddress(ip)]).toEqual([ip, true])
    }
  })

  test('http, loopback names and literals, private literals and a name resolving to any private address are refused before connecting', async () => {
    const fetchMetadata = createMetadataFetch()
    for (const url of [
      'http://docs-app.example/c.json',
      'https://127.0.0.1/c.json',
      'https://localhost/c.json',
      'https://[::1]/c.json',
      'https://10.0.0.5/c.json',
      'https://[::ffff:169.254.169.254]/c.json',
      'https://user:pw@docs-app.example/c.json',
    ]) {
      await expect(fetchMetadata(url)).rejects.toThrow('client metadata:')
    }
    // DNS answering one public and one private address (a rebinding setup): refused as a whole.
    const mixed = createMetadataFetch(async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '192.168.0.10', family: 4 },
    ])
    await expect(mixed('https://docs-app.example/c.json')).rejects.toThrow(
      'does not resolve to public addresses only',
    )
  })

  test('a document larger than the bound is refused while reading', async () => {
    const big = new Response('x'.repeat(MAX_METADATA_DOCUMENT_BYTES + 1))
    await expect(readBounded(big, MAX_METADATA_DOCUMENT_BYTES)).rejects.toThrow('over')
    const small = await readBounded(new Response('{"a":1}'), MAX_METADATA_DOCUMENT_BYTES)
    expect(new TextDecoder().decode(small)).toBe('{"a":1}')
  })
})

describe(`an MCP client identified by its metadata document (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: RunningServer
  const fetched: string[] = []

  beforeAll(async () => {
    db = await createTestDatabase()
    server = await startServer(testConfig(db), createLogger('silent'), {
      clientMetadataFetch: async (input) => {
        const url = String(input instanceof Request ? input.url : input)
        fetched.push(url)
        if (url !== CLIENT_ID) return new Response('not found', { status: 404 })
        return Response.json(
          {
            client_id: CLIENT_ID,
            client_name: 'Docs App (metadata document)',
            redirect_uris: [CALLBACK],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
          },
          { headers: { 'cache-control': 'max-age=300' } },
        )
      },
    })
    const user = await server.services.users.add('clara')
    if (user.kind === 'error') throw new Error(user.message)
    await server.auth.accounts.setPassword(user.value.id, PASSWORD)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await db?.cleanup()
  }, 60_000)

  test('the metadata says CIMD is supported; the SDK client uses its URL as client_id, registers nothing, and sees only the read tools after a read approval', async () => {
    const metadata = (await (
      await fetch(`${server.url}/.well-known/oauth-authorization-server/auth`)
    ).json()) as {
      client_id_metadata_document_supported?: boolean
    }
    expect(metadata.client_id_metadata_document_supported).toBe(true)

    class MetadataDocumentClient extends TestOAuthProvider {
      clientMetadataUrl = CLIENT_ID
    }
    const provider = new MetadataDocumentClient(CALLBACK, 'Docs App (metadata document)')
    const serverUrl = `${server.url}/mcp`
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT')
    expect(provider.authorizationUrl!.searchParams.get('client_id')).toBe(CLIENT_ID)
    const browser = new Browser(server.url)
    // The consent page names the app from its document, and where it returns.
    const first = await browser.fetch(provider.authorizationUrl!.href)
    const signInPage = await (await browser.fetch(first.headers.get('location')!)).text()
    const signedIn = await browser.post('/sign-in', {
      ...hiddenFields(signInPage),
      handle: 'clara',
      password: PASSWORD,
    })
    const consentHtml = await (await browser.fetch(signedIn.headers.get('location')!)).text()
    expect(consentHtml).toContain('Docs App (metadata document)')
    expect(consentHtml).toContain('127.0.0.1:33419')
    const approved = await browser.post('/consent', {
      ...hiddenFields(consentHtml),
      access: 'read',
      decision: 'allow',
    })
    const back = new URL(approved.headers.get('location')!)
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK)
    expect(await auth(provider, { serverUrl, authorizationCode: back.searchParams.get('code')! })).toBe(
      'AUTHORIZED',
    )

    const client = new Client({ name: 'cimd-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }))
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(
        TOOLS.filter((t) => t.kind === 'read')
          .map((t) => t.name)
          .sort(),
      )
    } finally {
      await client.close()
    }
    expect(fetched).toContain(CLIENT_ID)
    const row = await server.services.db.prisma.oauthClient.findUnique({ where: { clientId: CLIENT_ID } })
    expect(row?.redirectUris).toEqual([CALLBACK])
  })

  test('a redirect URI the document does not list is refused; a client_id URL on loopback is refused without a fetch', async () => {
    const browser = new Browser(server.url)
    const query = (clientId: string, redirect: string) =>
      new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirect,
        scope: 'read',
        state: 's',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        resource: `${server.url}/mcp`,
      })
    const evil = await browser.fetch(`/auth/oauth2/authorize?${query(CLIENT_ID, 'https://evil.example/cb')}`)
    expect(evil.headers.get('location') ?? '').not.toContain('evil.example')
    const before = fetched.length
    const loopback = await browser.fetch(
      `/auth/oauth2/authorize?${query('https://127.0.0.1/c.json', CALLBACK)}`,
    )
    expect(loopback.headers.get('location') ?? '').not.toContain('code=')
    expect(loopback.headers.get('location') ?? '').not.toMatch(/^\/sign-in/)
    expect(fetched.length).toBe(before)
  })

  test('a client_id URL whose document cannot be fetched: refused, no sign-in, no client created', async () => {
    const unknown = 'https://docs-app.example/other.json'
    const provider = new (class extends TestOAuthProvider {
      clientMetadataUrl = unknown
    })(CALLBACK)
    expect(await auth(provider, { serverUrl: `${server.url}/mcp` })).toBe('REDIRECT')
    const response = await new Browser(server.url).fetch(provider.authorizationUrl!.href)
    expect(response.status).toBe(400)
    expect(response.headers.get('location')).toBeNull()
    expect(fetched).toContain(unknown)
    expect(
      await server.services.db.prisma.oauthClient.findUnique({ where: { clientId: unknown } }),
    ).toBeNull()
  })
})
