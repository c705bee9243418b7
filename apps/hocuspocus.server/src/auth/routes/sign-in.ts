/**
 * Signing in (/sign-in: a handle and a password, for the web editor or an OAuth authorization request)
 * and out (/sign-out). Sign-in attempts are counted per account before the password is checked.
 */
import type { Hono } from 'hono'
import { accountSignInLock } from '../account-lock.ts'
import { CSRF_FIELD, csrfToken, csrfValid } from '../csrf.ts'
import { signInPage } from '../pages.ts'
import { type Env, html, type RouteKit, safeNext, signedQueryOf } from './kit.ts'

export function signInRoutes(router: Hono<Env>, kit: RouteKit): void {
  const { deps, secure, origin, formLimit, callAuth, redirectWith, nextLocation, refusedForm } = kit
  const accountLock = accountSignInLock(deps.prisma)

  router.get('/sign-in', (c) => {
    const search = new URL(c.req.url).searchParams
    return html(
      c,
      signInPage({
        csrf: csrfToken(c, secure()),
        oauthQuery: signedQueryOf(search),
        next: safeNext(search.get('next')),
      }),
    )
  })

  router.post('/sign-in', formLimit, async (c) => {
    const form = await c.req.parseBody()
    const csrf = csrfToken(c, secure())
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const handle = typeof form.handle === 'string' ? form.handle.trim().toLowerCase() : ''
    const password = typeof form.password === 'string' ? form.password : ''
    const oauthQuery = typeof form.oauth_query === 'string' ? form.oauth_query : ''
    const next = safeNext(form.next)
    const again = (error: string, status: number) =>
      html(c, signInPage({ csrf, oauthQuery, next, error, handle }), status)
    if (!handle || !password) return again('handle and password: both are required.', 400)
    // Counted per account before the password is checked, from whatever address (account-lock.ts).
    const attempt = await accountLock.attempt(handle)
    if (!attempt.allowed) {
      const until = new Date(Date.now() + attempt.retryAfter * 1000).toISOString().slice(11, 16)
      const minutes = Math.ceil(attempt.retryAfter / 60)
      const page = again(
        `Too many sign-in attempts for this account: sign-in to it is paused until ${until} UTC (in ${minutes} minute${minutes === 1 ? '' : 's'}), even with the right password. Try again then; if these attempts were not yours, someone is guessing your password.`,
        429,
      )
      page.headers.set('Retry-After', String(attempt.retryAfter))
      return page
    }
    const response = await callAuth(c, '/sign-in/username', {
      username: handle,
      password,
      ...(oauthQuery ? { oauth_query: oauthQuery } : {}),
    })
    if (response.status === 429) {
      await accountLock.notTried(handle)
      return again('Too many attempts from here: wait a minute, then try again.', 429)
    }
    if (response.ok) await accountLock.succeeded(handle)
    if (response.status === 400 && oauthQuery)
      return again('This sign-in request expired or was altered: start again from your app.', 400)
    if (!response.ok) return again('The handle or the password is wrong.', 401)
    const location = oauthQuery ? await nextLocation(response) : null
    return redirectWith(response, location ?? next)
  })

  router.post('/sign-out', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const session = await deps.sessionPrincipal?.(c.req.raw.headers)
    const response = await callAuth(c, '/sign-out', {})
    // The web editor's open sockets of this session close now, not at the next periodic re-check.
    if (session) deps.signedOut?.(session.tokenId)
    return redirectWith(response, '/sign-in')
  })
}
