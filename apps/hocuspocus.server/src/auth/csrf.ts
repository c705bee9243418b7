/**
 * CSRF protection for every form (sign-in, consent, revoke, sign-out, invite): a random token in an
 * HttpOnly, SameSite=Strict cookie, repeated in a hidden field, compared in constant time (double
 * submit). A cross-site page can make a browser post a form but cannot read or set this cookie, so
 * it cannot supply the matching field. An Origin header, when the browser sends one, must be ours too.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Context } from 'hono'
import { getCookie, setCookie } from 'hono/cookie'

export const CSRF_COOKIE = 'collab.csrf'
export const CSRF_FIELD = 'csrf'
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

/** The token of this browser (from its cookie), or a new one set on the response. */
export function csrfToken(c: Context, secure: boolean): string {
  const existing = getCookie(c, CSRF_COOKIE)
  if (existing && TOKEN_PATTERN.test(existing)) return existing
  const token = randomBytes(32).toString('base64url')
  setCookie(c, CSRF_COOKIE, token, { httpOnly: true, sameSite: 'Strict', secure, path: '/' })
  return token
}

const digest = (text: string) => createHash('sha256').update(text).digest()

/** True when the form's token matches the cookie's and any Origin header is `origin`. */
export function csrfValid(c: Context, formToken: unknown, origin: string): boolean {
  const sentOrigin = c.req.header('origin')
  if (sentOrigin !== undefined && sentOrigin !== origin) return false
  const cookie = getCookie(c, CSRF_COOKIE)
  if (!cookie || !TOKEN_PATTERN.test(cookie) || typeof formToken !== 'string') return false
  return timingSafeEqual(digest(cookie), digest(formToken))
}
