/**
 * Large states read in slices (STATE_SLICE_BYTES of bytes a statement, as base64 text, a turn of the event
 * loop between): the driver's parse of one 8 MiB state's 11 MB of text, and decoding it, held the event
 * loop ~100-250 ms of CPU in one piece (several times that in wall time on a loaded machine), once per
 * state a restore, a revert or a compaction of a large document reads. Each slice's text is decoded into
 * the state's bytes as it comes (~1 ms a slice), so the state goes to the documents' worker as a
 * transfer: kept as one text, joining the slices (60-170 ms for 8 MiB, measured in red-team-history's
 * profile) and the structured clone that posted it to the worker (110-290 ms) held the loop in one piece
 * each. The mirror of store.ts's sliced writes.
 */
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import { collectAfterLargeText } from '../db/statement-history.ts'
import { nextTurn } from '../turns.ts'
import type { RecentStates } from './recent-states.ts'

/**
 * Bytes of a state written or read in one statement (a multiple of 3, so the slices' base64 texts join into
 * the state's): encoding and serialising a statement's parameters run on the event loop, ~25-45 ms per MiB.
 * Here, not in store.ts, which reads through this file (history-store.ts too): one way, no circle.
 */
export const STATE_SLICE_BYTES = 768 * 1024

/**
 * Bytes of a stored part (document_state_parts, document_version_parts): a state larger than this is
 * written a part a row and never joined by the database (store.ts, writeStateRow). A read slice is a whole
 * number of parts, so a slice of a stored-in-parts state is the join of a few of them.
 */
export const STATE_PART_BYTES = 256 * 1024
if (STATE_SLICE_BYTES % STATE_PART_BYTES !== 0) throw new Error('a read slice must be whole parts')

type Db = Prisma.TransactionClient | PrismaClient

/** Where each kind's parts are, as `<table> p WHERE p.<key>`, and the column of its row the key names. */
const PARTS_OF: Record<'snapshot' | 'version' | 'update', readonly [string, string]> = {
  snapshot: ['document_state_parts p WHERE p.document_id', 'document_id'],
  version: ['document_version_parts p WHERE p.version_id', 'id'],
  update: ['document_update_parts p WHERE p.update_id', 'id'],
}

/**
 * SQL: slice `from` (a byte offset, a whole number of parts) of the bytes of row `alias` of document_states,
 * document_versions (their state) or document_updates (a log row's update): a substring of the column, or
 * the join of the parts the slice covers.
 */
export function sliceSql(kind: keyof typeof PARTS_OF, alias: string, from: number): Prisma.Sql {
  const row = Prisma.raw(alias)
  const first = from / STATE_PART_BYTES
  const end = first + STATE_SLICE_BYTES / STATE_PART_BYTES
  const [table, owner] = PARTS_OF[kind]
  const parts = Prisma.sql`SELECT string_agg(p.data, ''::bytea ORDER BY p.n) FROM ${Prisma.raw(table)} = ${row}.${Prisma.raw(owner)}
    AND p.n >= ${first}::int AND p.n < ${end}::int`
  const column = Prisma.raw(kind === 'update' ? '"update"' : 'state')
  return Prisma.sql`encode(CASE WHEN ${row}.parts = 0
    THEN substring(${row}.${column} from ${from + 1}::int for ${STATE_SLICE_BYTES}::int) ELSE (${parts}) END, 'base64')`
}

/** Reads the document's snapshot again when it changed between slices, at most this many times in all. */
const SLICED_READ_ATTEMPTS = 3

/** A base64 text (whitespace, as PostgreSQL's encode() writes it, allowed) as bytes. */
export function bytesOfBase64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64'))
}

/**
 * Decodes slice `part` (base64 text) into `state` at byte `from`; its length in bytes. Buffer's decoder
 * skips the newlines PostgreSQL's encode() writes.
 */
export function decodeSlice(state: Uint8Array, part: string, from: number): number {
  return Buffer.from(state.buffer, state.byteOffset, state.byteLength).write(part, from, 'base64')
}

/**
 * Slice `from` (a byte offset) of a state as base64 text: of version `id`, or of the document's snapshot
 * with the row version it was read at. Every read of a state's bytes over the database goes through it
 * (history-passes.test.ts counts them).
 */
export async function readStateSlice(
  db: Db,
  of: { version: bigint } | { snapshot: string },
  from: number,
): Promise<{ part: string; rowVersion?: string }> {
  if ('version' in of) {
    const [row] = await db.$queryRaw<Array<{ part: string | null }>>`
      SELECT ${sliceSql('version', 'v', from)} AS part FROM document_versions v WHERE v.id = ${of.version}`
    collectAfterLargeText(row?.part?.length ?? 0)
    return { part: row?.part ?? '' }
  }
  // The row version and the parts in one statement: one snapshot of both.
  const [row] = await db.$queryRaw<Array<{ rowVersion: string; part: string | null }>>`
    SELECT s.xmin::text AS "rowVersion", ${sliceSql('snapshot', 's', from)} AS part
      FROM document_states s WHERE s.document_id = ${of.snapshot}::uuid`
  // The slice's text and the driver's copies of it, collected now and then (statement-history.ts).
  collectAfterLargeText(row?.part?.length ?? 0)
  return { part: row?.part ?? '', rowVersion: row?.rowVersion }
}

