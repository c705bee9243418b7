/**
 * Any instance completes any step of an OAuth flow: two servers on one PostgreSQL database behind one
 * public origin (as behind a load balancer). The flow starts on A, the person signs in and approves on
 * B (B verifies the request A signed: the secret is shared through the database), the code is exchanged
 * on A, B serves /mcp with the token, and a revocation on A refuses B's very next call.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  Browser,
  freePort,
  hiddenFields,
  TestOAuthProvider,
  toolsListStatus,
} from '@collab/test-support/browser'
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '@collab/test-support/database'
import { startTestServer } from '@collab/test-support/server'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import type { RunningServer } from '../server.ts'

const PASSWORD = 'correct horse battery staple'

describe.skipIf(!TEST_DATABASE_URL)('OAuth across two instances (postgres)', () => {
  let db: TestDatabase
  let a: RunningServer
  let b: RunningServer
  let publicUrl: string

  beforeAll(async () => {
    db = await createTestDatabase()
    const port = freePort()
    publicUrl = `http://127.0.0.1:${port}`
    a = await startTestServer(db, { port, publicUrl })
    b = await startTestServer(db, { publicUrl, migrateOnStart: false })
  }, 60_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await db?.cleanup()
  }, 60_000)

  const listTools = (server: RunningServer, token: string) => toolsListStatus(`${server.url}/mcp`, token)

  test('started on A, approved on B, exchanged on A, used on B; revoked on A, refused on B at once', async () => {
    const user = await a.services.users.add('ines')
    if (user.kind === 'error') throw new Error(user.message)
    expect((await a.auth.accounts.setPassword(user.value.id, PASSWORD)).kind).toBe('ok')
    expect(publicUrl).toBe(a.url)

    const provider = new TestOAuthProvider()
    const serverUrl = `${publicUrl}/mcp`
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT')
    // The authorization request is made on A; A signs it and sends the browser to sign in.
    const started = await new Browser(a.url).fetch(provider.authorizationUrl!.href)
    expect(started.status).toBe(302)
    const signInPath = started.headers.get('location')!
    expect(signInPath).toStartWith('/sign-in?')
    // The person's browser reaches B (same public origin, another instance) for sign-in and consent:
    // B must accept the request A signed.
    const browser = new Browser(b.url, publicUrl)
    const page = await (await browser.fetch(signInPath)).text()
    const signedIn = await browser.post('/sign-in', {
      ...hiddenFields(page),
      handle: 'ines',
      password: PASSWORD,
    })
    expect(signedIn.status).toBe(303)
    const consentUrl = new URL(signedIn.headers.get('location')!, b.url)
    expect(consentUrl.pathname).toBe('/consent')
    const consentPage = await (await browser.fetch(`${consentUrl.pathname}${consentUrl.search}`)).text()
    const approved = await browser.post('/consent', {
      ...hiddenFields(consentPage),
      access: 'read',
      decision: 'allow',
    })
    expect(approved.status).toBe(303)
    const code = new URL(approved.headers.get('location')!).searchParams.get('code')
    expect(code).toBeString()
    expect(await auth(provider, { serverUrl, authorizationCode: code! })).toBe('AUTHORIZED')
    const token = provider.saved!.access_token
    expect(await listTools(b, token)).toBe(200)
    expect(await listTools(a, token)).toBe(200)

    const revoked = await a.auth.accounts.revokeApp(user.value.id, provider.information!.client_id)
    expect(revoked.kind).toBe('ok')
    expect(await listTools(b, token)).toBe(401)
  })
})
