/**
 * The consent page (/consent): a signed-in person approves what an OAuth app asked for, or narrows it
 * (read comes with any approval), or refuses; Better Auth records the answer.
 */
import type { Hono } from 'hono'
import { redirectHostsOf } from '../accounts.ts'
import { MCP_SCOPES } from '../better-auth.ts'
import { CSRF_FIELD, csrfToken, csrfValid } from '../csrf.ts'
import { consentPage, messagePage } from '../pages.ts'
import { type Env, html, type RouteKit, signedQueryOf } from './kit.ts'

export function consentRoutes(router: Hono<Env>, kit: RouteKit): void {
  const { deps, secure, origin, formLimit, callAuth, redirectWith, nextLocation, signedInUser, refusedForm } =
    kit
  const { prisma, logger } = deps

  router.get('/consent', async (c) => {
    const url = new URL(c.req.url)
    const user = await signedInUser(c)
    if (!user) return c.redirect(`/sign-in${url.search}`, 303)
    const search = url.searchParams
    const clientId = search.get('client_id') ?? ''
    const client = clientId
      ? await prisma.oauthClient.findUnique({
          where: { clientId },
          select: { name: true, redirectUris: true, disabled: true },
        })
      : null
    const oauthQuery = signedQueryOf(search)
    if (!client || client.disabled || !oauthQuery)
      return html(
        c,
        messagePage('Unknown request', 'This authorization request is not valid: start again from your app.'),
        400,
      )
    const asked = new Set((search.get('scope') ?? '').split(' '))
    const redirectUri = search.get('redirect_uri')
    const redirectHost =
      redirectUri && client.redirectUris.includes(redirectUri)
        ? redirectHostsOf([redirectUri])[0]!
        : redirectHostsOf(client.redirectUris).join(', ')
    return html(
      c,
      consentPage({
        csrf: csrfToken(c, secure()),
        oauthQuery,
        clientName: client.name || 'An unnamed app',
        clientId,
        redirectHost,
        handle: user.handle,
        askedWrite: asked.has('write'),
        askedSuggest: asked.has('suggest'),
      }),
    )
  })

  router.post('/consent', formLimit, async (c) => {
    const form = await c.req.parseBody()
    if (!csrfValid(c, form[CSRF_FIELD], origin())) return refusedForm(c)
    const oauthQuery = typeof form.oauth_query === 'string' ? form.oauth_query : ''
    const asked = new Set((new URLSearchParams(oauthQuery).get('scope') ?? '').split(' ').filter(Boolean))
    const chosen = new Set(typeof form.access === 'string' ? form.access.split(' ') : [])
    // The person may narrow what the app asked for, never widen it; read comes with any approval, and
    // write or suggest as chosen (never both: the form offers one or the other).
    const scopes = [...asked].filter(
      (s) => !(MCP_SCOPES as readonly string[]).includes(s) || s === 'read' || chosen.has(s),
    )
    const accept = form.decision === 'allow'
    const response = await callAuth(c, '/oauth2/consent', {
      accept,
      ...(accept ? { scope: scopes.join(' ') } : {}),
      oauth_query: oauthQuery,
    })
    const location = response.ok ? await nextLocation(response) : null
    if (!location) {
      logger.info({ status: response.status }, 'consent refused by the authorization server')
      return html(
        c,
        messagePage(
          'Request expired',
          'This authorization request expired or is not valid: start again from your app.',
        ),
        400,
      )
    }
    return redirectWith(response, location)
  })
}
