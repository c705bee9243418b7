/**
 * The SQL of versions (document_versions): taking one from the snapshot just written (store.ts calls it
 * inside the compaction's transaction, under the state row's lock), the retention policy that thins them
 * (limits.ts VERSION_RETENTION; docs/history.md), and the reads behind list_versions and changes_since.
 * A thinned version's authors and summary go to the version after it, so nobody's change loses its name.
 */
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import { forgetLargeParameters } from '../db/statement-history.ts'
import { storableJSON, storableText } from '../db/storable-text.ts'
import {
  MAX_HISTORY_STATE_BYTES,
  MAX_NAMED_VERSIONS,
  MAX_VERSION_NAME_CHARS,
  MAX_VERSIONS_PER_DOCUMENT,
  NAMED_VERSION_KEEP_MS,
  VERSION_RETENTION,
} from '../limits.ts'
import { type Author, unionAuthors } from './history-authors.ts'
import { type ChangeSummary, mergeSummaries } from './history-diff.ts'
import type { RecentStates } from './recent-states.ts'
import { readVersionState } from './sliced-read.ts'

export type VersionReason = 'agent' | 'pause' | 'interval' | 'named' | 'created' | 'import' | 'unload'

/** Versions taken by the automatic policy (the ones MIN_VERSION_INTERVAL_MS spaces apart). */
export const AUTOMATIC_REASONS: ReadonlySet<VersionReason> = new Set(['agent', 'pause', 'interval', 'unload'])

/** What the caller asks of the compaction's version: why, a name, what it changed (computed before). */
export type VersionRequest = {
  reason: VersionReason
  name?: string
  summary?: ChangeSummary | null
  /**
   * An automatic version: not taken when the newest stored one is younger than this (another load of the
   * document, or another instance, took it); its changes wait for the next version.
   */
  minIntervalMs?: number
}

type Db = Prisma.TransactionClient | PrismaClient

/**
 * Takes a version from the state row just written (copied inside the database: the state is not sent a
 * second time) with its authors, then applies the retention policy. Returns the version's id.
 */
export async function insertVersion(
  tx: Prisma.TransactionClient,
  documentId: string,
  request: VersionRequest,
  authors: readonly Author[],
  outlineJson: string | null,
): Promise<bigint> {
  const name = request.name ? storableText(request.name).trim().slice(0, MAX_VERSION_NAME_CHARS) : null
  const rows = await tx.$queryRaw<Array<{ id: bigint; parts: number }>>`
    INSERT INTO document_versions (document_id, state, byte_size, parts, reason, name, authors, summary, outline)
    SELECT document_id, state, byte_size, parts, ${request.reason}, ${name}, ${storableJSON(authors)}::jsonb,
           ${request.summary ? storableJSON(request.summary) : null}::jsonb, ${outlineJson}::jsonb
      FROM document_states WHERE document_id = ${documentId}::uuid
    RETURNING id, parts`
  // The outline's JSON would stay held by Prisma's debug histories (db/statement-history.ts).
  forgetLargeParameters(outlineJson?.length ?? 0)
  // A state stored in parts: its parts copied a row at a time, never joined (store.ts, writeStateRow).
  if (rows[0] && Number(rows[0].parts) > 0)
    await tx.$executeRaw`
      INSERT INTO document_version_parts (version_id, n, data)
      SELECT ${rows[0].id}::bigint, n, data FROM document_state_parts WHERE document_id = ${documentId}::uuid`
  await applyRetention(tx, documentId, Date.now())
  return BigInt(rows[0]?.id ?? 0)
}

type RetentionRow = {
  id: bigint
  createdAt: Date
  name: string | null
  authors: Author[]
  summary: ChangeSummary | null
}

/**
 * Which versions the policy keeps, given them newest first: the newest always; a named one while younger
 * than NAMED_VERSION_KEEP_MS and among the MAX_NAMED_VERSIONS newest named; else per VERSION_RETENTION,
 * the newest of its slot in the first tier it is younger than. At most MAX_VERSIONS_PER_DOCUMENT in all.
 */
