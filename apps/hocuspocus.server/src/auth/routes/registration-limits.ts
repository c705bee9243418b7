/**
 * Bounds on unauthenticated client registration (RFC 7591): per source an hour, from everyone an hour,
 * and in all; clients nobody approved are deleted after a day.
 */
import type { PrismaClient } from '../../db/generated/client.ts'

/** A client registration (RFC 7591) is a small JSON document. */
export const MAX_REGISTRATION_BYTES = 16 * 1024
/**
 * Registrations accepted per hour from one source (an IPv4 address, or an IPv6 /64, which one host
 * usually has whole), beside Better Auth's REGISTRATIONS_PER_MINUTE per address. A client registers once
 * per install: 20 covers a busy office behind one address.
 */
export const REGISTRATIONS_PER_SOURCE_PER_HOUR = 20
/**
 * Registrations accepted per hour from everyone together: a ceiling on table growth, far above what the
 * per-source limit lets one source reach, so one source cannot close registration for everyone (it
 * would need MAX_REGISTRATIONS_PER_HOUR / REGISTRATIONS_PER_SOURCE_PER_HOUR = 50 sources).
 */
export const MAX_REGISTRATIONS_PER_HOUR = 1_000
/** Registered clients kept at most; a client nobody approved is deleted after a day (see registrationsFull). */
export const MAX_OAUTH_CLIENTS = 25_000
const UNUSED_CLIENT_TTL_MS = 24 * 60 * 60 * 1000

/**
 * Whose registrations count together: an IPv4 address as is, an IPv6 address by its /64 (what one host
 * or one customer of a provider usually holds, so rotating within it gains nothing). Unknown: one bucket.
 */
export function registrationSourceOf(address: string | undefined): string {
  if (!address) return 'unknown'
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
  if (!plain.includes(':')) return plain
  const [head = '', tail] = plain.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '') || '0')
    .join(':')}::/64`
}

/**
 * Unauthenticated registration is bounded: clients nobody approved are deleted after a day, at most
 * MAX_REGISTRATIONS_PER_HOUR new ones per hour and MAX_OAUTH_CLIENTS in all. Returns why registration
 * is closed now, or null.
 */
export async function registrationsFull(prisma: PrismaClient): Promise<string | null> {
  const now = Date.now()
  await prisma.$executeRaw`
    DELETE FROM oauth_clients c
     WHERE c.created_at < ${new Date(now - UNUSED_CLIENT_TTL_MS)} AND c.user_id IS NULL
       AND NOT EXISTS (SELECT 1 FROM oauth_consents k WHERE k.client_id = c.client_id)
       AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.client_id = c.client_id)
       AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens a WHERE a.client_id = c.client_id)`
  const [recent, total] = await Promise.all([
    prisma.oauthClient.count({ where: { createdAt: { gt: new Date(now - 3_600_000) } } }),
    prisma.oauthClient.count(),
  ])
  if (recent >= MAX_REGISTRATIONS_PER_HOUR)
    return `registration: ${MAX_REGISTRATIONS_PER_HOUR} clients registered in the last hour; try again later`
  if (total >= MAX_OAUTH_CLIENTS)
    return `registration: ${MAX_OAUTH_CLIENTS} clients are registered; try again later`
  return null
}
