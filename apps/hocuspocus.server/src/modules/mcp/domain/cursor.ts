/**
 * find_documents cursors: opaque base64url JSON holding the last row's sort key (rank, content time,
 * slug), the snapshot time of the first page, and the query, scope and limit it belongs to. A cursor is
 * refused when it does not decode or belongs to a different query, scope or limit.
 */

export type FindKey = { rank: number; updatedAt: string; slug: string }

export type FindCursor = {
  query: string
  scope: 'mine' | 'public'
  limit: number
  /** When the first page was read: documents created later are left out, so no page repeats one. */
  asOf: string
  after: FindKey
}

const VERSION = 1
const START_OVER = 'Call again without cursor to start over.'

export function encodeCursor(cursor: FindCursor): string {
  const { query, scope, limit, asOf, after } = cursor
  const json = JSON.stringify({
    v: VERSION,
    q: query,
    s: scope,
    l: limit,
    a: asOf,
    k: [after.rank, after.updatedAt, after.slug],
  })
  return Buffer.from(json, 'utf8').toString('base64url')
}

const isIsoTime = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= 40 && !Number.isNaN(Date.parse(value))

export function decodeCursor(
  raw: string,
  expected: { query: string; scope: 'mine' | 'public'; limit: number },
): { kind: 'ok'; value: FindCursor } | { kind: 'error'; message: string } {
  let parsed: unknown
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw new Error('not base64url')
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'))
  } catch {
    return { kind: 'error', message: `cursor: not a cursor find_documents gave out. ${START_OVER}` }
  }
  const p = parsed as { v?: unknown; q?: unknown; s?: unknown; l?: unknown; a?: unknown; k?: unknown }
  const key = Array.isArray(p.k) ? p.k : []
  const [rank, updatedAt, slug] = key as unknown[]
  const wellFormed =
    p.v === VERSION &&
    typeof p.q === 'string' &&
    (p.s === 'mine' || p.s === 'public') &&
    typeof p.l === 'number' &&
    isIsoTime(p.a) &&
    key.length === 3 &&
    typeof rank === 'number' &&
    Number.isFinite(rank) &&
    isIsoTime(updatedAt) &&
    typeof slug === 'string'
  if (!wellFormed)
    return { kind: 'error', message: `cursor: not a cursor find_documents gave out. ${START_OVER}` }
  if (p.q !== expected.query || p.s !== expected.scope || p.l !== expected.limit) {
    return {
      kind: 'error',
      message: `cursor: it belongs to a different query, scope or limit; pass the same ones as the call that returned it. ${START_OVER}`,
    }
  }
  return {
    kind: 'ok',
    value: {
      query: p.q,
      scope: p.s as 'mine' | 'public',
      limit: p.l,
      asOf: p.a as string,
      after: { rank: rank as number, updatedAt: updatedAt as string, slug: slug as string },
    },
  }
}

/** Words of a free-text query as a prefix-matching tsquery ('simple' config); null when it has no words. */
export function toPrefixTsQuery(query: string): string | null {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  if (words.length === 0) return null
  return words.map((w) => `${w}:*`).join(' & ')
}