export function versionsToKeep(
  versions: ReadonlyArray<{ id: bigint; createdAt: Date; name: string | null }>,
  now: number,
): Set<bigint> {
  const keep = new Set<bigint>()
  const slots = new Set<string>()
  let named = 0
  versions.forEach((version, index) => {
    const age = now - version.createdAt.getTime()
    if (index === 0) {
      keep.add(version.id)
      if (version.name !== null) named++
      return
    }
    if (version.name !== null && age < NAMED_VERSION_KEEP_MS && named < MAX_NAMED_VERSIONS) {
      named++
      keep.add(version.id)
      return
    }
    const tier = VERSION_RETENTION.findIndex((t) => age < t.youngerThanMs)
    if (tier < 0) return
    const every = VERSION_RETENTION[tier]!.everyMs
    if (every === 0) {
      keep.add(version.id)
      return
    }
    const slot = `${tier}:${Math.floor(version.createdAt.getTime() / every)}`
    if (slots.has(slot)) return // a newer version holds this slot
    slots.add(slot)
    keep.add(version.id)
  })
  if (keep.size > MAX_VERSIONS_PER_DOCUMENT) {
    const ordered = versions.filter((v) => keep.has(v.id)).slice(MAX_VERSIONS_PER_DOCUMENT)
    for (const version of ordered) keep.delete(version.id)
  }
  return keep
}

/**
 * Thins the document's versions by the policy. Each version dropped hands its authors and summary to the
 * next newer version kept (whose changes now start where the dropped one's started). Reads no states.
 */
export async function applyRetention(
  tx: Prisma.TransactionClient,
  documentId: string,
  now: number,
): Promise<number> {
  const all = await tx.$queryRaw<Array<{ id: bigint; createdAt: Date; name: string | null }>>`
    SELECT id, created_at AS "createdAt", name
      FROM document_versions WHERE document_id = ${documentId}::uuid
     ORDER BY created_at DESC, id DESC`
  const keep = versionsToKeep(all, now)
  if (keep.size === all.length) return 0
  // Authors and summaries only of the versions that change: each dropped one and the kept one after it.
  const touched: bigint[] = []
  all.forEach((row, index) => {
    if (keep.has(row.id)) return
    touched.push(BigInt(row.id))
    for (let newer = index - 1; newer >= 0; newer--)
      if (keep.has(all[newer]!.id)) {
        touched.push(BigInt(all[newer]!.id))
        break
      }
  })
  const rows = await tx.$queryRaw<RetentionRow[]>`
    SELECT id, created_at AS "createdAt", name, authors, summary FROM document_versions
     WHERE id = ANY(string_to_array(${[...new Set(touched)].join(',')}, ',')::bigint[])
     ORDER BY created_at, id`
  // Oldest first: a dropped version's changes move forward to the next kept one.
  const carried: { authors: Author[]; summary: ChangeSummary | null; any: boolean } = {
    authors: [],
    summary: null,
    any: false,
  }
  const dropped: bigint[] = []
  for (const row of rows) {
    if (!keep.has(row.id)) {
      carried.authors = unionAuthors(carried.authors, row.authors)
      carried.summary = mergeSummaries(carried.summary, row.summary)
      carried.any = true
      dropped.push(BigInt(row.id))
      continue
    }
    if (!carried.any) continue
    const authors = unionAuthors(carried.authors, row.authors)
    const summary = mergeSummaries(carried.summary, row.summary)
    await tx.$executeRaw`
      UPDATE document_versions SET authors = ${storableJSON(authors)}::jsonb,
             summary = ${summary ? storableJSON(summary) : null}::jsonb
       WHERE id = ${row.id}`
    carried.authors = []
    carried.summary = null
    carried.any = false
  }
  // Dropped versions older than every kept one had nothing to hand on to; their changes are before history.
  if (dropped.length > 0)
    await tx.$executeRaw`
      DELETE FROM document_versions WHERE id = ANY(string_to_array(${dropped.join(',')}, ',')::bigint[])`
  return dropped.length
}

/** One version as lists show it (no state). */
export type VersionInfo = {
  id: bigint
  createdAt: Date
  reason: VersionReason
  name: string | null
  authors: Author[]
  summary: ChangeSummary | null
  byteSize: number
}

/** Versions of a document newest first, older than `before` (an id) when given; `limit` rows at most. */
export async function listVersions(
  db: Db,
  documentId: string,
  options: { before?: bigint; limit: number },
): Promise<VersionInfo[]> {
  const before = options.before === undefined ? Prisma.empty : Prisma.sql`AND id < ${options.before}`
  const rows = await db.$queryRaw<VersionInfo[]>`
    SELECT id, created_at AS "createdAt", reason, name, authors, summary, byte_size AS "byteSize"
      FROM document_versions
     WHERE document_id = ${documentId}::uuid ${before}
     ORDER BY id DESC
     LIMIT ${options.limit}`
  return rows.map((row) => ({ ...row, id: BigInt(row.id) }))
}

/**
 * A page of listVersions with the counts its notes need, all read in one statement (one snapshot): `total`,
 * the document's versions, and `newer`, those from `before` on (the pages before this one). Counted in a
 * statement of their own, a version taken between the two made a list of two versions say "of 1".
 */
