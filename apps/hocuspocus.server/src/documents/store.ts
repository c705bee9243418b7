/**
 * Writing a document's content. Two kinds of write:
 * - a store appends the Yjs updates made since the last store to the update log (`appendUpdate`): its
 *   cost follows the change, not the document;
 * - compaction (`storeContent` with `compact`) writes the merged state as the new snapshot with its
 *   title, full-text vector, outline and, now and then, a version, and deletes the log rows it merged. One
 *   transaction, so search, content and log never disagree.
 * Between compactions the title and search text are refreshed on their own (`writeDerived`), a bounded
 * time behind the log (collab/persistence-extension.ts says when).
 */
import { cutText, MAX_TITLE_CHARS, type OutlineNode, type StoredOutlineNode } from '@collab/doc-schema'
import * as Y from 'yjs'
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import { forgetLargeParameters } from '../db/statement-history.ts'
import { storableJSON, storableText } from '../db/storable-text.ts'
import { CONTENT_TRANSACTION } from '../db/transactions.ts'
import { nextTurn } from '../turns.ts'
import { type Author, unionAuthors } from './history-authors.ts'
import { AUTOMATIC_REASONS, insertVersion, type VersionReason, type VersionRequest } from './history-store.ts'
import { type LogRows, readLog } from './log-read.ts'
import type { RecentStates } from './recent-states.ts'
import { documentSearchChunks, searchVectorSql } from './search.ts'
import { type SearchChunk, writeSearchChunks } from './search-chunks.ts'
import { readSnapshotState, STATE_PART_BYTES, STATE_SLICE_BYTES } from './sliced-read.ts'

export { STATE_SLICE_BYTES }

/**
 * Bytes of a state written per statement (writeStateRow; reads take STATE_SLICE_BYTES). Prisma keeps its
 * last 100 debug messages whether or not debugging is on, and a raw statement's messages hold its
 * parameters: after the 29 statements of a 22 MB state in 768 KiB slices, ~105 MB of the event loop's heap
 * stayed held after a full collection (a heap snapshot; the same on PostgreSQL), in 256 KiB slices ~75 MB;
 * now those histories are emptied after each slice (db/statement-history.ts), so a slice's size no longer
 * sets what stays held. Small slices still spare PGlite's thread: pglite-socket joins a message's chunks
 * with one Buffer.concat per chunk, so a 1 MiB message cost it ~8 MB of copies, a 256 KiB one ~0.6 MB.
 * A slice of a larger state is a stored part (STATE_PART_BYTES, document_state_parts).
 */
export const STATE_WRITE_SLICE_BYTES = STATE_PART_BYTES

/** Compaction takes a version when the newest one is older than this, whatever else asked for one. */
export const VERSION_INTERVAL_MS = 10 * 60_000
/** Stored when a document's first heading is empty, so listings never show a blank title. */
export const UNTITLED = 'Untitled'

/** What a store writes: the state, its title and search text, and what the store step derived. */
export type StoredContent = {
  state: Uint8Array
  title: string
  text: string
  /**
   * The outline of `state` (readOutline's tree); stored for cold outline reads, its nodes with the exact
   * section totals measured (StoredOutlineNode: adopted by whoever decodes the state). Unknown: omit.
   */
  outline?: OutlineNode[]
  /**
   * The same outline as JSON already made (storableJSON), in place of `outline`: the import worker makes it,
   * since a 20 MiB file's outline of ~12,000 sections took the event loop hundreds of ms to receive as
   * objects from the worker (structured clone) and to serialise again, where a string crosses as a copy.
   */
  outlineJson?: string
  /** Y.encodeStateVector of the document `state` was encoded from (to judge a merged outline). */
  vector?: Uint8Array
  /** Compaction: when the content last changed (the content-updated time); others write now. */
  changedAt?: Date
  /** Authors of changes not in the log (a created or imported document: the server, for its owner). */
  authors?: readonly Author[]
}

