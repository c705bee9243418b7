/**
 * Any instance completes any step of an OAuth flow: two servers on one PostgreSQL database behind one
 * public origin (as behind a load balancer). The flow starts on A, the person signs in and approves on
 * B (B verifies the request A signed: the secret is shared through the database), the code is exchanged
 * on A, B serves /mcp with the token, and a revocation on A refuses B's very next call.
 */
import { describe, expect, test } from 'bun:test'
import {
  Browser,
  freePort,
  hiddenFields,
  TestOAuthProvider,
  toolsListStatus,
} from '@collab/test-support/browser'
import { TEST_DATABASE_URL } from '@collab/test-support/database'
import { useServerPair } from '@collab/test-support/server'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import type { RunningServer } from '../server.ts'

const PASSWORD = 'correct horse battery staple'

describe.skipIf(!TEST_DATABASE_URL)('OAuth across two instances (postgres)', () => {
  let publicUrl: string
  // A on a port chosen first, so both can be told the public origin (A's) before they start.
  const pair = useServerPair(() => {
    const port = freePort()
    publicUrl = `http://127.0.0.1:${port}`
    return [{ port, publicUrl }, { publicUrl }]
  })

  const listTools = (server: RunningServer, token: string) => toolsListStatus(`${server.url}/mcp`, token)

  test('started on A, approved on B, exchanged on A, used on B; revoked on A, refused on B at once', async () => {
    const user = await pair.a.services.users.add('ines')
    if (user.kind === 'error') throw new Error(user.message)
    expect((await pair.a.auth.accounts.setPassword(user.value.id, PASSWORD)).kind).toBe('ok')
    expect(publicUrl).toBe(pair.a.url)

    const provider = new TestOAuthProvider()
    const serverUrl = `${publicUrl}/mcp`
    expect(await auth(provider, { serverUrl })).toBe('REDIRECT')
    // The authorization request is made on A; A signs it and sends the browser to sign in.
    const started = await new Browser(pair.a.url).fetch(provider.authorizationUrl!.href)
    expect(started.status).toBe(302)
    const signInPath = started.headers.get('location')!
    expect(signInPath).toStartWith('/sign-in?')
    // The person's browser reaches B (same public origin, another instance) for sign-in and consent:
    // B must accept the request A signed.
    const browser = new Browser(pair.b.url, publicUrl)
    const page = await (await browser.fetch(signInPath)).text()
    const signedIn = await browser.post('/sign-in', {
      ...hiddenFields(page),
      handle: 'ines',
      password: PASSWORD,
    })
    expect(signedIn.status).toBe(303)
    const consentUrl = new URL(signedIn.headers.get('location')!, pair.b.url)
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
    expect(await listTools(pair.b, token)).toBe(200)
    expect(await listTools(pair.a, token)).toBe(200)

    const revoked = await pair.a.auth.accounts.revokeApp(user.value.id, provider.information!.client_id)
    expect(revoked.kind).toBe('ok')
    expect(await listTools(pair.b, token)).toBe(401)
  })
})
