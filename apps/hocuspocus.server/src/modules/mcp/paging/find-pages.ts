/**
 * find_documents' paging run. Page one is a plain LIMIT query and its cursor remembers when it ran and
 * which documents it showed; page two freezes the rest of the run's order in a snapshot, so later edits
 * cannot make a document repeat or go missing; later pages read slices of that snapshot.
 */

import { ok, type Result, refuse } from '@collab/doc-schema'
import {
  type FindScope,
  type FoundRow,
  type Narrowed,
  queryTerms,
  type SearchInput,
  type SearchService,
} from '../../../documents/search.ts'
import { parseTerms } from '../../../documents/search-query.ts'
import { MAX_QUERY_TERMS } from '../../../limits.ts'
import { FIND_SNAPSHOT_TTL_MS, MAX_FIND_SNAPSHOT_DOCUMENTS } from '../limits.ts'
import { decodeCursor, encodeCursor, type FindCursor, shortId } from './cursor.ts'

/** The refusal of scope public without a query (a list of every public document has no bound). */
export const PUBLIC_NEEDS_QUERY =
  'query: scope public needs a query. Call again with a few words to find, or with scope mine.'

/** The refusal of a cursor whose snapshot is gone (older than FIND_SNAPSHOT_TTL_MS). */
export const CURSOR_EXPIRED = `cursor: this paging run has expired (cursors last ${FIND_SNAPSHOT_TTL_MS / 60_000} minutes). Call again without cursor to start over.`

export type FindRequest = { query?: string; scope: FindScope; limit: number; cursor?: string }

export type FindPage = {
  rows: FoundRow[]
  /** The cursor of the next page, when there is one. */
  next?: string
  /** More documents match than a run can page through (the snapshot's cap): narrow the query. */
  capped: boolean
  /**
   * The run ranks the matches among the most recently changed documents in scope (a broad query) or of
   * its matches (more text than one search ranks), not among all (documents/search.ts Narrowed).
   */
  narrowed: Narrowed | null
  /** True when this page continues a run (a cursor was given). */
  continued: boolean
}

/** The refusal of a query that only leaves out (every term is a `-word`). */
export const ONLY_EXCLUSIONS =
  'query: has only words to leave out (-word). Call again with at least one word to find besides them.'

/**
 * A non-empty query's terms (documents/search-query.ts queryTerms: `"phrases"` one term each, `-word` an
 * exclusion), refused when it has no letter or digit, more than MAX_QUERY_TERMS terms, or only
 * exclusions. find_sections checks its query with this too.
 */
export function queryTermsOf(query: string): Result<string[]> {
  const terms = queryTerms(query)
  if (terms.length === 0 || !/[\p{L}\p{N}]/u.test(query)) {
    return refuse(
      'invalid_input',
      'query: has no letters or digits to search for. Call again with words, or without query.',
      'query',
    )
  }
  if (terms.length > MAX_QUERY_TERMS) {
    return refuse(
      'invalid_input',
      `query: has ${terms.length} words; at most ${MAX_QUERY_TERMS} are matched. Call again with the ${MAX_QUERY_TERMS} most telling ones.`,
      'query',
    )
  }
  if (parseTerms(terms).include.length === 0) return refuse('invalid_input', ONLY_EXCLUSIONS, 'query')
  return ok(terms)
}

/** One page of a run: the request's checks, then the stage its cursor names. */
export async function findPage(
  search: SearchService,
  userId: string,
  request: FindRequest,
): Promise<Result<FindPage>> {
  const query = request.query?.trim() ?? ''
  const { scope, limit } = request
  if (scope === 'public' && query === '') return refuse('invalid_input', PUBLIC_NEEDS_QUERY, 'query')
  let terms: string[] | null = null
  if (query !== '') {
    const checked = queryTermsOf(query)
    if (checked.kind === 'error') return checked
    terms = checked.value
  }
  const run: Run = { search, userId, binding: { query, scope, limit }, terms }
  if (request.cursor === undefined) return ok(await firstPage(run))
  const cursor = decodeCursor(request.cursor, run.binding)
  if (cursor.kind === 'error') return cursor
  return cursor.value.stage === 'first'
    ? ok(await snapshotStart(run, cursor.value))
    : snapshotPage(run, cursor.value)
}

type Run = {
  search: SearchService
  userId: string
  binding: { query: string; scope: FindScope; limit: number }
  terms: string[] | null
}

const searchInput = (run: Run, asOf: Date, take: number): SearchInput => ({
  userId: run.userId,
  scope: run.binding.scope,
  terms: run.terms,
  asOf,
  take,
})

/** Page one: a plain LIMIT query; the cursor remembers when, and which documents it showed. */
async function firstPage(run: Run): Promise<FindPage> {
  const { limit } = run.binding
  const asOf = new Date().toISOString()
  const { rows, narrowed } = await run.search.search(searchInput(run, new Date(asOf), limit + 1))
  const page = rows.slice(0, limit)
  const next =
    rows.length > limit
      ? encodeCursor({ ...run.binding, stage: 'first', asOf, shown: page.map((r) => shortId(r.id)) })
      : undefined
  return { rows: page, next, capped: false, narrowed, continued: false }
}

/** Page two freezes the rest of the run's order, so later edits cannot reorder what is left. */
async function snapshotStart(run: Run, cursor: FindCursor & { stage: 'first' }): Promise<FindPage> {
  const { limit } = run.binding
  const shown = new Set(cursor.shown)
  const { rows: all, narrowed } = await run.search.search(
    searchInput(run, new Date(cursor.asOf), MAX_FIND_SNAPSHOT_DOCUMENTS + 1),
  )
  const capped = all.length > MAX_FIND_SNAPSHOT_DOCUMENTS
  const rest = all.slice(0, MAX_FIND_SNAPSHOT_DOCUMENTS).filter((r) => !shown.has(shortId(r.id)))
  const page = rest.slice(0, limit)
  if (rest.length <= limit) return { rows: page, capped, narrowed, continued: true }
  const snapshotId = await run.search.createSnapshot(
    run.userId,
    rest.map((r) => r.id),
  )
  const next = encodeCursor({
    ...run.binding,
    stage: 'snapshot',
    snapshotId,
    offset: limit,
    capped,
    narrowed,
  })
  return { rows: page, next, capped: false, narrowed, continued: true }
}

/** Later pages: a slice of the snapshot, in its order; a document deleted or unshared since is left out. */
async function snapshotPage(run: Run, cursor: FindCursor & { stage: 'snapshot' }): Promise<Result<FindPage>> {
  const slice = await run.search.readSnapshotSlice({
    snapshotId: cursor.snapshotId,
    userId: run.userId,
    offset: cursor.offset,
    count: run.binding.limit,
  })
  if (!slice) return refuse('not_found', CURSOR_EXPIRED, 'cursor')
  const found = await run.search.byIds({ userId: run.userId, scope: run.binding.scope, ids: slice.ids })
  const byId = new Map(found.map((r) => [r.id, r] as const))
  const offset = cursor.offset + slice.ids.length
  return ok({
    rows: slice.ids.flatMap((id) => byId.get(id) ?? []),
    next: offset < slice.total ? encodeCursor({ ...cursor, offset }) : undefined,
    capped: offset >= slice.total && cursor.capped,
    narrowed: cursor.narrowed,
    continued: true,
  })
}
