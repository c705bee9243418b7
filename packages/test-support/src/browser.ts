/**
 * A person's browser, as far as the sign-in and consent pages need one: fetch with a cookie jar, no
 * automatic redirects (each step is checked), and the hidden fields of a page's form. Used to drive the
 * real HTML forms over HTTP in the OAuth tests, with a real MCP SDK client on the other side.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'

export class Browser {
  readonly cookies = new Map<string, string>()

  /**
   * `sentOrigin`: the Origin header of posts (another instance behind the same public origin); `send`:
   * the fetch to use (one trusting a test certificate, behind a TLS proxy).
   */
  constructor(
    readonly origin: string,
    readonly sentOrigin = origin,
    readonly send: typeof fetch = fetch,
  ) {}

  /** One request (relative URLs resolve against the origin); cookies are sent and stored. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '))
    const response = await this.send(new URL(url, this.origin), { ...init, headers, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';')
      const eq = pair!.indexOf('=')
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === ''
      if (expired) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return response
  }

  /** Posts a form (application/x-www-form-urlencoded), as a browser does from this origin. */
  post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.sentOrigin, ...headers },
      body: new URLSearchParams(fields).toString(),
    })
  }
}

const unescapeHtml = (text: string) =>
  text.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)))

/** The hidden inputs of a page (name -> value). */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1]!] = unescapeHtml(match[2]!)
  }
  return fields
}

/** An OAuth client as an MCP app keeps it: registration, PKCE verifier and tokens, in memory. */
export class TestOAuthProvider implements OAuthClientProvider {
  information?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier = ''
  authorizationUrl?: URL

  constructor(
    readonly callback = 'http://127.0.0.1:33418/callback',
    readonly name = 'Test MCP app',
  ) {}

  get redirectUrl() {
    return this.callback
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.callback],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  state() {
    return 'state-of-the-test'
  }
  clientInformation() {
    return this.information
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.information = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/**
 * A person completes an authorization request in the browser: follows it to the sign-in page, signs in
 * with the form, approves (or denies) on the consent page with `access` chosen, and returns where the
 * server finally sent the browser (the client's redirect URI with `code` and `state`).
 */
export async function signInAndConsent(
  browser: Browser,
  authorizationUrl: URL | string,
  person: { handle: string; password: string },
  consent: { access?: 'read' | 'read write' | 'read suggest'; decision?: 'allow' | 'deny' } = {},
): Promise<URL> {
  let response = await browser.fetch(String(authorizationUrl))
  let location = response.headers.get('location')
  if (response.status !== 302 || !location)
    throw new Error(`authorize: expected a redirect, got ${response.status}`)
  if (new URL(location, browser.origin).pathname === '/sign-in') {
    const page = await (await browser.fetch(location)).text()
    response = await browser.post('/sign-in', {
      ...hiddenFields(page),
      handle: person.handle,
      password: person.password,
    })
    location = response.headers.get('location')
    if (response.status !== 303 || !location)
      throw new Error(`sign-in: expected a redirect, got ${response.status}: ${await response.text()}`)
  }
  if (new URL(location, browser.origin).pathname === '/consent') {
    const page = await (await browser.fetch(location)).text()
    response = await browser.post('/consent', {
      ...hiddenFields(page),
      access: consent.access ?? 'read write',
      decision: consent.decision ?? 'allow',
    })
    location = response.headers.get('location')
    if (response.status !== 303 || !location)
      throw new Error(`consent: expected a redirect, got ${response.status}: ${await response.text()}`)
  }
  return new URL(location, browser.origin)
}

/** A loopback port free right now (for a callback server, or an instance given a fixed port). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

/** The status /mcp answers a tools/list with this bearer token: 200, or 401 once the token is not usable. */
export async function toolsListStatus(mcpUrl: string, token: string): Promise<number> {
  const response = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
  await response.body?.cancel()
  return response.status
}