/** Whether state vector `ours` has every update `theirs` has. */
function covers(ours: Uint8Array, theirs: Uint8Array): boolean {
  const have = Y.decodeStateVector(ours)
  for (const [client, clock] of Y.decodeStateVector(theirs)) if ((have.get(client) ?? 0) < clock) return false
  return true
}

export type StoreOptions = {
  /**
   * Merge with the stored state instead of replacing it (several instances share the database). Each
   * instance stores its own full copy; one that has not yet received another instance's change would
   * otherwise overwrite a stored, acknowledged change until its next store. The row is locked, so two
   * instances' stores run one after the other and each keeps what the other wrote.
   */
  mergeWithStored?: boolean
  /**
   * Store the Yjs state alone: no outline (cold reads decode the state), title and search text left as
   * they were. The fallback when deriving or storing those failed, so what editors wrote is durable anyway.
   */
  stateOnly?: boolean
  /**
   * Compaction: the state holds every row of the document's update log (this instance's own copy, which
   * applied each row it loaded and appended), or, with `mergeWithStored`, the rows are merged in; either
   * way the rows are deleted in the same transaction. The content-updated time is left alone: nothing new.
   */
  compact?: boolean
  /**
   * Leave the title, search columns and content-updated time as they are (a compaction whose live
   * document's were refreshed since its last change: re-indexing them would cost the most of it).
   */
  keepDerived?: boolean
  /**
   * Take a version of the state written (history-store.ts), for this reason; without it one is taken only
   * when the newest is older than VERSION_INTERVAL_MS (or there is none).
   */
  version?: VersionRequest
}

/** Bytes of base64 text for `bytes` (what the state and updates travel as; see storeContent). */
function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
}

/**
 * Appends one Yjs update to the document's log: one INSERT, bytes alone, so no content can make it fail.
 * The documents row is not touched: its search columns are indexed (a trigram GIN index over up to a
 * million characters), and any update of that row re-indexes them, which cost ~70 ms per store on a 1 MiB
 * document (measured). The content-updated time moves with the next title and search refresh instead.
 * An update larger than one write slice (an editor's paste of megabytes, up to the 8 MiB message limit)
 * is stored in parts, as a large snapshot is (writeStateRow), in one transaction. As one value, an 8 MiB
 * update's INSERT held the event loop 30-49 ms (its 11 MB of base64 serialised at once) and left the process
 * ~77 MB larger for good (PGlite's WebAssembly heap); in parts 5-9 ms and +12-13 MB (bench/notes.md).
 */
export async function appendUpdate(
  prisma: PrismaClient,
  documentId: string,
  update: Uint8Array,
  authors: readonly Author[] = [],
): Promise<bigint> {
  if (update.byteLength <= STATE_WRITE_SLICE_BYTES) return insertLogRow(prisma, documentId, update, authors)
  return prisma.$transaction((tx) => insertLogRow(tx, documentId, update, authors), CONTENT_TRANSACTION)
}

/** appendUpdate's INSERT, and its parts' (in the caller's transaction: there is one when there are parts). */
async function insertLogRow(
  db: Prisma.TransactionClient | PrismaClient,
  documentId: string,
  update: Uint8Array,
  authors: readonly Author[],
): Promise<bigint> {
  const bytes = update.byteLength
  const parts = bytes > STATE_WRITE_SLICE_BYTES ? Math.ceil(bytes / STATE_WRITE_SLICE_BYTES) : 0
  const slice = (n: number) =>
    base64Of(update.subarray(n * STATE_WRITE_SLICE_BYTES, (n + 1) * STATE_WRITE_SLICE_BYTES))
  const [row] = await db.$queryRaw<Array<{ id: bigint }>>`
    INSERT INTO document_updates (document_id, "update", byte_size, parts, authors)
    VALUES (${documentId}::uuid, ${parts > 0 ? Prisma.sql`''::bytea` : Prisma.sql`decode(${slice(0)}, 'base64')`},
            ${bytes}, ${parts}, ${storableJSON(authors)}::jsonb)
    RETURNING id`
  // A large update's base64 would stay held by Prisma's debug histories (db/statement-history.ts).
  forgetLargeParameters(parts > 0 ? 0 : (bytes / 3) * 4)
  const id = BigInt(row!.id)
  for (let n = 0; n < parts; n++) {
    await nextTurn()
    await db.$executeRaw`
      INSERT INTO document_update_parts (update_id, n, data) VALUES (${id}, ${n}, decode(${slice(n)}, 'base64'))`
    forgetLargeParameters((STATE_WRITE_SLICE_BYTES / 3) * 4)
  }
  return id
}

