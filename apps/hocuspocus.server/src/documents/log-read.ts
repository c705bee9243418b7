/**
 * A document's update log read in bounded statements: no statement answers more than one read slice
 * (STATE_SLICE_BYTES of bytes, as base64 text), as the snapshot's reads (sliced-read.ts). The log is
 * usually small (a few KiB of keystrokes between compactions) and is then read in one statement, its
 * bytes beside the rows' sizes; but it may hold as many bytes as the snapshot before it is merged
 * (COMPACT_MIN_LOG_BYTES, collab/store-policy.ts), and one editor's update may be up to the 8 MiB message
 * limit: read as one `array_agg` value, a 20 MB log's ~27 MB of text was parsed by the driver and decoded
 * on the event loop in one piece. Past a slice, the rows are read in groups of at most a slice of bytes,
 * a row larger than a slice in slices of its own, a turn of the event loop between statements.
 */
import { Prisma, type PrismaClient } from '../db/generated/client.ts'
import { collectAfterLargeText } from '../db/statement-history.ts'
import { nextTurn } from '../turns.ts'
import type { Author } from './history-authors.ts'
import { bytesOfBase64, decodeSlice, STATE_SLICE_BYTES, sliceSql } from './sliced-read.ts'

type Db = Prisma.TransactionClient | PrismaClient

/** The log rows read, in id order. */
export type LogRows = {
  ids: bigint[]
  updates: Uint8Array[]
  /** The bytes of `updates` together. */
  bytes: number
  authors: Author[][]
  /**
   * Rows listed by the first statement and gone by the time their bytes were read: merged into the
   * snapshot meanwhile (a compaction). Left out of the answer; the snapshot, read after, holds them.
   */
  vanished: number
}

type Head = { id: bigint; bytes: number; parts: number; authors: Author[] | null; update: string | null }

/**
 * The log of `documentId`, in id order, up to row `upTo` when given; `authors` when asked (compactions
 * carry them into versions). One statement when the rows together hold at most a slice of bytes and none
 * is stored in parts.
 */
export async function readLog(
  db: Db,
  documentId: string,
  options: { upTo?: bigint; authors?: boolean } = {},
): Promise<LogRows> {
  const bound = options.upTo === undefined ? Prisma.empty : Prisma.sql`AND id <= ${options.upTo}`
  const authors = options.authors ? Prisma.sql`authors` : Prisma.sql`NULL::jsonb`
  // The bytes come with the list when they all fit in a slice and none is stored in parts (the windows
  // look at every row listed).
  const head = await db.$queryRaw<Head[]>`
    SELECT id, byte_size AS bytes, parts, ${authors} AS authors,
           CASE WHEN sum(byte_size) OVER () <= ${STATE_SLICE_BYTES}::int AND max(parts) OVER () = 0
                THEN encode("update", 'base64') END AS "update"
      FROM document_updates WHERE document_id = ${documentId}::uuid ${bound} ORDER BY id`
  const rows: LogRows = { ids: [], updates: [], bytes: 0, authors: [], vanished: 0 }
  const keep = (row: Head, update: Uint8Array) => {
    rows.ids.push(BigInt(row.id))
    rows.updates.push(update)
    rows.bytes += update.byteLength
    rows.authors.push(row.authors ?? [])
  }
  if (head.every((row) => row.update !== null)) {
    for (const row of head) keep(row, bytesOfBase64(row.update as string))
    return rows
  }
  // Past a slice: groups of consecutive rows of at most a slice of bytes each; a larger row, or one stored
  // in parts, alone, a slice at a time.
  const alone = (row: Head) => row.parts > 0 || Number(row.bytes) > STATE_SLICE_BYTES
  for (let start = 0; start < head.length; ) {
    let end = start + 1
    let bytes = Number(head[start]!.bytes)
    if (!alone(head[start]!))
      while (end < head.length && !alone(head[end]!) && bytes + Number(head[end]!.bytes) <= STATE_SLICE_BYTES)
        bytes += Number(head[end++]!.bytes)
    await nextTurn()
    const group = head.slice(start, end)
    const read = alone(group[0]!) ? await readLargeRow(db, group[0]!) : await readGroup(db, documentId, group)
    for (const row of group) {
      const update = read.get(BigInt(row.id))
      if (update) keep(row, update)
      else rows.vanished++
    }
    start = end
  }
  return rows
}

/** The bytes of a group of rows, by id; a row missing from the answer is gone. */
async function readGroup(db: Db, documentId: string, group: Head[]): Promise<Map<bigint, Uint8Array>> {
  const ids = group.map((row) => String(row.id)).join(',')
  const found = await db.$queryRaw<Array<{ id: bigint; update: string }>>`
    SELECT id, encode("update", 'base64') AS "update" FROM document_updates
     WHERE document_id = ${documentId}::uuid AND id = ANY(string_to_array(${ids}, ',')::bigint[])`
  const read = new Map<bigint, Uint8Array>()
  let chars = 0
  for (const row of found) {
    chars += row.update.length
    read.set(BigInt(row.id), bytesOfBase64(row.update))
  }
  collectAfterLargeText(chars)
  return read
}

/**
 * One row larger than a slice or stored in parts, read a slice at a time (sliced-read.ts `sliceSql`, as a
 * state's) into one buffer of its size; nothing when the row is gone before its last slice (a half-read
 * update is never used).
 */
async function readLargeRow(db: Db, row: Head): Promise<Map<bigint, Uint8Array>> {
  const size = Number(row.bytes)
  const update = new Uint8Array(size)
  let filled = 0
  for (let from = 0; from < size; from += STATE_SLICE_BYTES) {
    if (from > 0) await nextTurn()
    const [slice] = await db.$queryRaw<Array<{ part: string | null }>>`
      SELECT ${sliceSql('update', 'u', from)} AS part FROM document_updates u WHERE u.id = ${row.id}`
    if (!slice || slice.part === null) return new Map()
    collectAfterLargeText(slice.part.length)
    filled += decodeSlice(update, slice.part, from)
  }
  return new Map([[BigInt(row.id), filled === size ? update : update.subarray(0, filled)]])
}
