/**
 * A document's stored content, read and written through the service: loading the snapshot and the
 * update log after it (or only the stored outline), a compaction's whole state, a store's appended
 * update, and the title and search text refreshed between compactions. The SQL of the writes is in
 * store.ts; a write that may change the title drops the document's cached resolutions.
 */
import type { OutlineNode, StoredOutlineNode } from '@collab/doc-schema'
import { storedRevs, storedTotals, withWellFormedIds } from '@collab/doc-schema'
import * as Y from 'yjs'
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import { storableText } from '../db/storable-text.ts'
import { CONTENT_TRANSACTION } from '../db/transactions.ts'
import { nextTurn } from '../turns.ts'
import type { Author } from './history-authors.ts'
import { readLog } from './log-read.ts'
import { recentStatesOf } from './recent-states.ts'
import { documentSearchChunksInSlices } from './search.ts'
import { bytesOfBase64, readSnapshotState, STATE_SLICE_BYTES } from './sliced-read.ts'
import {
  appendUpdate,
  type DerivedContent,
  derivedTitle,
  type StoredContent,
  type StoreOptions,
  storeContent,
  writeDerived,
} from './store.ts'
import type { StoredParts } from './stored-parts.ts'

/**
 * Stored content for a load (loadForLoad): a large snapshot read in slices (`slicedSnapshot`, `snapshot`
 * null) with its size: bytes decoded from base64 a slice at a time as read (sliced-read.ts), to be
 * handed to the documents' worker (transferred, not copied) and applied there, off the event loop.
 */
export type LoadedParts = StoredParts & { slicedSnapshot?: Uint8Array | null; snapshotBytes?: number }

/**
 * The log's bytes in the loaders' one statement when they fit in a slice and no row is stored in parts
 * (`updates`; null otherwise, when the rows are read in bounded statements, log-read.ts) and its size
 * (`logBytes`), with `logBytesSql` joined.
 */
const smallLogSql = Prisma.sql`CASE WHEN l.bytes <= ${STATE_SLICE_BYTES}::bigint AND l.parts = 0
  THEN (SELECT array_agg(encode(u."update", 'base64') ORDER BY u.id)
          FROM document_updates u WHERE u.document_id = d.id) END AS updates, l.bytes AS "logBytes"`
const logBytesSql = Prisma.sql`CROSS JOIN LATERAL (SELECT coalesce(sum(u.byte_size), 0)::bigint AS bytes,
  coalesce(max(u.parts), 0) AS parts FROM document_updates u WHERE u.document_id = d.id) l`

/**
 * What the snapshot's stored outline says of the content: its section totals, keyed by rev (valid for the
 * sections the log did not change, whatever it changed elsewhere), and its revs only with nothing logged
 * after the snapshot (then it describes the content exactly).
 */
function outlineFacts(
  outline: unknown,
  updates: readonly Uint8Array[],
): Pick<StoredParts, 'totals' | 'revs'> {
  if (!Array.isArray(outline)) return { totals: undefined, revs: undefined }
  const nodes = outline as StoredOutlineNode[]
  return { totals: storedTotals(nodes), revs: updates.length === 0 ? storedRevs(nodes) : undefined }
}