/**
 * What is derived from the content for listings and search: the title and the plain text, and when the
 * content they describe last changed (moves the content-updated time forward; omitted: left as it is).
 */
export type DerivedContent = {
  title: string
  text: string
  changedAt?: Date
  /**
   * The search chunks of derivedTitle(`title`) and `text` (documentSearchChunks), when made already (in
   * slices, before the transaction).
   */
  chunks?: readonly SearchChunk[]
}

/** The title writeDerived stores for a document whose first heading is `title` (cut; "Untitled" when empty). */
export function derivedTitle(title: string): string {
  return cutText(storableText(title).trim(), MAX_TITLE_CHARS) || UNTITLED
}

/**
 * Writes the title (its first heading, cut) and the search columns (documents/search.ts: the full-text
 * vector and the text phrase search matches). `text`: readPlainText of the content, at most
 * MAX_FIND_TEXT_CHARS (more is cut).
 */
export async function writeDerived(
  tx: Prisma.TransactionClient,
  documentId: string,
  content: DerivedContent,
): Promise<void> {
  const title = derivedTitle(content.title)
  const changed = content.changedAt
    ? Prisma.sql`, content_updated_at = GREATEST(content_updated_at, ${content.changedAt})`
    : Prisma.empty
  // The documents row first: its lock orders two instances' refreshes of one document.
  await tx.$executeRaw`
    UPDATE documents SET title = ${title}, ${searchVectorSql(title)}${changed}
     WHERE id = ${documentId}::uuid`
  await writeSearchChunks(tx, documentId, content.chunks ?? documentSearchChunks(title, content.text))
}