export async function listVersionsCounted(
  db: Db,
  documentId: string,
  options: { before?: bigint; limit: number },
): Promise<{ versions: VersionInfo[]; total: number; newer: number }> {
  const before = options.before === undefined ? Prisma.empty : Prisma.sql`AND id < ${options.before}`
  const newer =
    options.before === undefined ? Prisma.sql`0` : Prisma.sql`count(*) FILTER (WHERE id >= ${options.before})`
  const rows = await db.$queryRaw<
    Array<Omit<VersionInfo, 'id'> & { id: bigint | null; total: number; newer: number }>
  >`
    SELECT c.total, c.newer, v.id, v.created_at AS "createdAt", v.reason, v.name, v.authors, v.summary,
           v.byte_size AS "byteSize"
      FROM (SELECT count(*)::int AS total, (${newer})::int AS newer
              FROM document_versions WHERE document_id = ${documentId}::uuid) c
      LEFT JOIN LATERAL (SELECT * FROM document_versions
                          WHERE document_id = ${documentId}::uuid ${before}
                          ORDER BY id DESC LIMIT ${options.limit}) v ON true
     ORDER BY v.id DESC`
  const head = rows[0]
  return {
    versions: rows.flatMap(({ total: _t, newer: _n, id, ...row }) =>
      id === null ? [] : [{ ...row, id: BigInt(id) }],
    ),
    total: head?.total ?? 0,
    newer: head?.newer ?? 0,
  }
}

/** How many versions the document has, or how many from id `from` on (list_versions' notes). */
export async function countVersions(
  db: Db,
  documentId: string,
  options: { from?: bigint } = {},
): Promise<number> {
  const from = options.from === undefined ? Prisma.empty : Prisma.sql`AND id >= ${options.from}`
  const rows = await db.$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM document_versions WHERE document_id = ${documentId}::uuid ${from}`
  return rows[0]?.n ?? 0
}

/** Where changes_since starts: a version found by id, by time (the newest at or before it) or by a section rev. */
export type VersionLookup =
  | { id: bigint }
  | { at: Date }
  | { rev: string; sectionId?: string }
  /** The newest version older than this id (what a version changed is from it: a revert's base). */
  | { before: bigint }
  /** The newest version. */
  | { newest: true }

function lookupSql(lookup: VersionLookup): Prisma.Sql {
  return 'newest' in lookup
    ? Prisma.empty
    : 'id' in lookup
      ? Prisma.sql`AND id = ${lookup.id}`
      : 'before' in lookup
        ? Prisma.sql`AND id < ${lookup.before}`
        : 'at' in lookup
          ? Prisma.sql`AND created_at <= ${lookup.at}`
          : lookup.sectionId
            ? Prisma.sql`AND jsonb_path_exists(outline, '$.** ? (@.sectionId == $id && @.rev == $rev)',
                                           jsonb_build_object('id', ${lookup.sectionId}::text, 'rev', ${lookup.rev}::text))`
            : Prisma.sql`AND jsonb_path_exists(outline, '$.** ? (@.rev == $rev)', jsonb_build_object('rev', ${lookup.rev}::text))`
}

/**
 * The version a lookup names, with its state, or null when there is none. The state is read in slices
 * (sliced-read.ts): read whole in the statement that found it, a 22 MB version's 30 MB of base64 was parsed
 * and decoded on the event loop in one piece (changes_since from it, its preview's refusal), and the database
 * joined a version stored in parts as one value. Versions never change; one deleted by the retention policy
 * between the two reads is none.
 */
export async function findVersion(
  db: Db,
  documentId: string,
  lookup: VersionLookup,
): Promise<(VersionInfo & { state: Uint8Array }) | null> {
  const rows = await db.$queryRaw<VersionInfo[]>`
    SELECT id, created_at AS "createdAt", reason, name, authors, summary, byte_size AS "byteSize"
      FROM document_versions
     WHERE document_id = ${documentId}::uuid ${lookupSql(lookup)}
     ORDER BY id DESC
     LIMIT 1`
  const row = rows[0]
  if (!row) return null
  const id = BigInt(row.id)
  const byteSize = Number(row.byteSize)
  const state = await readVersionState(db, id, undefined, byteSize)
  // Fewer bytes than its size: the retention policy deleted it between the reads.
  return state.byteLength === byteSize ? { ...row, id, state } : null
}

/** A version whose state a caller holds (newestVersionState does not read it again). */
export type KnownVersion = { id: bigint; state: Uint8Array }

/**
 * The version a lookup names with its state, read in slices (sliced-read.ts) for the documents' worker:
 * a restore's or revert's versions, which may be megabytes.
 */
export async function findVersionState(
  db: Db,
  documentId: string,
  lookup: VersionLookup,
): Promise<(VersionInfo & { state: Uint8Array }) | null> {
  // The row as findVersion reads it, its state left out (a NULL), then read in slices.
  const rows = await db.$queryRaw<VersionInfo[]>`
    SELECT id, created_at AS "createdAt", reason, name, authors, summary, byte_size AS "byteSize", NULL AS state
      FROM document_versions WHERE document_id = ${documentId}::uuid ${lookupSql(lookup)} ORDER BY id DESC LIMIT 1`
  const row = rows[0]
  if (!row) return null
  const id = BigInt(row.id)
  return { ...row, id, state: await readVersionState(db, id, undefined, Number(row.byteSize)) }
}

/**
 * The versions after `afterId` (or from time `from` on), oldest first, with their states, at most `limit`:
 * the steps a revert of an author's changes walks.
 */
export async function versionsAfter(
  db: Db,
  documentId: string,
  since: { afterId: bigint } | { from: Date },
  limit: number,
): Promise<Array<VersionInfo & { state: Uint8Array }>> {
  const where =
    'afterId' in since ? Prisma.sql`AND id > ${since.afterId}` : Prisma.sql`AND created_at >= ${since.from}`
  // The rows first, then each state in slices (sliced-read.ts): read whole, MAX_REVERT_VERSIONS states of
  // megabytes were parsed and decoded here at once.
  const rows = await db.$queryRaw<VersionInfo[]>`
    SELECT id, created_at AS "createdAt", reason, name, authors, summary, byte_size AS "byteSize"
      FROM document_versions
     WHERE document_id = ${documentId}::uuid ${where}
     ORDER BY id
     LIMIT ${limit}`
  const versions: Array<VersionInfo & { state: Uint8Array }> = []
  for (const row of rows) {
    const id = BigInt(row.id)
    const byteSize = Number(row.byteSize)
    // A state past MAX_HISTORY_STATE_BYTES is refused by its size (the caller's tooLarge), never read.
    const state =
      byteSize <= MAX_HISTORY_STATE_BYTES
        ? await readVersionState(db, id, undefined, byteSize)
        : new Uint8Array()
    versions.push({ ...row, id, state })
  }
  return versions
}

/**
 * The newest version's state and time (a new version's summary is computed against it), or null. Its state
 * read in slices (findVersion says why); the newest again if the retention policy deleted it meanwhile.
 */
export async function newestVersion(
  db: Db,
  documentId: string,
): Promise<{ state: Uint8Array; createdAt: Date; reason: VersionReason } | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = await findVersion(db, documentId, { newest: true })
    if (found) return { state: found.state, createdAt: found.createdAt, reason: found.reason }
    const [left] = await db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM document_versions WHERE document_id = ${documentId}::uuid`
    if (!left || Number(left.n) === 0) return null
  }
  return null
}

