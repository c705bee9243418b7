/**
 * A table's fingerprint: its row count and a hash of every value of every row, computed the same way on
 * any PostgreSQL (PGlite included), so a copy or a restore is checked value for value: document states,
 * the update log and versions byte for byte, tokens' hashes, chat text, timestamps to the millisecond.
 *
 * Each row is hashed by the database (md5 of the row's text form: only 32 characters a row cross the
 * wire) and the hashes are added up, so the result does not depend on the order rows come in (text keys
 * may sort differently under two databases' collations). Timestamps with a time zone are hashed in UTC,
 * so the sessions' TimeZone settings do not matter; every other type's text form is the same everywhere.
 */
import { type Column, ident, qualified, type Sql, type Table } from './catalog.ts'

/** Rows hashed per query. */
const DIGEST_PAGE_ROWS = 5_000

export type TableDigest = { rows: number; hash: string }

function textOf(column: Column): string {
  const name = ident(column.name)
  if (column.type.startsWith('timestamp') && column.type.endsWith('with time zone')) {
    return `(${name} AT TIME ZONE 'UTC')::text`
  }
  return `${name}::text`
}

export async function tableDigest(sql: Sql, table: Table): Promise<TableDigest> {
  const keys = table.key.map((c) => ident(c.name)).join(', ')
  const keyText = table.key.map((c) => `${ident(c.name)}::text`).join(', ')
  const after = `(${keys}) > (${table.key.map((c, i) => `$${i + 1}::${c.type}`).join(', ')})`
  const rowText = `ROW(${table.columns.map(textOf).join(', ')})::text`
  let sum = 0n
  let rows = 0
  let last: Array<string | null> | null = null
  for (;;) {
    const page = await sql(
      `SELECT ${keyText}, md5(${rowText}) FROM ${qualified(table.name)}
        ${last ? `WHERE ${after}` : ''} ORDER BY ${keys} LIMIT ${DIGEST_PAGE_ROWS}`,
      last ?? [],
    )
    for (const row of page) sum = (sum + BigInt(`0x${row[row.length - 1]}`)) % 2n ** 128n
    rows += page.length
    if (page.length < DIGEST_PAGE_ROWS) break
    last = page[page.length - 1]!.slice(0, table.key.length)
  }
  return { rows, hash: sum.toString(16).padStart(32, '0') }
}

/** The tables whose fingerprints differ between two databases, each with both fingerprints. */
export async function compareTables(
  source: Sql,
  target: Sql,
  tables: Table[],
): Promise<Array<{ table: string; source: TableDigest; target: TableDigest }>> {
  const differ: Array<{ table: string; source: TableDigest; target: TableDigest }> = []
  for (const table of tables) {
    const [a, b] = [await tableDigest(source, table), await tableDigest(target, table)]
    if (a.rows !== b.rows || a.hash !== b.hash) differ.push({ table: table.name, source: a, target: b })
  }
  return differ
}