export async function storeContent(
  tx: Prisma.TransactionClient,
  documentId: string,
  content: StoredContent,
  options: StoreOptions = {},
): Promise<{ bytes: number; versionId?: bigint }> {
  let state = content.state
  let outline: OutlineNode[] | string | null = content.outlineJson ?? content.outline ?? null
  let merged: bigint[] = []
  // Authors of the changes since the newest version: the snapshot's, the merged log rows', the caller's.
  let authors = unionAuthors(content.authors)
  if (options.mergeWithStored || options.compact) {
    // The row lock orders this instance's compaction with every other instance's: each keeps what the
    // other wrote. Rows appended meanwhile (not yet committed) are not read, so not deleted: they stay in
    // the log for the next compaction and every load.
    const rows = await tx.$queryRaw<Array<{ authors: Author[] }>>`
      SELECT unversioned_authors AS authors
        FROM document_states WHERE document_id = ${documentId}::uuid FOR UPDATE`
    // Under the row's lock, so its slices are of one snapshot (sliced-read.ts: no state read whole, by
    // the database or here).
    const snapshot =
      options.mergeWithStored && rows[0] ? (await readSnapshotState(tx, documentId)).snapshot : null
    // The rows merged: with their bytes (read in bounded statements, log-read.ts) when merged here.
    let log: Pick<LogRows, 'ids' | 'authors' | 'updates'> = { ids: [], authors: [], updates: [] }
    if (options.compact && options.mergeWithStored) log = await readLog(tx, documentId, { authors: true })
    else if (options.compact) {
      const listed = await tx.$queryRaw<Array<{ id: bigint; authors: Author[] }>>`
        SELECT id, authors FROM document_updates WHERE document_id = ${documentId}::uuid ORDER BY id`
      log = {
        ids: listed.map((row) => BigInt(row.id)),
        authors: listed.map((row) => row.authors),
        updates: [],
      }
    }
    merged = log.ids
    authors = unionAuthors(rows[0]?.authors, ...log.authors, authors)
    if (options.mergeWithStored) {
      const stored = [...(snapshot ? [snapshot] : []), ...log.updates]
      if (stored.length > 0) {
        // Always merged, even when our state vector covers the stored one: a deletion does not advance a
        // state vector, so only the merge keeps a deletion another instance stored.
        const theirs = stored.length === 1 ? (stored[0] as Uint8Array) : Y.mergeUpdates(stored)
        state = Y.mergeUpdates([theirs, state])
        // Our outline describes our copy: kept only when the stored state holds nothing we lack (up to a
        // deletion still on its way, which the next compaction corrects).
        if (!content.vector || !covers(content.vector, Y.encodeStateVectorFromUpdate(theirs))) outline = null
      }
    }
  }
  if (options.stateOnly) outline = null
  const version = await versionToTake(tx, documentId, options.version)
  const outlineJson = outline === null ? null : typeof outline === 'string' ? outline : storableJSON(outline)
  await writeStateRow(tx, documentId, state, outlineJson, version ? [] : authors)
  await deleteMerged(tx, merged)
  // One update of the documents row (each one re-indexes its search columns): a new state is new
  // content now; a compaction's content changed when its last update was stored.
  const changedAt = options.compact ? content.changedAt : new Date()
  if (!options.keepDerived) {
    if (!options.stateOnly) await writeDerived(tx, documentId, { ...content, changedAt })
    else if (changedAt)
      await tx.$executeRaw`
        UPDATE documents SET content_updated_at = GREATEST(content_updated_at, ${changedAt})
         WHERE id = ${documentId}::uuid`
  }
  // Its authors: everyone since the version before it (the state row's were just cleared for it).
  const versionId = version ? await insertVersion(tx, documentId, version, authors, outlineJson) : undefined
  return { bytes: state.byteLength, versionId }
}

/**
 * The version a write of the state takes: the one asked for, unless it is automatic and within its
 * interval of the newest one (the rate bound holds across loads and instances; its authors stay
 * unversioned for the next one); else one for the interval when the newest is older than
 * VERSION_INTERVAL_MS (or there is none).
 */
async function versionToTake(
  tx: Prisma.TransactionClient,
  documentId: string,
  asked: VersionRequest | undefined,
): Promise<VersionRequest | undefined> {
  const newest = await tx.$queryRaw<Array<{ createdAt: Date; reason: string }>>`
    SELECT created_at AS "createdAt", reason FROM document_versions
     WHERE document_id = ${documentId}::uuid ORDER BY created_at DESC LIMIT 1`
  const age = newest[0] ? Date.now() - newest[0].createdAt.getTime() : Number.POSITIVE_INFINITY
  const automatic = newest[0] ? AUTOMATIC_REASONS.has(newest[0].reason as VersionReason) : false
  return asked && !(asked.minIntervalMs && automatic && age < asked.minIntervalMs)
    ? asked
    : age >= VERSION_INTERVAL_MS
      ? { reason: 'interval' }
      : undefined
}

/**
 * Writes the snapshot row: `state` as bytes (the documents' worker's merge comes back as a transfer),
 * base64-encoded a slice at a time. Raw SQL, not Prisma's upsert: that returns the row, which reads the whole
 * state back. The state goes as base64 text decoded by the database: PGlite's bytea parameter encoding
 * took ~210 ms per MiB, base64 text ~35 ms (measured on this machine; PostgreSQL is not slower either
 * way). A state larger than one slice (STATE_WRITE_SLICE_BYTES) is stored in parts, a row of
 * document_state_parts a slice, with a turn of the event loop between them: encoding it and Prisma's
 * serialising of a statement's parameters run on the event loop, and a 22 MB state's 30 MB of base64 in one
 * statement held it ~1 s. The database never joins the parts: an INSERT of a 22 MB value (one parameter, or
 * the slices joined by the database, as this did until the nineteenth session) took PGlite's WebAssembly
 * heap +138 MB, which it keeps for good, and a PostgreSQL backend as much for the statement; parts cost
 * neither. The row is written first: its lock orders two writers of one document's parts (the second
 * deletes the first's parts only once the first has committed).
 */
