/** The client's address, which the per-address limits (sign-in, registration) count. */
import { isLoopback } from '../../loopback.ts'

/** TRUSTED_PROXIES unset: only a proxy on this machine (loopback) is believed about the client. */
export const DEFAULT_TRUSTED_PROXIES: readonly string[] = ['loopback']

/**
 * The client's address for the per-address limits: the peer, or, when the peer is a trusted proxy
 * (`loopback` or a listed address), the rightmost X-Forwarded-For entry that is not a trusted proxy.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: readonly string[],
): string | undefined {
  const isTrusted = (ip: string) =>
    !trusted.includes('none') &&
    ((trusted.includes('loopback') && isLoopback(ip)) || trusted.includes(ip.toLowerCase()))
  if (!peer || !forwardedFor || !isTrusted(peer)) return peer
  const hops = forwardedFor.split(',').map((hop) => hop.trim())
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (!/^[0-9a-fA-F:.]{2,45}$/.test(hop)) return peer // not an address: believe nothing of it
    if (!isTrusted(hop)) return hop
  }
  return peer
}
