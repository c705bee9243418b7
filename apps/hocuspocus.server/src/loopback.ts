/**
 * Loopback host names: what this machine calls itself (`localhost`, 127.0.0.0/8, ::1). Used where a name
 * or an address from a request is trusted as local: /mcp's Origin and Host checks, trusted proxies,
 * OAuth clients whose redirects stay on this machine.
 */

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

export function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host)
}
