/**
 * Rows from one database into another with the same schema: each table in pages along its primary key,
 * a page bounded by bytes (COPY_PAGE_BYTES) as well as rows, so a folder of large documents is copied in
 * bounded memory; then every sequence set to the source's value, so the next id the target hands out is
 * the one the source would have.
 *
 * Every value travels as PostgreSQL's text form (`column::text` out, `$n::type` in), which round-trips
 * every type exactly (pg_dump's plain format relies on the same): arrays, enums, json, tsvector,
 * timestamps with their offset; bytea as base64 (`encode`/`decode`: a third smaller than its hex text form,
 * and PGlite wrote a page of Yjs states ~30% faster so, measured).
 */
import { type Catalog, type Column, ident, qualified, type Sql, type Table } from './catalog.ts'

/** Bytes of values (as text) one page carries at most, unless one row alone is larger. */
export const COPY_PAGE_BYTES = 8 * 1024 * 1024
/** Rows one page carries at most (and rows whose sizes one planning query reads). */
export const COPY_PAGE_ROWS = 1_000
/** Parameters in one INSERT: PostgreSQL's protocol allows 65,535. */
const MAX_INSERT_PARAMS = 30_000

export type CopyProgress = (event: {
  table: string
  copied: number
  total: number
  bytes: number
  done: boolean
}) => void

const list = (columns: Column[], f: (c: Column) => string) => columns.map(f).join(', ')

/** A column's value as the text a page carries. */
const readAs = (c: Column) =>
  c.type === 'bytea' ? `encode(${ident(c.name)}, 'base64')` : `${ident(c.name)}::text`
/** Parameter n as the column's value. */
const writeAs = (c: Column, n: number) =>
  c.type === 'bytea' ? `decode($${n}, 'base64')` : `$${n}::${c.type}`

/** `(a, b) > ($1::ta, $2::tb)`: after the row whose key is `after` (parameters from `first`). */
function keyAfter(table: Table, first: number): string {
  const left = list(table.key, (c) => ident(c.name))
  const right = table.key.map((c, i) => `$${first + i}::${c.type}`).join(', ')
  return `(${left}) > (${right})`
}

function keyAtMost(table: Table, first: number): string {
  const left = list(table.key, (c) => ident(c.name))
  const right = table.key.map((c, i) => `$${first + i}::${c.type}`).join(', ')
  return `(${left}) <= (${right})`
}

const orderByKey = (table: Table) => list(table.key, (c) => ident(c.name))

/**
 * What one value weighs as text, from the stored value's header (no detoasting): bytea is sent as base64
 * (four characters for three bytes), text as itself; other types by their stored size.
 */
function weight(column: Column): string {
  const name = ident(column.name)
  if (column.type === 'bytea') return `COALESCE(octet_length(${name}), 0) * 4 / 3`
  if (column.type === 'text' || column.type.startsWith('character varying')) {
    return `COALESCE(octet_length(${name}), 0)`
  }
  return `COALESCE(pg_column_size(${name}), 0)`
}

/**
 * The key of the last row of the next page after `after` (null: the table is done), and its row count:
 * rows are taken while their bytes stay within COPY_PAGE_BYTES, at least one.
 */
async function planPage(
  source: Sql,
  table: Table,
  after: Array<string | null> | null,
): Promise<{ last: Array<string | null>; rows: number; bytes: number } | null> {
  const keys = list(table.key, (c) => `${ident(c.name)}::text`)
  const bytes = table.columns.map((c) => `${weight(c)} + 8`).join(' + ')
  const rows = await source(
    `SELECT ${keys}, (${bytes})::text FROM ${qualified(table.name)}
      ${after ? `WHERE ${keyAfter(table, 1)}` : ''} ORDER BY ${orderByKey(table)} LIMIT ${COPY_PAGE_ROWS}`,
    after ?? [],
  )
  if (rows.length === 0) return null
  let total = 0
  let taken = 0
  for (const row of rows) {
    const size = Number(row[row.length - 1])
    if (taken > 0 && total + size > COPY_PAGE_BYTES) break
    total += size
    taken++
  }
  return { last: rows[taken - 1]!.slice(0, table.key.length), rows: taken, bytes: total }
}

async function insertRows(target: Sql, table: Table, columns: Column[], rows: Array<Array<string | null>>) {
  const perInsert = Math.max(1, Math.floor(MAX_INSERT_PARAMS / columns.length))
  const names = list(columns, (c) => ident(c.name))
  for (let start = 0; start < rows.length; start += perInsert) {
    const chunk = rows.slice(start, start + perInsert)
    const values = chunk
      .map((_, r) => `(${columns.map((c, i) => writeAs(c, r * columns.length + i + 1)).join(', ')})`)
      .join(', ')
    // OVERRIDING SYSTEM VALUE: an identity column takes the source's value (ignored where there is none).
    await target(
      `INSERT INTO ${qualified(table.name)} (${names}) OVERRIDING SYSTEM VALUE VALUES ${values}`,
      chunk.flat(),
    )
  }
}

/** Copies one table; returns the rows copied. */
export async function copyTable(
  source: Sql,
  target: Sql,
  table: Table,
  total: number,
  progress: CopyProgress,
): Promise<number> {
  const columns = table.columns.filter((c) => !c.generated)
  const select = list(columns, readAs)
  let after: Array<string | null> | null = null
  let copied = 0
  let bytes = 0
  for (;;) {
    const page = await planPage(source, table, after)
    if (!page) break
    const conditions = [after ? keyAfter(table, 1) : '', keyAtMost(table, after ? table.key.length + 1 : 1)]
    const rows = await source(
      `SELECT ${select} FROM ${qualified(table.name)}
        WHERE ${conditions.filter(Boolean).join(' AND ')} ORDER BY ${orderByKey(table)}`,
      [...(after ?? []), ...page.last],
    )
    await insertRows(target, table, columns, rows)
    copied += rows.length
    bytes += page.bytes
    after = page.last
    progress({ table: table.name, copied, total, bytes, done: false })
  }
  progress({ table: table.name, copied, total, bytes, done: true })
  return copied
}

export async function countRows(sql: Sql, table: string): Promise<number> {
  const [row] = await sql(`SELECT count(*)::text FROM ${qualified(table)}`)
  return Number(row?.[0] ?? 0)
}

/** Sets every sequence of the target to the source's position (its last value and whether it was used). */
export async function copySequences(source: Sql, target: Sql, catalog: Catalog): Promise<void> {
  for (const name of catalog.sequences) {
    const [row] = await source(`SELECT last_value::text, is_called::text FROM ${qualified(name)}`)
    if (!row) continue
    await target(`SELECT setval($1::regclass, $2::bigint, $3::boolean)::text`, [
      qualified(name),
      row[0]!,
      row[1]!,
    ])
  }
}