export function createStoredContent(
  prisma: PrismaClient,
  deps: {
    /** Drops the cached resolutions of a document whose title may have changed (resolve.ts). */
    forgetResolutions: (documentId: string) => void
  },
) {
  const { forgetResolutions } = deps
  /** Snapshots this server wrote a moment ago, not read back (recent-states.ts). */
  const recent = recentStatesOf(prisma, STATE_SLICE_BYTES)

  /**
   * As loadStored, for a log past a slice: the log read in bounded statements (log-read.ts), then the
   * snapshot in slices after it (a compaction between the reads only makes the snapshot newer).
   */
  async function withSlicedLog(documentId: string): Promise<StoredParts> {
    await nextTurn()
    const { updates, bytes } = await readLog(prisma, documentId)
    const read = await readSnapshotState(prisma, documentId, recent)
    return {
      documentId,
      snapshot: read.snapshot,
      updates,
      updateBytes: bytes,
      ...outlineFacts(read.outline, updates),
    }
  }

  /**
   * The stored content as it is kept: the snapshot and the update log after it, in order (apply the
   * snapshot, then each update), with the section totals of the snapshot's outline. Null when the
   * document is gone. One query; bytes travel as base64 text: reading a bytea through PGlite cost ~140 ms
   * per MiB, base64 ~15 ms (the store step does the same). A snapshot larger than one slice
   * (STATE_SLICE_BYTES) is read after the log in slices, each decoded as it comes (readSnapshotState): read
   * whole, a 22 MB state's text held the event loop ~0.4 s in one piece (the driver's parse, the decoding).
   * The log first, as loadForLoad: a compaction between the reads only makes the snapshot newer, and
   * applying a log row the snapshot already holds changes nothing. A log past a slice is read in bounded
   * statements too (withSlicedLog).
   */
  async function loadStored(room: string): Promise<StoredParts | null> {
    if (storableText(room) !== room) return null // no room is named so (see resolveRoom)
    const rows = await prisma.$queryRaw<
      Array<{
        id: string
        deleted: boolean
        bytes: number | null
        state: string | null
        updates: string[] | null
        logBytes: number
        outline: StoredOutlineNode[] | null
      }>
    >`
      SELECT d.id::text AS id, d.deleted_at IS NOT NULL AS deleted, s.byte_size AS bytes,
             CASE WHEN s.parts = 0 AND s.byte_size <= ${STATE_SLICE_BYTES}::int
                  THEN encode(s.state, 'base64') END AS state,
             ${smallLogSql}, s.outline
        FROM documents d LEFT JOIN document_states s ON s.document_id = d.id
        ${logBytesSql}
       WHERE d.room = ${room}`
    const row = rows[0]
    if (!row || row.deleted) return null
    // A log past a slice: read in bounded statements, then the snapshot after it (log-read.ts).
    if (row.updates === null && Number(row.logBytes) > 0) return withSlicedLog(row.id)
    const updates = (row.updates ?? []).map(bytesOfBase64)
    let snapshot = row.state === null ? null : bytesOfBase64(row.state)
    let outline: unknown = row.outline
    // Larger than one slice, or stored in parts: read in slices.
    if (row.state === null && Number(row.bytes ?? 0) > 0) {
      const read = await readSnapshotState(prisma, row.id, recent)
      snapshot = read.snapshot
      outline = read.outline
    }
    return {
      documentId: row.id,
      snapshot,
      updates,
      updateBytes: updates.reduce((sum, update) => sum + update.byteLength, 0),
      ...outlineFacts(outline, updates),
    }
  }

  /**
   * The stored content for a load into a live document: as loadStored, except that a snapshot larger than
   * one slice (STATE_SLICE_BYTES) is read in slices (sliced-read.ts, `slicedSnapshot`), to be decoded on
   * the documents' worker with the split of the load (collab/persistence-extension.ts): read whole, an
   * 8 MiB snapshot's 11 MB of text was parsed by the driver and decoded here in one piece (~0.1-0.25 s of
   * CPU). The log is read first: a compaction between the two reads only makes the snapshot newer, and
   * applying a log row the snapshot already holds changes nothing.
   */
  async function loadForLoad(room: string): Promise<LoadedParts | null> {
    if (storableText(room) !== room) return null // no room is named so (see resolveRoom)
    const rows = await prisma.$queryRaw<
      Array<{
        id: string
        deleted: boolean
        bytes: number | null
        updates: string[] | null
        logBytes: number
      }>
    >`
      SELECT d.id::text AS id, d.deleted_at IS NOT NULL AS deleted, s.byte_size AS bytes, ${smallLogSql}
        FROM documents d LEFT JOIN document_states s ON s.document_id = d.id
        ${logBytesSql}
       WHERE d.room = ${room}`
    const row = rows[0]
    if (!row || row.deleted) return null
    if (Number(row.bytes ?? 0) <= STATE_SLICE_BYTES) return loadStored(room)
    let updates: Uint8Array[]
    if (row.updates === null && Number(row.logBytes) > 0) {
      await nextTurn()
      updates = (await readLog(prisma, row.id)).updates
    } else updates = (row.updates ?? []).map(bytesOfBase64)
    const read = await readSnapshotState(prisma, row.id, recent)
    return {
      documentId: row.id,
      snapshot: null,
      slicedSnapshot: read.snapshot,
      snapshotBytes: read.bytes,
      updates,
      updateBytes: updates.reduce((sum, update) => sum + update.byteLength, 0),
      ...outlineFacts(read.outline, updates),
    }
  }

  return {
    loadStored,
    loadForLoad,

    /**
     * Which stored content the document has now, without reading it: the snapshot's write time and size and
     * the log's row ids (every write of the state moves `updated_at`, every store appends a row with a new
     * id), so two answers are equal exactly when the content is; a whole read kept for that content is
     * still right (modules/mcp/infra/documents.ts). Null when the document is gone.
     */
    async storedRevision(room: string): Promise<{ documentId: string; revision: string } | null> {
      if (storableText(room) !== room) return null // no room is named so (see resolveRoom)
      const rows = await prisma.$queryRaw<Array<{ id: string; deleted: boolean; revision: string }>>`
        SELECT d.id::text AS id, d.deleted_at IS NOT NULL AS deleted,
               concat_ws(':', to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYYMMDDHH24MISSUS'), s.byte_size,
                         (SELECT string_agg(u.id::text, ',' ORDER BY u.id)
                            FROM document_updates u WHERE u.document_id = d.id)) AS revision
          FROM documents d LEFT JOIN document_states s ON s.document_id = d.id
         WHERE d.room = ${room}`
      const row = rows[0]
      if (!row || row.deleted) return null
      return { documentId: row.id, revision: `${row.id}:${row.revision}` }
    },

    /** The latest stored Yjs state (snapshot and log merged into one update), or null when gone. */
    async loadState(room: string): Promise<{ documentId: string; state: Uint8Array | null } | null> {
      const stored = await loadStored(room)
      if (!stored) return null
      const parts = [stored.snapshot, ...stored.updates].filter((p): p is Uint8Array => p !== null)
      const state =
        parts.length === 0 ? null : parts.length === 1 ? (parts[0] as Uint8Array) : Y.mergeUpdates(parts)
      return { documentId: stored.documentId, state }
    },

    /**
     * The outline stored with the document's state, without reading the state: null when the document is
     * gone; `outline` null when none was stored (then decode the state).
     */
    async loadOutline(room: string): Promise<{ documentId: string; outline: OutlineNode[] | null } | null> {
      if (storableText(room) !== room) return null // no room is named so (see resolveRoom)
      const rows = await prisma.$queryRaw<
        Array<{
          id: string
          deleted: boolean
          outline: OutlineNode[] | null
          hasState: boolean
          logged: boolean
        }>
      >`
        SELECT d.id::text AS id, d.deleted_at IS NOT NULL AS deleted, s.outline,
               s.document_id IS NOT NULL AS "hasState",
               EXISTS (SELECT 1 FROM document_updates u WHERE u.document_id = d.id) AS logged
          FROM documents d LEFT JOIN document_states s ON s.document_id = d.id
         WHERE d.room = ${room}`
      const row = rows[0]
      if (!row || row.deleted) return null
      // The stored outline describes the snapshot: with updates logged after it, it may be stale (null:
      // decode the content). No state at all is an empty document, whose outline is empty.
      // Stored before ids were checked, an outline may hold a forged id: never hand one out.
      if (row.logged) return { documentId: row.id, outline: null }
      const outline = row.hasState ? row.outline && withWellFormedIds(row.outline) : []
      return { documentId: row.id, outline }
    },

    /**
     * Stores a document's whole state with its title, search text and outline (compaction, with
     * `compact`: the log rows it covers are deleted). Returns the bytes stored. Throws when the database does.
     */
    async storeState(
      documentId: string,
      content: StoredContent,
      options: StoreOptions = {},
    ): Promise<{ bytes: number; versionId?: bigint }> {
      const stored = await prisma.$transaction(
        (tx) => storeContent(tx, documentId, content, options),
        CONTENT_TRANSACTION,
      )
      forgetResolutions(documentId) // the title may have changed
      return stored
    },

    /**
     * Appends one Yjs update to the document's log (a store) with the authors of its changes; the row's
     * id (log rows are merged in id order). Throws when the database does.
     */
    async appendUpdate(
      documentId: string,
      update: Uint8Array,
      authors: readonly Author[] = [],
    ): Promise<bigint> {
      return appendUpdate(prisma, documentId, update, authors)
    },

    /** Writes the title and search columns and chunks derived from the live content (one transaction). */
    async refreshDerived(documentId: string, content: DerivedContent): Promise<void> {
      // Chunked before the transaction, a turn of the event loop between pieces: in it, PGlite's one
      // session would wait for the slices too.
      const chunks =
        content.chunks ?? (await documentSearchChunksInSlices(derivedTitle(content.title), content.text))
      await prisma.$transaction(
        (tx) => writeDerived(tx, documentId, { ...content, chunks }),
        CONTENT_TRANSACTION,
      )
      forgetResolutions(documentId) // the title may have changed
    },
  }
}
