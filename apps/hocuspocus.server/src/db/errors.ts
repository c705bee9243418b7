/**
 * Telling "the database is away" (stopped, restarting, unreachable, out of connections) from every other
 * failure, so callers can answer "try again in a few seconds" instead of a generic server failure. Found
 * by the PostgreSQL outage suite (reliability/faults-postgres.test.ts): with PostgreSQL stopped, every tool
 * answered "The call failed on the server" and every authenticated HTTP request HTTP 500.
 */

/** What MCP tools and HTTP answer while the database cannot be reached. */
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable; try again in a few seconds.'

/** Prisma error codes for an unreachable server, a connection that went away, and a pool timeout. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024'])
/** Driver adapter error kinds meaning the same (Prisma's `DriverAdapterError.cause.kind`). */
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
])
/** PostgreSQL SQLSTATEs: admin / crash shutdown, cannot connect now, too many connections. */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])
/** Node socket errors of a connection attempt or a connection that was cut. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTCONN'])
const MESSAGES = [/Connection terminated/i, /Can't reach database server/i, /server closed the connection/i]

export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>()
  const queue: unknown[] = [error]
  while (queue.length > 0) {
    const e = queue.shift()
    if (!e || typeof e !== 'object' || seen.has(e) || seen.size > 20) continue
    seen.add(e)
    const o = e as Record<string, unknown>
    const code = typeof o.code === 'string' ? o.code : undefined
    if (code && (PRISMA_CODES.has(code) || SQLSTATES.has(code) || SOCKET_CODES.has(code))) return true
    if (code?.startsWith('08')) return true // SQLSTATE class 08: connection exception
    if (typeof o.originalCode === 'string' && SQLSTATES.has(o.originalCode)) return true
    if (typeof o.kind === 'string' && ADAPTER_KINDS.has(o.kind)) return true
    if (typeof o.message === 'string' && MESSAGES.some((m) => m.test(o.message as string))) return true
    const meta = o.meta as Record<string, unknown> | undefined
    queue.push(o.cause, meta?.driverAdapterError)
  }
  return false
}
