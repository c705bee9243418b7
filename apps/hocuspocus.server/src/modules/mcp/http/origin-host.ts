/**
 * DNS-rebinding protection for /mcp: a browser page on another site must not reach a server on this
 * machine. It runs before authentication (it needs no principal). An `Origin` header is accepted when it
 * is in the allowed list (MCP_ALLOWED_ORIGINS) or, while the server is bound to a loopback address, when
 * its host is a loopback name (`http://localhost:PORT`, `http://127.0.0.1:PORT`, `http://[::1]:PORT`,
 * any port); any other Origin is refused (403). While bound to loopback, a `Host` that is not a loopback
 * name (or the public URL's host) is refused too.
 *
 * Why any loopback port, not only the server's own: a rebinding page always carries the attacker's own
 * (non-loopback) name in Origin, which stays refused; a page whose Origin is loopback was served by
 * software on this machine (the Inspector on :6274, a local proxy), the same trust as the loopback Host
 * this check already accepts. Bound to another interface, only the allowed list counts.
 * The SDK's own helpers are Express-only, hence this middleware.
 */
import type { MiddlewareHandler } from 'hono'
import { refusalResponse } from '../../../http/refusal.ts'
import { isLoopback } from '../../../loopback.ts'

export type OriginHostOptions = {
  /** Exact origins (scheme://host[:port]) allowed to send an Origin header. */
  allowedOrigins: readonly string[]
  /** The interface the server is bound to (HOST). */
  bindHost: string
  /** Extra host names accepted in `Host` while bound to loopback (e.g. PUBLIC_URL's host). */
  allowedHosts?: readonly string[]
}

/** The host name of a Host header, without the port (IPv6 literals keep their brackets). */
export function hostName(header: string): string {
  const value = header.trim().toLowerCase()
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1)
  return value.split(':')[0] ?? ''
}

/** True when `origin` (scheme://host[:port]) names a loopback host over http or https. */
export function isLoopbackOrigin(origin: string): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopback(url.hostname)
}

export function originHostGuard(options: OriginHostOptions): MiddlewareHandler {
  const origins = new Set(options.allowedOrigins.map((o) => o.replace(/\/+$/, '').toLowerCase()))
  const hosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase()))
  const checkHost = isLoopback(options.bindHost)
  return async function originHost(c, next) {
    const origin = c.req.header('origin')
    if (
      origin !== undefined &&
      !origins.has(origin.replace(/\/+$/, '').toLowerCase()) &&
      !(checkHost && isLoopbackOrigin(origin))
    ) {
      return refusalResponse('forbidden', 'Origin not allowed; add it to MCP_ALLOWED_ORIGINS to accept it.')
    }
    if (checkHost) {
      const name = hostName(c.req.header('host') ?? new URL(c.req.url).host)
      if (!isLoopback(name) && !hosts.has(name)) {
        return refusalResponse('forbidden', 'Host not allowed while the server listens on loopback.')
      }
    }
    await next()
  }
}
