/**
 * find_documents cursors: opaque base64url JSON bound to the query, scope and limit of the run.
 *
 * A run's order is frozen when its second page is read (paging/find-pages.ts), so the cursor has
 * two stages: after page one it carries the time of page one (documents created later are left out) and
 * short hashes of the documents page one showed (they are not shown again, even if edited since); after
 * that it names the snapshot and the offset in it. A cursor that does not decode or belongs to another
 * query, scope or limit is refused, and so is one whose values are out of shape or range (a time not as
 * toISOString writes it or outside the server's years, an offset past any snapshot, an id not a UUID):
 * forged values are refused here, before any query, and never reach SQL.
 */

import { ok, type Result, refuse } from '@collab/doc-schema'
import type { FindScope, Narrowed } from '../../../documents/search.ts'
import { MAX_RANKED_DOCUMENTS } from '../../../limits.ts'
import { MAX_FIND_LIMIT, MAX_FIND_SNAPSHOT_DOCUMENTS } from '../limits.ts'

export type FindCursorBinding = { query: string; scope: FindScope; limit: number }

export type FindCursor = FindCursorBinding &
  (
    | { stage: 'first'; asOf: string; shown: string[] }
    | { stage: 'snapshot'; snapshotId: string; offset: number; capped: boolean; narrowed: Narrowed | null }
  )

/** 3 since a narrowed run names how many documents it ranked (2's cursors are refused: start over). */
const VERSION = 3
const START_OVER = 'Call again without cursor to start over.'
const SHORT_ID = /^[0-9a-f]{8}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** 8 hex characters (FNV-1a, 32 bits) naming a document id inside a cursor; collisions only hide, never repeat. */
export function shortId(id: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, '0')
}

export function encodeCursor(cursor: FindCursor): string {
  const base = { v: VERSION, q: cursor.query, s: cursor.scope, l: cursor.limit }
  const json =
    cursor.stage === 'first'
      ? { ...base, a: cursor.asOf, h: cursor.shown.join('') }
      : {
          ...base,
          n: cursor.snapshotId,
          o: cursor.offset,
          c: cursor.capped ? 1 : 0,
          // Only when narrowed: how many documents were ranked, and whether among the matches (x).
          ...(cursor.narrowed ? { w: cursor.narrowed.ranked } : {}),
          ...(cursor.narrowed?.among === 'matches' ? { x: 1 } : {}),
        }
  return Buffer.from(JSON.stringify(json), 'utf8').toString('base64url')
}

/** A time exactly as `toISOString` writes it (what encodeCursor puts in), nothing Date.parse merely accepts. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** Cursor times before this are forged: the server did not exist (a year like -271821 fails in SQL). */
const EARLIEST_CURSOR_TIME_MS = Date.UTC(2020, 0, 1)
/** A cursor time may be this far ahead of this instance's clock (another instance's clock may run fast). */
const CURSOR_CLOCK_SKEW_MS = 24 * 60 * 60_000

const isIsoTime = (value: unknown): value is string => {
  if (typeof value !== 'string' || !ISO_TIME.test(value)) return false
  const ms = Date.parse(value)
  return (
    !Number.isNaN(ms) &&
    new Date(ms).toISOString() === value && // no 2026-02-31 rolled over to March
    ms >= EARLIEST_CURSOR_TIME_MS &&
    ms <= Date.now() + CURSOR_CLOCK_SKEW_MS
  )
}

/** An offset into a snapshot: a whole number no larger than a snapshot can be. */
const isSnapshotOffset = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_FIND_SNAPSHOT_DOCUMENTS

/** How many documents a narrowed search ranked: a whole number no larger than one search ranks. */
const isRankedCount = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_RANKED_DOCUMENTS

const notOurs = refuse(
  'invalid_input',
  `cursor: not a cursor find_documents gave out. ${START_OVER}`,
  'cursor',
)

export function decodeCursor(raw: string, expected: FindCursorBinding): Result<FindCursor> {
  let p: Record<string, unknown>
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw new Error('not base64url')
    p = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'))
    if (typeof p !== 'object' || p === null) throw new Error('not an object')
  } catch {
    return notOurs
  }
  if (
    p.v !== VERSION ||
    typeof p.q !== 'string' ||
    (p.s !== 'mine' && p.s !== 'public') ||
    !Number.isSafeInteger(p.l)
  ) {
    return notOurs
  }
  if (p.q !== expected.query || p.s !== expected.scope || p.l !== expected.limit) {
    return refuse(
      'invalid_input',
      `cursor: it belongs to a different query, scope or limit; pass the same ones as the call that returned it. ${START_OVER}`,
      'cursor',
    )
  }
  const binding = { query: p.q, scope: p.s, limit: p.l } as FindCursorBinding
  if (isIsoTime(p.a) && typeof p.h === 'string' && p.h.length % 8 === 0 && p.h.length <= 8 * MAX_FIND_LIMIT) {
    const shown = p.h.match(/.{8}/g) ?? []
    if (!shown.every((h) => SHORT_ID.test(h))) return notOurs
    return ok({ ...binding, stage: 'first', asOf: p.a, shown })
  }
  if (
    typeof p.n === 'string' &&
    UUID.test(p.n) &&
    isSnapshotOffset(p.o) &&
    (p.c === 0 || p.c === 1) &&
    (p.w === undefined || isRankedCount(p.w)) &&
    (p.x === undefined || (p.x === 1 && p.w !== undefined))
  ) {
    const narrowed: Narrowed | null = isRankedCount(p.w)
      ? { ranked: p.w, among: p.x === 1 ? 'matches' : 'scope' }
      : null
    const flags = { capped: p.c === 1, narrowed }
    return ok({ ...binding, stage: 'snapshot', snapshotId: p.n, offset: p.o, ...flags })
  }
  return notOurs
}
