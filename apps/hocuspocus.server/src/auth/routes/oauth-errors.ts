/**
 * OAuth errors a person meets in the browser. An app sends the person to /auth/oauth2/authorize; when the
 * request is refused before it can go back to the app (an app id whose metadata document cannot be
 * fetched, a resource that is not this server's /mcp, a redirect address the app never registered),
 * Better Auth answers JSON, which a browser shows raw. A browser's navigation gets a page instead: what
 * happened, in words, and what to do. Programs (no text/html in Accept) keep the JSON.
 */
import { errorPage, PAGE_HEADERS } from '../pages.ts'

type Explained = { title: string; what: string; todo: string }

/** Whether the request is a browser showing a page (not a program reading JSON). */
export function wantsPage(headers: Headers): boolean {
  return headers.get('sec-fetch-mode') === 'navigate' || /\btext\/html\b/.test(headers.get('accept') ?? '')
}

/** The explanation of an OAuth error code (RFC 6749, RFC 8707) for a person; `mcpUrl` is this server's /mcp. */
export function explainOAuthError(code: string, description: string, mcpUrl: string): Explained {
  switch (code) {
    case 'invalid_target':
      return {
        title: 'The app asked for another address',
        what: `The app asked for access to a server address other than this one's (${mcpUrl}). Addresses must match exactly: localhost and 127.0.0.1 are different addresses.`,
        todo: `Set the server address in the app to exactly ${mcpUrl}, then connect again from the app.`,
      }
    case 'invalid_client':
      return {
        title: 'The app is not known here',
        what: /metadata|fetch/i.test(description)
          ? "The app identifies itself by a web address, and its description could not be fetched from there (it must be a public https address that answers with the app's metadata)."
          : 'This server does not know the app that sent you here, or it was disconnected or disabled.',
        todo: 'Connect again from the app, which registers it anew. If it keeps failing, tell the app’s maker the technical detail below.',
      }
    case 'invalid_redirect':
    case 'invalid_redirect_uri':
      return {
        title: 'The app’s return address is not registered',
        what: 'The app asked to send you back to an address it did not register, so the request was stopped: your documents stay private.',
        todo: 'Start again from the app. If it keeps failing, tell the app’s maker the technical detail below.',
      }
    case 'invalid_scope':
      return {
        title: 'The app asked for permissions this server does not give',
        what: 'This server grants apps "read" or "read write" access to your documents, nothing else.',
        todo: 'Start again from the app; if it keeps asking for other permissions, tell its maker.',
      }
    case 'access_denied':
      return {
        title: 'Not connected',
        what: 'The app was not given access to your documents.',
        todo: 'Nothing, if that was your choice. To connect it, start again from the app and choose Allow.',
      }
    default:
      return {
        title: 'The app’s request was refused',
        what: 'The app sent you here with a request this server could not accept, so nothing was shared with it.',
        todo: 'Start again from the app. If it keeps failing, tell the app’s maker the technical detail below.',
      }
  }
}

/** The page for an OAuth error code and description. */
export function oauthErrorPage(code: string, description: string, mcpUrl: string): string {
  const shownCode = code.slice(0, 100)
  return errorPage({
    ...explainOAuthError(shownCode, description, mcpUrl),
    code: shownCode,
    detail: description.slice(0, 300) || undefined,
  })
}

/**
 * A JSON error answer of the authorization endpoint as a page, when a browser asked; anything else
 * (success, redirects, programs) passes unchanged.
 */
export async function asErrorPage(request: Request, response: Response, mcpUrl: string): Promise<Response> {
  if (response.status < 400 || !wantsPage(request.headers)) return response
  if (!/json/.test(response.headers.get('content-type') ?? '')) return response
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { error?: unknown; error_description?: unknown; message?: unknown } | null
  const code = typeof body?.error === 'string' ? body.error : 'invalid_request'
  const description =
    typeof body?.error_description === 'string'
      ? body.error_description
      : typeof body?.message === 'string'
        ? body.message
        : ''
  return new Response(oauthErrorPage(code, description, mcpUrl), {
    status: response.status,
    headers: PAGE_HEADERS,
  })
}
