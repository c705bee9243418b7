/**
 * The network side of Client ID Metadata Documents: an MCP client may name itself by an https URL
 * (`client_id=https://app.example/client.json`), and the authorization server fetches that document on
 * an unauthenticated request. That fetch must not become a way into this machine's network (SSRF), so,
 * as the CIMD plugin requires of its transport: the host is resolved exactly once, every address it
 * resolves to must be public (no loopback, private, link-local, shared, documentation, multicast or
 * other special-use range, IPv4 or IPv6), the connection goes to that checked address (the TLS name is
 * still the host's, so the certificate is checked against it), redirects are refused, and the answer is
 * bounded in time and size.
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

/** A metadata document is a small JSON object; more is refused (the draft suggests 5 KB). */
export const MAX_METADATA_DOCUMENT_BYTES = 16 * 1024
/** The whole fetch (connect, TLS, answer). */
export const METADATA_FETCH_TIMEOUT_MS = 5_000

type Address = { address: string; family: number }
export type Resolve = (host: string) => Promise<Address[]>

const defaultResolve: Resolve = (host) => lookup(host, { all: true, verbatim: true })

function v4Number(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0)
}

/** IPv4 special-use blocks (RFC 6890 and successors): [first address, prefix length]. */
const SPECIAL_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]

function isPublicV4(ip: string): boolean {
  const n = v4Number(ip)
  return !SPECIAL_V4.some(([base, bits]) => {
    const size = 2 ** (32 - bits)
    const start = v4Number(base)
    return n >= start && n < start + size
  })
}

/** The 8 groups of an IPv6 address as numbers (handles ::, and a trailing dotted IPv4). */
function v6Groups(ip: string): number[] | null {
  let text = ip.toLowerCase().split('%')[0]!
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const n = v4Number(dotted[1]!)
    text = `${text.slice(0, -dotted[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const missing = 8 - left.length - right.length
  if (tail === undefined ? left.length !== 8 : missing < 0) return null
  const groups = [...left, ...Array(tail === undefined ? 0 : missing).fill('0'), ...right].map((g) =>
    Number.parseInt(g, 16),
  )
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : null
}

function isPublicV6(ip: string): boolean {
  const g = v6Groups(ip)
  if (!g) return false
  // IPv4-mapped (::ffff:a.b.c.d): judged as the IPv4 address it is.
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return isPublicV4(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`)
  }
  // Only global unicast (2000::/3), without the special blocks inside it: 2001::/23 (protocol
  // assignments, Teredo), 2001:db8::/32 (documentation), 2002::/16 (6to4, which embeds any IPv4).
  if ((g[0]! & 0xe000) !== 0x2000) return false
  if (g[0] === 0x2001 && g[1]! < 0x200) return false
  if (g[0] === 0x2001 && g[1] === 0xdb8) return false
  if (g[0] === 0x2002) return false
  return true
}

/** True for an address on the public internet; false for every special-use one (and for non-addresses). */
export function isPublicAddress(ip: string): boolean {
  const kind = isIP(ip)
  if (kind === 4) return isPublicV4(ip)
  if (kind === 6) return isPublicV6(ip)
  return false
}

/** Reads at most `limit` bytes of a body; more is an error (the stream is cancelled). */
export async function readBounded(response: Response, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const reader = response.body?.getReader()
  if (!reader) return new Uint8Array(new ArrayBuffer(0))
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw new Error(`client metadata: the document is over ${limit} bytes`)
    }
    chunks.push(value)
  }
  const body = new Uint8Array(new ArrayBuffer(size))
  let at = 0
  for (const chunk of chunks) {
    body.set(chunk, at)
    at += chunk.byteLength
  }
  return body
}

/** The fetch the CIMD plugin uses (`fetchClientMetadataResource`). `resolve`: DNS, replaceable in tests. */
export function createMetadataFetch(resolve: Resolve = defaultResolve) {
  return async function fetchClientMetadata(
    input: RequestInfo | URL,
    init: RequestInit = {},
  ): Promise<Response> {
    const url = new URL(input instanceof Request ? input.url : String(input))
    if (url.protocol !== 'https:') throw new Error('client metadata: only https URLs are fetched')
    if (url.username || url.password) throw new Error('client metadata: URLs with credentials are refused')
    const host = url.hostname.replace(/^\[|\]$/g, '')
    // Resolved once; the connection goes to the address checked here (no second lookup to rebind).
    const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host)
    if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address))) {
      throw new Error(`client metadata: ${host} does not resolve to public addresses only`)
    }
    const { address, family } = addresses[0]!
    const pinned = new URL(url)
    pinned.hostname = family === 6 ? `[${address}]` : address
    const headers = new Headers(init.headers)
    headers.set('host', url.host)
    if (!headers.has('accept')) headers.set('accept', 'application/json')
    const timeout = AbortSignal.timeout(METADATA_FETCH_TIMEOUT_MS)
    const response = await fetch(pinned, {
      method: 'GET',
      headers,
      redirect: 'manual',
      signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
      // The certificate is checked against the host's name, not the address connected to.
      tls: { serverName: host },
    } as RequestInit)
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel()
      throw new Error('client metadata: redirects are refused')
    }
    const body = await readBounded(response, MAX_METADATA_DOCUMENT_BYTES)
    // The body is decoded already: pass on only what says what it is and how long it stays fresh.
    const kept = new Headers()
    for (const name of ['content-type', 'cache-control', 'expires', 'etag', 'last-modified', 'age', 'date']) {
      const value = response.headers.get(name)
      if (value !== null) kept.set(name, value)
    }
    return new Response(body, { status: response.status, headers: kept })
  }
}
