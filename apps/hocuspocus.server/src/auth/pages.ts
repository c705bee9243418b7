/**
 * The sign-in, consent, connected-apps and invite pages: small server-rendered HTML, no script, every
 * value escaped. Each form carries the CSRF token (csrf.ts). Headers forbid framing (a consent page in
 * someone else's frame could be clicked through), referrers to other sites (invite links hold a secret)
 * and caching.
 */
import type { ConnectedApp } from './accounts.ts'

export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  // same-origin, not no-referrer: with no-referrer Chromium sends `Origin: null` on our own form posts,
  // which the CSRF check refuses; other sites (an app's callback) still get no referrer (invite secrets).
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#111}
label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.4rem;font:inherit}
button{font:inherit;padding:.4rem 1rem;margin:.8rem .5rem 0 0}.error{color:#a00;border:1px solid #a00;padding:.5rem}
.note{color:#444}fieldset{border:1px solid #ccc;margin:1rem 0}table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:.3rem;border-bottom:1px solid #ddd}code{overflow-wrap:anywhere}`

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>`
}

const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`
const errorBox = (error?: string) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '')

export function signInPage(p: {
  csrf: string
  oauthQuery: string
  next: string
  error?: string
  notice?: string
  handle?: string
}): string {
  return layout(
    'Sign in',
    `${errorBox(p.error)}${p.notice ? `<p class="note" role="status">${escapeHtml(p.notice)}</p>` : ''}
<form method="post" action="/sign-in">
${hidden('csrf', p.csrf)}${hidden('oauth_query', p.oauthQuery)}${hidden('next', p.next)}
<label for="handle">Handle</label>
<input type="text" id="handle" name="handle" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="32" value="${escapeHtml(p.handle ?? '')}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required maxlength="256">
<button type="submit">Sign in</button>
</form>
<p class="note">No password yet? Ask the server's operator for an invite link (<code>bun run cli -- user invite HANDLE</code>).</p>`,
  )
}

export function consentPage(p: {
  csrf: string
  oauthQuery: string
  clientName: string
  clientId: string
  redirectHost: string
  handle: string
  askedWrite: boolean
  /** The app asked for `suggest`: its edits may land as suggestions the person accepts or rejects. */
  askedSuggest?: boolean
}): string {
  const suggest = p.askedSuggest
    ? `<label><input type="radio" name="access" value="read suggest"${p.askedWrite ? '' : ' checked'}> Read your documents and propose changes that you accept or reject</label>\n`
    : ''
  const choices =
    p.askedWrite || p.askedSuggest
      ? `<fieldset><legend>Allow it to</legend>
<label><input type="radio" name="access" value="read" > Read your documents only</label>
${suggest}${p.askedWrite ? '<label><input type="radio" name="access" value="read write" checked> Read and change your documents</label>\n' : ''}</fieldset>`
      : `<p>It asks to <strong>read</strong> your documents (not change them).</p>${hidden('access', 'read')}`
  return layout(
    'Connect an app',
    `<p><strong>${escapeHtml(p.clientName)}</strong> wants to use your documents as <strong>${escapeHtml(p.handle)}</strong>.</p>
<p class="note">After you decide, you go back to <strong>${escapeHtml(p.redirectHost)}</strong>. The app named itself; the address it returns to is what identifies it. App id: <code>${escapeHtml(p.clientId)}</code>.</p>
<form method="post" action="/consent">
${hidden('csrf', p.csrf)}${hidden('oauth_query', p.oauthQuery)}
${choices}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
<p class="note">You can disconnect it at any time from <a href="/apps">your connected apps</a>.</p>`,
  )
}

export function appsPage(p: { csrf: string; handle: string; apps: ConnectedApp[]; notice?: string }): string {
  const rows = p.apps
    .map(
      (
        app,
      ) => `<tr><td>${escapeHtml(app.name)}<br><span class="note">${escapeHtml(app.redirectHosts.join(', '))}</span></td>
<td>${escapeHtml(app.scopes.join(', '))}</td><td>${escapeHtml(app.connectedAt.toISOString().slice(0, 10))}</td>
<td><form method="post" action="/apps/revoke">${hidden('csrf', p.csrf)}${hidden('client_id', app.clientId)}
<button type="submit" aria-label="Disconnect ${escapeHtml(app.name)}">Disconnect</button></form></td></tr>`,
    )
    .join('\n')
  return layout(
    'Connected apps',
    `<p>Signed in as <strong>${escapeHtml(p.handle)}</strong>.</p>
${p.notice ? `<p class="note" role="status">${escapeHtml(p.notice)}</p>` : ''}
${
  p.apps.length
    ? `<table><thead><tr><th scope="col">App</th><th scope="col">Access</th><th scope="col">Since</th><th scope="col"></th></tr></thead><tbody>
${rows}
</tbody></table>`
    : '<p>No apps are connected.</p>'
}
<p><a href="/account/password">Change your password</a></p>
<form method="post" action="/sign-out">${hidden('csrf', p.csrf)}<button type="submit">Sign out</button></form>`,
  )
}

export function passwordPage(p: { csrf: string; handle: string; error?: string }): string {
  return layout(
    'Change your password',
    `${errorBox(p.error)}<p>Signed in as <strong>${escapeHtml(p.handle)}</strong>. Your other browsers are signed out.</p>
<form method="post" action="/account/password">
${hidden('csrf', p.csrf)}
<input type="text" name="handle" autocomplete="username" value="${escapeHtml(p.handle)}" hidden readonly>
<label for="current">Current password</label>
<input type="password" id="current" name="current" autocomplete="current-password" required maxlength="256">
<label for="password">New password (at least 12 characters)</label>
<input type="password" id="password" name="password" autocomplete="new-password" required minlength="12" maxlength="256">
<label for="confirm">Repeat it</label>
<input type="password" id="confirm" name="confirm" autocomplete="new-password" required minlength="12" maxlength="256">
<button type="submit">Change password</button>
</form>
<p><a href="/apps">Back to your connected apps</a></p>`,
  )
}

export function invitePage(p: { csrf: string; handle: string; error?: string }): string {
  return layout(
    'Choose your password',
    `${errorBox(p.error)}<p>This sets the password of <strong>${escapeHtml(p.handle)}</strong>. The link works once.</p>
<form method="post">
${hidden('csrf', p.csrf)}
<input type="text" name="handle" autocomplete="username" value="${escapeHtml(p.handle)}" hidden readonly>
<label for="password">New password (at least 12 characters)</label>
<input type="password" id="password" name="password" autocomplete="new-password" required minlength="12" maxlength="256">
<label for="confirm">Repeat it</label>
<input type="password" id="confirm" name="confirm" autocomplete="new-password" required minlength="12" maxlength="256">
<button type="submit">Set password</button>
</form>`,
  )
}

/**
 * An error a person meets in the browser: what happened, what to do, and the technical code (for the
 * app's maker or the operator) in small print. Links back to the documents.
 */
export function errorPage(p: {
  title: string
  what: string
  todo: string
  code?: string
  detail?: string
}): string {
  const technical = p.code
    ? `<p class="note">Technical detail: <code>${escapeHtml(p.code)}</code>${p.detail ? ` — ${escapeHtml(p.detail)}` : ''}</p>`
    : ''
  return layout(
    p.title,
    `<p role="alert">${escapeHtml(p.what)}</p><p><strong>What to do:</strong> ${escapeHtml(p.todo)}</p>${technical}<p><a href="/">Your documents</a></p>`,
  )
}

export function messagePage(title: string, message: string): string {
  return layout(title, `<p>${escapeHtml(message)}</p><p><a href="/sign-in">Sign in</a></p>`)
}