async function writeStateRow(
  tx: Prisma.TransactionClient,
  documentId: string,
  state: Uint8Array,
  outlineJson: string | null,
  authors: readonly Author[],
): Promise<string | null> {
  const bytes = state.byteLength
  /** Slice `n` of the state as base64 (STATE_WRITE_SLICE_BYTES of bytes: 4/3 as many characters). */
  const slice = (n: number) =>
    base64Of(state.subarray(n * STATE_WRITE_SLICE_BYTES, (n + 1) * STATE_WRITE_SLICE_BYTES))
  const parts = bytes > STATE_WRITE_SLICE_BYTES ? Math.ceil(bytes / STATE_WRITE_SLICE_BYTES) : 0
  const [written] = await tx.$queryRaw<Array<{ rowVersion: string }>>`
    INSERT INTO document_states (document_id, state, byte_size, parts, outline, unversioned_authors, updated_at)
    VALUES (${documentId}::uuid, ${parts > 0 ? Prisma.sql`''::bytea` : Prisma.sql`decode(${slice(0)}, 'base64')`},
            ${bytes}, ${parts}, ${outlineJson}::jsonb, ${storableJSON(authors)}::jsonb, now())
    ON CONFLICT (document_id)
    DO UPDATE SET state = EXCLUDED.state, byte_size = EXCLUDED.byte_size, parts = EXCLUDED.parts,
                  outline = EXCLUDED.outline, unversioned_authors = EXCLUDED.unversioned_authors,
                  updated_at = EXCLUDED.updated_at
    RETURNING xmin::text AS "rowVersion"`
  // An unsliced state's base64 and the outline's JSON.
  forgetLargeParameters((parts > 0 ? 0 : (bytes / 3) * 4) + (outlineJson?.length ?? 0))
  // The parts of the state this one replaces (none when it was one value: an index probe).
  await tx.$executeRaw`DELETE FROM document_state_parts WHERE document_id = ${documentId}::uuid`
  for (let n = 0; n < parts; n++) {
    await tx.$executeRaw`
      INSERT INTO document_state_parts (document_id, n, data) VALUES (${documentId}::uuid, ${n}, decode(${slice(n)}, 'base64'))`
    // Each slice's base64 let go at once, not held by Prisma's debug histories (db/statement-history.ts).
    forgetLargeParameters((STATE_WRITE_SLICE_BYTES / 3) * 4)
  }
  return written?.rowVersion ?? null
}

/**
 * Deletes merged log rows by the ids read, never by a range: under READ COMMITTED a row committed after
 * the read would match a range here, and be deleted without having been merged.
 */
async function deleteMerged(tx: Prisma.TransactionClient, ids: readonly bigint[]): Promise<void> {
  if (ids.length > 0)
    await tx.$executeRaw`
      DELETE FROM document_updates
       WHERE id = ANY(string_to_array(${ids.join(',')}, ',')::bigint[])`
}

/**
 * What a compaction read of the stored content, to merge on the documents' worker: the snapshot (read in
 * slices) with its stored outline and the row version (`xmin`) it was read at, and the log rows after it in
 * order (ids, bytes, their size together, authors; read in bounded statements, log-read.ts).
 * `readForCompaction` reads it; `storeCompacted` writes the merge.
 */
export type CompactionRead = {
  rowVersion: string | null
  snapshot: Uint8Array | null
  outline: StoredOutlineNode[] | null
  ids: bigint[]
  updates: Uint8Array[]
  updateBytes: number
  authors: Author[][]
}

