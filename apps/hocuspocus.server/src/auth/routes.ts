/**
 * The HTTP side of sign-in and OAuth, put together from its groups in routes/: our pages (sign-in and
 * sign-out, consent, connected apps, password change, invites) and the Better Auth endpoints clients use,
 * forwarded one by one (oauth-endpoints.ts). While the origin cannot host sign-in, every one answers 503.
 */
import { Hono } from 'hono'
import { AUTH_BASE_PATH } from './better-auth.ts'
import { messagePage } from './pages.ts'
import { connectedAppsRoutes } from './routes/connected-apps.ts'
import { consentRoutes } from './routes/consent.ts'
import { inviteRoutes } from './routes/invite.ts'
import { type AuthRoutesDeps, createRouteKit, type Env, html } from './routes/kit.ts'
import { oauthEndpointRoutes } from './routes/oauth-endpoints.ts'
import { passwordRoutes } from './routes/password.ts'
import { signInRoutes } from './routes/sign-in.ts'

export function authRoutes(deps: AuthRoutesDeps): Hono<Env> {
  const router = new Hono<Env>()
  const kit = createRouteKit(deps)

  for (const path of [
    '/sign-in',
    '/sign-out',
    '/consent',
    '/apps',
    '/apps/*',
    '/account/*',
    '/invite/*',
    `${AUTH_BASE_PATH}/*`,
    '/.well-known/oauth-authorization-server/*',
    '/.well-known/openid-configuration/*',
  ]) {
    router.use(path, async (c, next) => {
      if (deps.enabled()) return next()
      return html(
        c,
        messagePage(
          'Sign-in is off',
          'Sign-in needs the server to be reached over https: its operator sets PUBLIC_URL to its https address.',
        ),
        503,
      )
    })
  }

  signInRoutes(router, kit)
  consentRoutes(router, kit)
  connectedAppsRoutes(router, kit)
  passwordRoutes(router, kit)
  inviteRoutes(router, kit)
  // Last: it ends with the catch-all that keeps the library's other endpoints unreachable.
  oauthEndpointRoutes(router, kit)
  return router
}
