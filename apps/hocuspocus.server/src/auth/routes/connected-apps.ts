/** The connected apps page (/apps): the OAuth apps a signed-in person approved, and disconnecting one. */
import type { Hono } from 'hono'
import { CSRF_FIELD, csrfToken, csrfValid } from '../csrf.ts'
import { appsPage } from '../pages.ts'
import { type Env, html, type RouteKit } from './kit.ts'

export function connectedAppsRoutes(router: Hono<Env>, kit: RouteKit): void {
  const { deps, secure, origin, formLimit, signedInUser, refusedForm } = kit
  const { accounts } = deps

  router.get('/apps', async (c) => {
    const user = await signedInUser(c)
    if (!user) return c.redirect('/sign-in?next=/apps', 303)
    return html(
      c,
      appsPage({ csrf: csrfToken(c, secure()), handle: user.handle, apps: await accounts.apps(user.id) }),
    )
  })

  router.post('/apps/revoke', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const user = await signedInUser(c)
    if (!user) return c.redirect('/sign-in?next=/apps', 303)
    const clientId = typeof form.client_id === 'string' ? form.client_id : ''
    const result = await accounts.revokeApp(user.id, clientId)
    const notice =
      result.kind === 'ok'
        ? 'The app was disconnected: its next request is refused.'
        : 'That app was not connected.'
    return html(
      c,
      appsPage({
        csrf: csrfToken(c, secure()),
        handle: user.handle,
        apps: await accounts.apps(user.id),
        notice,
      }),
    )
  })
}
