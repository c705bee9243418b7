/**
 * Changing one's password (/account/password): the current one, the new one twice; other sessions are
 * signed out and invite links sent before the change stop working.
 */
import type { Hono } from 'hono'
import { CSRF_FIELD, csrfToken, csrfValid } from '../csrf.ts'
import { passwordPage } from '../pages.ts'
import { passwordProblem } from '../passwords.ts'
import { type Env, html, type RouteKit } from './kit.ts'

export function passwordRoutes(router: Hono<Env>, kit: RouteKit): void {
  const { deps, secure, origin, formLimit, callAuth, redirectWith, signedInUser, refusedForm } = kit
  const { accounts } = deps

  router.get('/account/password', async (c) => {
    const user = await signedInUser(c)
    if (!user) return c.redirect('/sign-in?next=/account/password', 303)
    return html(c, passwordPage({ csrf: csrfToken(c, secure()), handle: user.handle }))
  })

  router.post('/account/password', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const user = await signedInUser(c)
    if (!user) return c.redirect('/sign-in?next=/account/password', 303)
    const again = (error: string, status: number) =>
      html(c, passwordPage({ csrf: csrfToken(c, secure()), handle: user.handle, error }), status)
    const password = typeof form.password === 'string' ? form.password : ''
    if (password !== form.confirm)
      return again('confirm: the two new passwords differ; type the same one twice.', 400)
    const problem = passwordProblem(password)
    if (problem) return again(`${problem}; choose another.`, 400)
    const response = await callAuth(c, '/change-password', {
      currentPassword: typeof form.current === 'string' ? form.current : '',
      newPassword: password,
      revokeOtherSessions: true,
    })
    if (response.status === 429)
      return again('Too many attempts from here: wait a minute, then try again.', 429)
    if (!response.ok) return again('current: the current password is wrong.', 400)
    // A link sent before the change must not set the password back.
    await accounts.endInvites(user.id)
    return redirectWith(response, '/apps')
  })
}
