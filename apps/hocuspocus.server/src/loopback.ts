/**
 * The one loopback rule: whether a host name or address is this machine (`localhost`, 127.0.0.0/8, ::1,
 * also bracketed as in URLs and Host headers, and IPv4-mapped as a dual-stack socket reports a peer:
 * `::ffff:127.0.0.1`). Used wherever a name or an address from a request is trusted as local: /mcp's
 * Origin and Host checks, /metrics' peers, and sign-in over plain http.
 */

const IPV4_LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

export function isLoopback(hostOrAddress: string | undefined): boolean {
  if (!hostOrAddress) return false
  let host = hostOrAddress.toLowerCase()
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1)
  if (host.startsWith('::ffff:')) host = host.slice('::ffff:'.length)
  return host === 'localhost' || host === '::1' || IPV4_LOOPBACK.test(host)
}
