/**
 * Invite links (/invite/<token>[?next=/d/<slug>]): a new person sets their password and is signed in with
 * it at once, landing on `next` (a same-site path: their documents by default), not on a sign-in form.
 */
import type { Context, Hono } from 'hono'
import { INVITE_GONE } from '../accounts.ts'
import { CSRF_FIELD, csrfToken, csrfValid } from '../csrf.ts'
import { invitePage, messagePage, signInPage } from '../pages.ts'
import { type Env, html, type RouteKit, safeNext } from './kit.ts'

export function inviteRoutes(router: Hono<Env>, kit: RouteKit): void {
  const { deps, secure, origin, formLimit, refusedForm, callAuth, redirectWith } = kit
  const { accounts } = deps

  const inviteGone = (c: Context) =>
    html(
      c,
      messagePage(
        'Invite no longer valid',
        `This invite link no longer works: ${INVITE_GONE.replace(/^this link is /, 'it is ')}.`,
      ),
      410,
    )

  router.get('/invite/:token', async (c) => {
    const user = await accounts.inviteUser(c.req.param('token'))
    if (!user) return inviteGone(c)
    return html(c, invitePage({ csrf: csrfToken(c, secure()), handle: user.handle }))
  })

  router.post('/invite/:token', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const token = c.req.param('token')
    const user = await accounts.inviteUser(token)
    if (!user) return inviteGone(c)
    const password = typeof form.password === 'string' ? form.password : ''
    const again = (error: string) =>
      html(c, invitePage({ csrf: csrfToken(c, secure()), handle: user.handle, error }), 400)
    if (password !== form.confirm) return again('confirm: the two passwords differ; type the same one twice.')
    const result = await accounts.acceptInvite(token, password)
    if (result.kind === 'error') return result.code === 'not_found' ? inviteGone(c) : again(result.message)
    // The form posts back to the link itself, query included: `next` is where the person goes now.
    const next = safeNext(c.req.query('next'))
    const handle = result.value.handle
    const signedIn = await callAuth(c, '/sign-in/username', { username: handle, password })
    if (signedIn.ok) return redirectWith(signedIn, next)
    // Signing in failed (a rate limit, a database hiccup): the password is set, so the form finishes it.
    deps.logger.warn({ status: signedIn.status }, 'invite: the password is set but signing in failed')
    return html(
      c,
      signInPage({
        csrf: csrfToken(c, secure()),
        oauthQuery: '',
        next,
        handle,
        notice: 'Your password is set: sign in with it.',
      }),
    )
  })
}
