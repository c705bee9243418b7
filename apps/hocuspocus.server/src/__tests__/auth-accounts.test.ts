/**
 * People's accounts over real HTTP: passwords (argon2id), the sign-in form, session and CSRF cookies,
 * invite links and the CLI commands that set passwords. The OAuth flows are in auth-oauth.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { Browser, hiddenFields } from '@collab/test-support/browser'
import { DATABASE_KIND } from '@collab/test-support/database'
import { useTestServer } from '@collab/test-support/server'
import { SIGN_IN_ATTEMPTS_PER_ACCOUNT, SIGN_IN_LOCK_WINDOW_SECONDS } from '../auth/account-lock.ts'
import { SIGN_INS_PER_MINUTE } from '../auth/better-auth.ts'
import { runCommand } from '../cli/run.ts'
import type { RunningServer } from '../server.ts'

const PASSWORD = 'correct horse battery staple'

async function cli(server: RunningServer, argv: string[], files: Record<string, string> = {}) {
  let out = ''
  let err = ''
  const code = await runCommand({ argv, files }, server.services, {
    out: (s) => {
      out += s
    },
    err: (s) => {
      err += s
    },
  })
  return { code, out, err }
}

function unwrap<T>(result: { kind: 'ok'; value: T } | { kind: 'error'; message: string }): T {
  if (result.kind === 'error') throw new Error(result.message)
  return result.value
}

async function signIn(browser: Browser, handle: string, password: string, next?: string) {
  const page = await (
    await browser.fetch(`/sign-in${next ? `?next=${encodeURIComponent(next)}` : ''}`)
  ).text()
  return browser.post('/sign-in', { ...hiddenFields(page), handle, password })
}

describe(`accounts and sign-in (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('user add + set-password: the password is stored as argon2id, and too short is refused', async () => {
    expect((await cli(server, ['user', 'add', 'alice'])).code).toBe(0)
    const short = await cli(server, ['user', 'set-password', 'alice', 'pw.txt'], { 'pw.txt': 'short\n' })
    expect(short.code).toBe(2)
    expect(short.err).toContain('password: at least 12 characters')
    const set = await cli(server, ['user', 'set-password', 'alice', 'pw.txt'], { 'pw.txt': `${PASSWORD}\n` })
    expect(set.code).toBe(0)
    const account = await server.services.db.prisma.account.findFirstOrThrow({
      where: { providerId: 'credential' },
    })
    expect(account.password).toStartWith('$argon2id$')
    expect(account.password).not.toContain(PASSWORD)
    const list = await cli(server, ['user', 'list'])
    expect(list.out).toMatch(/^alice .* password$/m)
  })

  test('signing in with the form sets an HttpOnly, SameSite session cookie (not Secure over http) and shows the account', async () => {
    const browser = new Browser(server.url)
    const response = await signIn(browser, 'alice', PASSWORD)
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/')
    const session = response.headers.getSetCookie().find((c) => c.startsWith('collab.session_token='))
    expect(session).toBeDefined()
    expect(session).toMatch(/HttpOnly/i)
    expect(session).toMatch(/SameSite=Lax/i)
    expect(session).not.toMatch(/Secure/i)
    const apps = await browser.fetch('/apps')
    expect(apps.status).toBe(200)
    expect(await apps.text()).toContain('Signed in as <strong>alice</strong>')
  })

  test('a wrong password is refused with the form again, and no session', async () => {
    const browser = new Browser(server.url)
    const response = await signIn(browser, 'alice', 'not the password at all')
    expect(response.status).toBe(401)
    expect(await response.text()).toContain('The handle or the password is wrong.')
    expect([...browser.cookies.keys()].some((k) => k.includes('session'))).toBe(false)
    expect((await browser.fetch('/apps')).status).toBe(303)
  })

  test('CSRF: a sign-in post without the cookie token, with another token, or from another origin is refused', async () => {
    const browser = new Browser(server.url)
    const page = await (await browser.fetch('/sign-in')).text()
    const fields = { ...hiddenFields(page), handle: 'alice', password: PASSWORD }
    // A cross-site form: the attacker cannot read the victim's token, so it sends its own guess.
    const wrong = await browser.post('/sign-in', { ...fields, csrf: 'A'.repeat(43) })
    expect(wrong.status).toBe(403)
    const foreign = await browser.post('/sign-in', fields, { origin: 'https://evil.example' })
    expect(foreign.status).toBe(403)
    const cookieless = new Browser(server.url)
    expect((await cookieless.post('/sign-in', fields)).status).toBe(403)
    expect((await browser.post('/sign-in', fields)).status).toBe(303)
  })

  test('open redirect: after sign-in only same-site paths are followed', async () => {
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const response = await signIn(new Browser(server.url), 'alice', PASSWORD, next)
      expect(response.status).toBe(303)
      expect(response.headers.get('location')).toBe('/')
    }
    const ok = await signIn(new Browser(server.url), 'alice', PASSWORD, '/apps?x=1')
    expect(ok.headers.get('location')).toBe('/apps?x=1')
  })

  test('an invite link lets a person choose their password once, and signs them in with it', async () => {
    expect((await cli(server, ['user', 'add', 'bruno'])).code).toBe(0)
    const invite = await cli(server, ['user', 'invite', 'bruno'])
    expect(invite.code).toBe(0)
    const link = new URL(invite.out.trim())
    expect(link.pathname).toMatch(/^\/invite\/[A-Za-z0-9_-]{43}$/)
    const browser = new Browser(server.url)
    const page = await browser.fetch(link.pathname)
    expect(page.status).toBe(200)
    // The invite secret is in the path: never sent to another site as a referrer.
    expect(page.headers.get('referrer-policy')).toBe('same-origin')
    const fields = hiddenFields(await page.text())
    const mismatch = await browser.post(link.pathname, {
      ...fields,
      password: PASSWORD,
      confirm: `${PASSWORD}!`,
    })
    expect(mismatch.status).toBe(400)
    // `?next=` (a same-site path) is where the person lands, signed in: no sign-in form again (issue 28).
    const set = await browser.post(`${link.pathname}?next=/apps`, {
      ...fields,
      password: PASSWORD,
      confirm: PASSWORD,
    })
    expect(set.status).toBe(303)
    expect(set.headers.get('location')).toBe('/apps')
    const me = await browser.fetch('/api/me')
    expect(me.status).toBe(200)
    expect(((await me.json()) as { handle: string }).handle).toBe('bruno')
    // Used once: the same link is refused now.
    expect((await browser.fetch(link.pathname)).status).toBe(410)
    expect((await signIn(new Browser(server.url), 'bruno', PASSWORD)).status).toBe(303)
  })

  test('user invite --document: the link lands the person, signed in, on that document', async () => {
    const added = await cli(server, ['user', 'add', 'fiona'])
    expect(added.code).toBe(0)
    const fiona = await server.services.users.byHandle('fiona')
    if (fiona.kind === 'error') throw new Error(fiona.message)
    const made = await server.services.documents.create(fiona.value.id, { title: 'Onboarding', markdown: '' })
    if (made.kind === 'error') throw new Error(made.message)
    const unknown = await cli(server, ['user', 'invite', 'fiona', '--document', 'no-such-document'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.err).toContain('no-such-document')
    const invite = await cli(server, ['user', 'invite', 'fiona', '--document', made.value.slug])
    expect(invite.code).toBe(0)
    const link = new URL(invite.out.trim())
    expect(link.searchParams.get('next')).toBe(`/d/${made.value.slug}`)
    const browser = new Browser(server.url)
    const target = `${link.pathname}${link.search}`
    const fields = hiddenFields(await (await browser.fetch(target)).text())
    // Its own client address: the sign-in that follows the password counts against the per-address limit.
    const via = { 'x-forwarded-for': '198.51.100.33' }
    const set = await browser.post(target, { ...fields, password: PASSWORD, confirm: PASSWORD }, via)
    expect(set.status).toBe(303)
    expect(set.headers.get('location')).toBe(`/d/${made.value.slug}`)
    expect((await browser.fetch(`/d/${made.value.slug}`)).status).toBe(200)
  })

  test('an older invite stops working once a newer one (or the CLI) set the password: it cannot set it again', async () => {
    expect((await cli(server, ['user', 'add', 'carla'])).code).toBe(0)
    const linkOf = async () => new URL((await cli(server, ['user', 'invite', 'carla'])).out.trim()).pathname
    const older = await linkOf()
    const newer = await linkOf()
    const browser = new Browser(server.url)
    const olderForm = hiddenFields(await (await browser.fetch(older)).text()) // opened before, sent after
    const newerForm = hiddenFields(await (await browser.fetch(newer)).text())
    // Set and signed in: a redirect to the documents (from its own address: the sign-in that follows the
    // password counts against the per-address limit, which earlier tests from loopback have used).
    const via = { 'x-forwarded-for': '198.51.100.31' }
    expect(
      (await browser.post(newer, { ...newerForm, password: PASSWORD, confirm: PASSWORD }, via)).status,
    ).toBe(303)
    // The older link: refused on opening and on sending, with a page that says why and what to do.
    const opened = await browser.fetch(older)
    expect(opened.status).toBe(410)
    const page = await opened.text()
    expect(page).toContain('was replaced: the password of this account was set since it was sent')
    expect(page).toContain('If you set it, sign in; otherwise ask whoever sent the link for a new one')
    const STOLEN = 'the attacker picked this'
    const sent = await browser.post(older, { ...olderForm, password: STOLEN, confirm: STOLEN })
    expect(sent.status).toBe(410)
    const signInVia = async (password: string) => {
      const b = new Browser(server.url)
      const form = hiddenFields(await (await b.fetch('/sign-in')).text())
      return (await b.post('/sign-in', { ...form, handle: 'carla', password }, via)).status
    }
    expect(await signInVia(STOLEN)).toBe(401)
    expect(await signInVia(PASSWORD)).toBe(303)
    // The same when the operator sets the password with the CLI.
    const pending = await linkOf()
    const NEXT = 'set by the operator now'
    expect(
      (await cli(server, ['user', 'set-password', 'carla', 'pw.txt'], { 'pw.txt': `${NEXT}\n` })).code,
    ).toBe(0)
    expect((await browser.fetch(pending)).status).toBe(410)
  })

  test('a signed-in person changes their password: the old one stops working and their other browsers are signed out', async () => {
    // Its own client address (through the loopback proxy's X-Forwarded-For): the sign-in limit is per address.
    const via = { 'x-forwarded-for': '198.51.100.20' }
    const signInVia = async (browser: Browser, password: string) => {
      const page = await (await browser.fetch('/sign-in')).text()
      return browser.post('/sign-in', { ...hiddenFields(page), handle: 'bruno', password }, via)
    }
    const laptop = new Browser(server.url)
    const phone = new Browser(server.url)
    expect((await signInVia(laptop, PASSWORD)).status).toBe(303)
    expect((await signInVia(phone, PASSWORD)).status).toBe(303)
    const NEW = 'a brand new passphrase'
    const form = hiddenFields(await (await laptop.fetch('/account/password')).text())
    const wrong = await laptop.post(
      '/account/password',
      { ...form, current: 'not it at all', password: NEW, confirm: NEW },
      via,
    )
    expect(wrong.status).toBe(400)
    expect(await wrong.text()).toContain('current: the current password is wrong.')
    const forged = await laptop.post(
      '/account/password',
      { ...form, csrf: 'C'.repeat(43), current: PASSWORD, password: NEW, confirm: NEW },
      via,
    )
    expect(forged.status).toBe(403)
    const sentBefore = new URL((await cli(server, ['user', 'invite', 'bruno'])).out.trim()).pathname
    const changed = await laptop.post(
      '/account/password',
      { ...form, current: PASSWORD, password: NEW, confirm: NEW },
      via,
    )
    expect(changed.status).toBe(303)
    expect((await laptop.fetch('/apps')).status).toBe(200)
    expect((await phone.fetch('/apps')).status).toBe(303)
    expect((await laptop.fetch(sentBefore)).status).toBe(410) // an invite sent before cannot set it back
    expect((await signInVia(new Browser(server.url), PASSWORD)).status).toBe(401)
    expect((await signInVia(new Browser(server.url), NEW)).status).toBe(303)
  })

  test('password guessing: past SIGN_INS_PER_MINUTE attempts from one address, sign-in answers 429', async () => {
    const statuses: number[] = []
    for (let i = 0; i <= SIGN_INS_PER_MINUTE; i++) {
      statuses.push((await signIn(new Browser(server.url), 'alice', `guess number ${i} here`)).status)
    }
    expect(statuses).toContain(429)
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true)
  })

  test('password guessing from rotating addresses: past SIGN_IN_ATTEMPTS_PER_ACCOUNT the account pauses, the right password too, until the window ends', async () => {
    // Caught: 30 guesses from 30 addresses, then the right password was accepted (the only limit was
    // per address).
    for (const handle of ['dora', 'emil']) {
      const user = unwrap(await server.services.users.add(handle))
      expect((await server.auth.accounts.setPassword(user.id, PASSWORD)).kind).toBe('ok')
    }
    const from = async (address: string, password: string) => {
      const browser = new Browser(server.url)
      const form = hiddenFields(await (await browser.fetch('/sign-in')).text())
      return browser.post('/sign-in', { ...form, handle: 'dora', password }, { 'x-forwarded-for': address })
    }
    for (let i = 0; i < SIGN_IN_ATTEMPTS_PER_ACCOUNT; i++)
      expect((await from(`203.0.113.${i + 1}`, `wrong guess number ${i}`)).status).toBe(401)
    const paused = await from('203.0.113.200', PASSWORD)
    expect(paused.status).toBe(429)
    const retryAfter = Number(paused.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(SIGN_IN_LOCK_WINDOW_SECONDS)
    const page = await paused.text()
    expect(page).toMatch(
      /sign-in to it is paused until \d\d:\d\d UTC \(in \d+ minutes?\), even with the right password/,
    )
    // Another account is not paused by it.
    const other = new Browser(server.url)
    const form = hiddenFields(await (await other.fetch('/sign-in')).text())
    expect(
      (
        await other.post(
          '/sign-in',
          { ...form, handle: 'emil', password: PASSWORD },
          { 'x-forwarded-for': '203.0.113.201' },
        )
      ).status,
    ).toBe(303)
    // The window ends (its start moved back by one window, as time would): the owner signs in, and the
    // count starts again.
    const prisma = server.services.db.prisma
    const moved = await prisma.$executeRaw`UPDATE auth_rate_limits
      SET last_request = last_request - ${SIGN_IN_LOCK_WINDOW_SECONDS * 1000} WHERE key = 'sign-in-account:dora'`
    expect(moved).toBe(1)
    expect((await from('203.0.113.202', PASSWORD)).status).toBe(303)
    expect(await prisma.authRateLimit.count({ where: { key: 'sign-in-account:dora' } })).toBe(0)
  })

  test('expired sessions, codes and tokens, and refresh tokens rotated long ago, are swept; live ones stay', async () => {
    const prisma = server.services.db.prisma
    const alice = await prisma.user.findUniqueOrThrow({ where: { handle: 'alice' } })
    const longAgo = new Date(Date.now() - 3 * 86_400_000)
    const soon = new Date(Date.now() + 3_600_000)
    await prisma.session.createMany({
      data: [
        { id: 'old-s', token: 'old-s', userId: alice.id, expiresAt: longAgo },
        { id: 'live-s', token: 'live-s', userId: alice.id, expiresAt: soon },
      ],
    })
    await prisma.verification.create({
      data: { id: 'old-v', identifier: 'x', value: 'y', expiresAt: longAgo },
    })
    await prisma.oauthClient.create({
      data: { id: 'c1', clientId: 'c1', redirectUris: ['http://127.0.0.1:1/cb'], scopes: ['read'] },
    })
    const token = { clientId: 'c1', userId: alice.id, scopes: ['read'] }
    await prisma.oauthRefreshToken.create({
      data: {
        id: 'r-old',
        token: 'r-old',
        ...token,
        expiresAt: soon,
        createdAt: longAgo,
        rotatedAt: longAgo,
      },
    })
    await prisma.oauthAccessToken.createMany({
      data: [
        { id: 'a-old', token: 'a-old', ...token, expiresAt: longAgo, createdAt: longAgo },
        { id: 'a-live', token: 'a-live', ...token, expiresAt: soon, createdAt: new Date() },
      ],
    })
    await server.auth.sweep()
    expect(await prisma.session.findUnique({ where: { id: 'old-s' } })).toBeNull()
    expect(await prisma.session.findUnique({ where: { id: 'live-s' } })).not.toBeNull()
    expect(await prisma.verification.findUnique({ where: { id: 'old-v' } })).toBeNull()
    expect(await prisma.oauthRefreshToken.findUnique({ where: { id: 'r-old' } })).toBeNull()
    expect(await prisma.oauthAccessToken.findUnique({ where: { id: 'a-old' } })).toBeNull()
    expect(await prisma.oauthAccessToken.findUnique({ where: { id: 'a-live' } })).not.toBeNull()
  })

  test('pages refuse framing and caching', async () => {
    const response = await new Browser(server.url).fetch('/sign-in')
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(response.headers.get('cache-control')).toBe('no-store')
  })
})

describe(`sign-in behind https (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer(
    (s) => {
      server = s
    },
    { publicUrl: 'https://docs.example.org' },
  )

  test('cookies are Secure when the public URL is https', async () => {
    const response = await fetch(`${server.url}/sign-in`, { headers: { host: 'docs.example.org' } })
    expect(response.status).toBe(200)
    const csrf = response.headers.getSetCookie().find((c) => c.startsWith('collab.csrf='))
    expect(csrf).toMatch(/Secure/)
    expect(csrf).toMatch(/HttpOnly/)
    expect(csrf).toMatch(/SameSite=Strict/)
  })
})
