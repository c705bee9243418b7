/** The refusals section: the answers any tool call can get, and the refusals of paging arguments. */
import { DATABASE_UNAVAILABLE_MESSAGE } from '../../../db/errors.ts'
import { MAX_QUERY_TERMS } from '../../../limits.ts'
import { rateLimitMessage } from '../infra/rate-limit.ts'
import { serverTimeMessage } from '../infra/server-time.ts'
import * as limits from '../limits.ts'
import { decodeCursor, encodeCursor } from '../paging/cursor.ts'
import { CURSOR_EXPIRED, PUBLIC_NEEDS_QUERY, queryTermsOf } from '../paging/find-pages.ts'
import { CANCELLED_MESSAGE, GENERIC_FAILURE } from '../tools/instrument.ts'
import { notFoundMessage } from '../tools/open-document.ts'
import { code, type Section, slot, table } from './format.ts'

/** Refusals of paging arguments, from the functions that check them. */
export function pagingRefusals(): [string, string][] {
  const refusal = (result: { kind: string; message?: string }) => {
    if (result.kind !== 'error' || result.message === undefined) throw new Error('expected a refusal')
    return result.message
  }
  const binding = { query: 'a', scope: 'mine', limit: limits.DEFAULT_FIND_LIMIT } as const
  const otherRun = encodeCursor({
    ...binding,
    query: 'b',
    stage: 'first',
    asOf: new Date().toISOString(),
    shown: [],
  })
  const tooMany = Array.from({ length: MAX_QUERY_TERMS + 1 }, (_, i) => `w${i}`).join(' ')
  return [
    ['scope `public` without a query', PUBLIC_NEEDS_QUERY],
    ['a query without letters or digits', refusal(queryTermsOf('+++'))],
    [`a query of ${MAX_QUERY_TERMS + 1} terms`, refusal(queryTermsOf(tooMany))],
    ['a cursor the server did not give out', refusal(decodeCursor('not-a-cursor', binding))],
    ['a cursor of another query, scope or limit', refusal(decodeCursor(otherRun, binding))],
    ['a cursor whose paging run has expired', CURSOR_EXPIRED],
  ]
}

/** The answers every tool call can get from the call's wrapper and the document lookup, not from the tool. */
export function refusalsSection(): Section {
  const rows: [string, string][] = [
    ['no such document, or no access (the same answer)', notFoundMessage(slot('slug'))],
    ['over the tool-call rate limit', rateLimitMessage(slot('limit'), slot('seconds'))],
    ['over the completion rate limit', rateLimitMessage(slot('limit'), slot('seconds'), 'completions')],
    ["the user's share of server time is spent", serverTimeMessage(slot('seconds'))],
    ['the database cannot be reached (stopped, restarting)', DATABASE_UNAVAILABLE_MESSAGE],
    ['an unexpected failure (logged in full)', GENERIC_FAILURE],
    ['cancelled by its caller while its POST is still open', CANCELLED_MESSAGE],
  ]
  return {
    name: 'refusals',
    text: table(
      ['situation', 'answer'],
      rows.map(([when, text]) => [when, code(text)]),
    ),
  }
}