/**
 * The newest version's state (read in slices, for the documents' worker), time and why. `known`: a
 * version whose state the caller holds already (a revert's): when it is the newest, a copy of its state
 * is taken instead of reading it again (a state of 8 MiB is ~0.3-0.5 s of the driver's work on the
 * event loop, in slices).
 */
export async function newestVersionState(
  db: Db,
  documentId: string,
  known?: KnownVersion,
  recent?: RecentStates,
): Promise<{ state: Uint8Array; createdAt: Date; reason: VersionReason } | null> {
  const rows = await db.$queryRaw<Array<{ id: bigint; createdAt: Date; reason: VersionReason }>>`
    SELECT id, created_at AS "createdAt", reason FROM document_versions
     WHERE document_id = ${documentId}::uuid ORDER BY id DESC LIMIT 1`
  const row = rows[0]
  if (!row) return null
  const id = BigInt(row.id)
  const state = known && known.id === id ? known.state.slice() : await readVersionState(db, id, recent)
  return { state, createdAt: row.createdAt, reason: row.reason }
}

/**
 * Everyone whose changes came after version `afterId`: the authors of every later version, of the
 * snapshot since the newest version, and of the update log.
 */
export async function authorsAfter(db: Db, documentId: string, afterId: bigint): Promise<Author[]> {
  const rows = await db.$queryRaw<Array<{ authors: Author[] }>>`
    SELECT authors FROM (
      SELECT authors, 0 AS part, id FROM document_versions WHERE document_id = ${documentId}::uuid AND id > ${afterId}
      UNION ALL
      SELECT unversioned_authors, 1, 0 FROM document_states WHERE document_id = ${documentId}::uuid
      UNION ALL
      SELECT authors, 2, id FROM document_updates WHERE document_id = ${documentId}::uuid
    ) a ORDER BY part, id`
  return unionAuthors(...rows.map((row) => row.authors))
}