/**
 * The state of version `id`, read in slices: versions never change, so any slices join. `recent`: states
 * this server wrote a moment ago (recent-states.ts), taken from there instead of read again. `byteSize`:
 * its `byte_size` when the caller read its row already (else read here).
 */
export async function readVersionState(
  db: Db,
  id: bigint,
  recent?: RecentStates,
  byteSize?: number,
): Promise<Uint8Array> {
  const known = recent?.version(id)
  if (known) return known
  const bytes = byteSize ?? (await versionByteSize(db, id))
  const state = new Uint8Array(bytes)
  let filled = 0
  for (let from = 0; from < bytes; from += STATE_SLICE_BYTES) {
    if (from > 0) await nextTurn()
    const { part } = await readStateSlice(db, { version: id }, from)
    filled += decodeSlice(state, part, from)
  }
  return filled === bytes ? state : state.subarray(0, filled)
}

async function versionByteSize(db: Db, id: bigint): Promise<number> {
  const [head] = await db.$queryRaw<Array<{ bytes: number }>>`
    SELECT byte_size AS bytes FROM document_versions WHERE id = ${id}`
  return Number(head?.bytes ?? 0)
}

/**
 * The document's snapshot with the row version (`xmin`) it was read at and its stored outline; all slices
 * of one row version (read again when a write replaced it between two). Not read over the connection
 * when this server wrote it a moment ago (`recent`, recent-states.ts), nor when it equals the state of
 * `known`, a version whose bytes the caller holds (compared by the database: a revert's reverted version
 * is the snapshot as long as nothing was compacted since it was taken).
 */
export async function readSnapshotState(
  db: Db,
  documentId: string,
  recent?: RecentStates,
  known?: { id: bigint; state: Uint8Array },
): Promise<{ rowVersion: string | null; snapshot: Uint8Array | null; bytes: number; outline: unknown }> {
  // Compared part by part when both are stored in parts (a version copies its snapshot's parts).
  const sameAsKnown = known
    ? Prisma.sql`(SELECT s.byte_size = v.byte_size AND s.parts = v.parts AND CASE WHEN s.parts = 0
          THEN s.state = v.state
          ELSE NOT EXISTS (SELECT 1 FROM document_state_parts sp
                             LEFT JOIN document_version_parts vp ON vp.version_id = v.id AND vp.n = sp.n
                            WHERE sp.document_id = s.document_id AND vp.data IS DISTINCT FROM sp.data) END
          FROM document_versions v WHERE v.id = ${known.id})`
    : Prisma.sql`false`
  for (let attempt = 1; ; attempt++) {
    const [head] = await db.$queryRaw<
      Array<{ rowVersion: string; bytes: number; outline: unknown; empty: boolean; same: boolean | null }>
    >`
      SELECT s.xmin::text AS "rowVersion", s.byte_size AS bytes, s.outline, s.state IS NULL AS empty,
             ${sameAsKnown} AS same
        FROM document_states s WHERE s.document_id = ${documentId}::uuid`
    if (!head) return { rowVersion: null, snapshot: null, bytes: 0, outline: null }
    if (head.empty) return { rowVersion: head.rowVersion, snapshot: null, bytes: 0, outline: head.outline }
    const bytes = Number(head.bytes)
    // Written by this server a moment ago (recent-states.ts): the same row version, the same bytes.
    const kept = recent?.snapshot(documentId, head.rowVersion)
    if (kept?.byteLength === bytes)
      return { rowVersion: head.rowVersion, snapshot: kept, bytes, outline: head.outline }
    if (head.same === true && known?.state.byteLength === bytes)
      return { rowVersion: head.rowVersion, snapshot: known.state.slice(), bytes, outline: head.outline }
    const state = new Uint8Array(bytes)
    let filled = 0
    let same = true
    for (let from = 0; from < bytes && same; from += STATE_SLICE_BYTES) {
      await nextTurn()
      const row = await readStateSlice(db, { snapshot: documentId }, from)
      same = row.rowVersion === head.rowVersion
      if (same) filled += decodeSlice(state, row.part, from)
    }
    if (same)
      return {
        rowVersion: head.rowVersion,
        snapshot: filled === bytes ? state : state.subarray(0, filled),
        bytes: filled,
        outline: head.outline,
      }
    if (attempt >= SLICED_READ_ATTEMPTS)
      throw new Error(`the snapshot of ${documentId} changed while it was read, ${attempt} times`)
  }
}
