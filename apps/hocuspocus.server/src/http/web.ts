/**
 * The web editor for people: `/` (their documents) and `/d/<slug>` (one document) answer the app's one
 * HTML page to a signed-in browser, and a sign-in redirect to anyone else; `/assets/<file>` serves the
 * bundle (web-bundle.ts). The page's script talks to /api and the WebSocket with the browser's session
 * cookie (auth/session-principal.ts). The one part of a document rendered here is `/d/<slug>`'s first
 * screen (first-screen.ts): its first blocks, read-only, shown until the editor holds the live document.
 */
import { Hono } from 'hono'
import { escapeHtml, messagePage } from '../auth/pages.ts'
import type { Principal } from '../auth/tokens.ts'
import type { Logger } from '../logger.ts'
import type { FirstScreenOf, FirstScreenPage } from './first-screen.ts'
import { type WebBundle, webBundle } from './web-bundle.ts'

export type WebApp = {
  router: Hono
  /** The bundle, built (or read from its cache) on first use; resolves once it is ready. */
  bundle: () => Promise<WebBundle>
}

/** Where document embeds may come from (the schema's YouTube node and media embeds). */
const FRAME_SOURCES = 'https://www.youtube-nocookie.com https://www.youtube.com https://player.vimeo.com'

/** The page's headers: its own scripts only, no framing, no referrer to other sites, never cached. */
function pageHeaders(origin: string): Record<string, string> {
  const socket = origin.replace(/^http/, 'ws')
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': [
      "default-src 'self'",
      "script-src 'self'",
      // Carets and TipTap set style attributes; no inline script is ever allowed.
      "style-src 'self' 'unsafe-inline'",
      // Images in documents are links to anywhere (as in any Markdown viewer).
      'img-src * data: blob:',
      `connect-src 'self' ${socket}`,
      `frame-src ${FRAME_SOURCES}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ].join('; '),
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  }
}

/**
 * The site's icon: a page with two coloured carets, as SVG (browsers take an SVG icon at /favicon.ico when
 * it says so in its type, and the page links /favicon.svg). Browsers ask for /favicon.ico on every site;
 * a 404 there filled the console of every page.
 */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect x="4" y="2" width="24" height="28" rx="3" fill="#fff" stroke="#2459c8" stroke-width="2"/>
<path d="M9 9h14M9 14h10M9 19h14M9 24h8" stroke="#888" stroke-width="2"/>
<path d="M20 11v8" stroke="#c62828" stroke-width="2.5"/><path d="M18 21v7" stroke="#1a7f37" stroke-width="2.5"/>
</svg>
`

/** JSON inside a <script> element: `<` escaped, so no text can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c')

/**
 * The first screen inside the page's layout: read-only text (nothing in it is editable), replaced by the
 * editor once it holds the live document (apps/web/src/editor.ts takes the element by its id).
 */
function firstScreenMarkup(screen: FirstScreenPage): string {
  const more = screen.more
    ? '<p class="first-screen-more" role="status">Opening the rest of the document…</p>'
    : ''
  return `<main class="page"><div class="editor" id="first-screen" data-testid="first-screen">\
<div class="prose" aria-label="${escapeHtml(screen.title)} (opening, read-only)">${screen.html}</div>${more}</div></main>`
}

export function createWebApp(deps: {
  logger: Logger
  session: { principal: (headers: Headers) => Promise<Principal | null>; origin: () => string }
  signInEnabled: () => boolean
  /** A document's first screen for `/d/<slug>`, or null (then the page shows "Loading…" until its editor). */
  firstScreen?: FirstScreenOf
}): WebApp {
  const bundle = webBundle(deps.logger)
  const router = new Hono()

  async function page(request: Request, path: string, slug?: string): Promise<Response> {
    if (!deps.signInEnabled()) {
      return new Response(
        messagePage(
          'Sign-in is off',
          'The web editor needs sign-in, which needs the server to be reached over https: its operator sets PUBLIC_URL to its https address.',
        ),
        { status: 503, headers: pageHeaders(deps.session.origin()) },
      )
    }
    const principal = await deps.session.principal(request.headers)
    if (!principal) {
      return new Response(null, {
        status: 303,
        headers: { Location: `/sign-in?next=${encodeURIComponent(path)}`, 'Cache-Control': 'no-store' },
      })
    }
    const [built, screen] = await Promise.all([
      bundle(),
      slug === undefined ? null : (deps.firstScreen?.(slug, principal) ?? null),
    ])
    const boot = { handle: principal.user.handle, name: principal.user.name }
    const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(screen?.title || 'Documents')}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${built.styles.map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`).join('\n')}
</head><body><div id="app">${screen ? firstScreenMarkup(screen) : '<p class="loading">Loading…</p>'}</div>
<script type="application/json" id="boot">${scriptJson(boot)}</script>
<script type="module" src="${escapeHtml(built.script)}"></script>
</body></html>`
    return new Response(body, { status: 200, headers: pageHeaders(deps.session.origin()) })
  }

  router.get('/', (c) => page(c.req.raw, '/'))
  router.get('/d/:slug', (c) =>
    page(c.req.raw, `/d/${encodeURIComponent(c.req.param('slug'))}`, c.req.param('slug')),
  )

  const icon = () =>
    new Response(FAVICON_SVG, {
      headers: {
        'Content-Type': 'image/svg+xml',
        'Cache-Control': 'public, max-age=86400',
        'X-Content-Type-Options': 'nosniff',
      },
    })
  router.get('/favicon.ico', icon)
  router.get('/favicon.svg', icon)

  router.get('/assets/:name', async (c) => {
    const built = await bundle()
    const file = built.files.get(c.req.param('name'))
    if (!file) return c.notFound()
    const headers: Record<string, string> = {
      'Content-Type': file.type,
      // Names carry their content hash: a new build has new names.
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
      Vary: 'Accept-Encoding',
    }
    if (file.gzip && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '')) {
      return c.body(file.gzip, 200, { ...headers, 'Content-Encoding': 'gzip' })
    }
    return c.body(file.bytes, 200, headers)
  })

  return { router, bundle }
}