export async function readForCompaction(
  db: Prisma.TransactionClient,
  documentId: string,
  recent?: RecentStates,
  known?: { id: bigint; state: Uint8Array },
  upTo?: bigint,
): Promise<CompactionRead> {
  // In slices (sliced-read.ts): the event loop parses a slice at a time, never the whole state's text;
  // not at all when this server wrote it a moment ago (`recent`, recent-states.ts) or it equals the
  // state of `known`, a version the caller holds.
  const snapshot = await readSnapshotState(db, documentId, recent, known)
  // `upTo`: the rows up to that one only (a version bounded at an agent's write, versions.ts).
  // In bounded statements too (log-read.ts). A row merged by another compaction meanwhile is left out;
  // that compaction replaced the snapshot, so the write of this one's merge is refused and read again.
  const log = await readLog(db, documentId, { upTo, authors: true })
  return {
    rowVersion: snapshot.rowVersion,
    snapshot: snapshot.snapshot,
    outline: Array.isArray(snapshot.outline) ? (snapshot.outline as StoredOutlineNode[]) : null,
    ids: log.ids,
    updates: log.updates,
    updateBytes: log.bytes,
    authors: log.authors,
  }
}

/** The merge of a CompactionRead, made on the documents' worker (worker/compact.ts). */
export type CompactedContent = {
  /** The merged state's bytes (base64-encoded a slice at a time as they are written). */
  state: Uint8Array
  title: string
  text: string
  /** Null: the snapshot is stored without an outline (a merge alone, worker/compact.ts `mergeOnly`). */
  outline: StoredOutlineNode[] | null
  changedAt?: Date
}

/**
 * Writes a compaction merged off the event loop: the new snapshot in place of the one `read` found, and
 * the log rows it merged deleted by id (rows appended since stay for the next compaction and every load).
 * Only if the snapshot row is still the one read (its `xmin`, checked under the row's lock): a restore,
 * an import or another instance's compaction that wrote it meanwhile wins, and nothing is written
 * (returns null; the log stays). `keepDerived`: title and search columns left as they are.
 */
export async function storeCompacted(
  tx: Prisma.TransactionClient,
  documentId: string,
  read: CompactionRead,
  content: CompactedContent,
  options: { keepDerived: boolean; version?: VersionRequest },
): Promise<{ bytes: number; versionId?: bigint; rowVersion: string | null } | null> {
  const [row] = await tx.$queryRaw<Array<{ rowVersion: string; authors: Author[] }>>`
    SELECT xmin::text AS "rowVersion", unversioned_authors AS authors
      FROM document_states WHERE document_id = ${documentId}::uuid FOR UPDATE`
  if ((row?.rowVersion ?? null) !== read.rowVersion) return null
  const authors = unionAuthors(row?.authors, ...read.authors)
  const version = await versionToTake(tx, documentId, options.version)
  const outlineJson = content.outline === null ? null : storableJSON(content.outline)
  const rowVersion = await writeStateRow(tx, documentId, content.state, outlineJson, version ? [] : authors)
  await deleteMerged(tx, read.ids)
  if (!options.keepDerived) await writeDerived(tx, documentId, content)
  const versionId = version ? await insertVersion(tx, documentId, version, authors, outlineJson) : undefined
  // The row version the write committed at: its state need not be read back (recent-states.ts).
  return { bytes: content.state.byteLength, versionId, rowVersion }
}

/**
 * Rewrites the stored outline alone (documents/outline-backfill.ts), only while the snapshot is still the
 * one it was derived from: every write of the state moves `updated_at`, so a compaction since then (which
 * wrote its own outline) is never overwritten. The state, its time and the documents row are left as they
 * are. Returns whether the outline was written.
 */
export async function writeStoredOutline(
  tx: Prisma.TransactionClient,
  documentId: string,
  outline: OutlineNode[],
  stateStoredAt: Date,
): Promise<boolean> {
  const json = storableJSON(outline)
  const written = await tx.$executeRaw`
    UPDATE document_states SET outline = ${json}::jsonb
     WHERE document_id = ${documentId}::uuid AND updated_at = ${stateStoredAt}`
  forgetLargeParameters(json.length)
  return written > 0
}
