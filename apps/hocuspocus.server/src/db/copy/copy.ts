/**
 * `db copy`: everything in the embedded database into an empty PostgreSQL database, in one run.
 *
 * 1. The target must be empty (no table with a row, whatever its schema), then it is migrated with the
 *    project's migrations, and both databases must have the same migrations applied and the same tables
 *    and columns.
 * 2. In one transaction on the target: every table of the schema (read from the catalog, so a table added
 *    later is copied without a change here), parents before the tables that refer to them, in pages
 *    bounded by bytes; every sequence set to the source's position; then every table's row count and
 *    fingerprint (digest.ts: every value of every row) compared with the source's. Any difference rolls
 *    the whole copy back, so the target is either a verified copy or as empty as it was.
 *
 * Nothing is left out, ephemeral rows included (sign-in sessions, so people stay signed in; invites and
 * authorization codes until they expire; rate-limit counts; paging snapshots): the server secrets that
 * sign cookies are rows too, and a copy without some tables would need a rule per table to stay true.
 */
import { PrismaPg } from '@prisma/adapter-pg'
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { applyMigrations } from '../migrations.ts'
import {
  appliedMigrations,
  type Catalog,
  readCatalog,
  type Sql,
  type Table,
  tablesWithRows,
} from './catalog.ts'
import { adapterSql, postgresSql, redactedUrl } from './connections.ts'
import { type CopyProgress, copySequences, copyTable, countRows } from './copy-tables.ts'
import { compareTables } from './digest.ts'
import { CopyRefused } from './refused.ts'

export { CopyRefused }

export type CopyReport = {
  tables: Array<{ name: string; rows: number }>
  sequences: number
  bytes: number
}

/** What differs between two catalogs' tables and columns (empty when they match). */
function schemaDifferences(source: Catalog, target: Catalog): string[] {
  const describe = (t: Table) => t.columns.map((c) => `${c.name} ${c.type}`).join(', ')
  const targets = new Map(target.tables.map((t) => [t.name, t]))
  const out: string[] = []
  for (const table of source.tables) {
    const other = targets.get(table.name)
    if (!other) out.push(`table ${table.name} is missing in the target`)
    else if (describe(other) !== describe(table))
      out.push(`table ${table.name} has other columns in the target`)
  }
  for (const table of target.tables) {
    if (!source.tables.some((t) => t.name === table.name))
      out.push(`table ${table.name} is only in the target`)
  }
  return out
}

/** Refuses a target that cannot be reached or is not empty; the copy checks again, this is to fail fast. */
export async function checkTarget(targetUrl: string): Promise<void> {
  let target: Awaited<ReturnType<typeof postgresSql>> | undefined
  try {
    try {
      target = await postgresSql(targetUrl)
    } catch (error) {
      throw new CopyRefused(`--to: cannot connect to ${redactedUrl(targetUrl)}: ${(error as Error).message}`)
    }
    refuseOccupied(targetUrl, await tablesWithRows(target.sql))
  } finally {
    await target?.close()
  }
}

function refuseOccupied(targetUrl: string, occupied: string[]): void {
  if (occupied.length > 0) {
    throw new CopyRefused(
      `--to: ${redactedUrl(targetUrl)} is not empty (rows in ${occupied.slice(0, 5).join(', ')}${occupied.length > 5 ? ', …' : ''}); copy into a new database (createdb NAME), before any server has started on it: a server's first start writes a user and a welcome document`,
    )
  }
}

export async function copyDatabase(options: {
  source: SqlMigrationAwareDriverAdapterFactory
  targetUrl: string
  progress: CopyProgress
  note: (message: string) => void
}): Promise<CopyReport> {
  const { targetUrl, progress, note } = options
  const shown = redactedUrl(targetUrl)
  const source = await adapterSql(options.source)
  let target: Awaited<ReturnType<typeof postgresSql>> | undefined
  try {
    try {
      target = await postgresSql(targetUrl)
    } catch (error) {
      throw new CopyRefused(`--to: cannot connect to ${shown}: ${(error as Error).message}`)
    }
    refuseOccupied(targetUrl, await tablesWithRows(target.sql))
    const applied = await applyMigrations(new PrismaPg({ connectionString: targetUrl, max: 2 }), {
      onWarning: (m) => note(`target migrations: ${m}`),
    })
    if (applied.length) note(`migrated the target: ${applied.join(', ')}`)
    const [fromMigrations, toMigrations] = [
      await appliedMigrations(source.sql),
      await appliedMigrations(target.sql),
    ]
    if (fromMigrations.join() !== toMigrations.join()) {
      const missing = toMigrations.filter((m) => !fromMigrations.includes(m))
      throw new CopyRefused(
        missing.length
          ? `DATA_DIR: the embedded database lacks migrations ${missing.join(', ')}; run \`bun run cli -- db migrate\` (without DATABASE_URL) first`
          : `--to: ${shown} lacks migrations ${fromMigrations.filter((m) => !toMigrations.includes(m)).join(', ')} that the embedded database has: run db copy from the checkout that made the folder`,
      )
    }
    const catalog = await readCatalog(source.sql)
    const differences = schemaDifferences(catalog, await readCatalog(target.sql))
    if (differences.length) {
      throw new CopyRefused(`--to: the schemas differ after migrating: ${differences.join('; ')}`)
    }
    return await copyInTransaction(source.sql, target.sql, catalog, { progress, note, shown })
  } finally {
    await target?.close()
    await source.close()
  }
}

async function copyInTransaction(
  source: Sql,
  target: Sql,
  catalog: Catalog,
  { progress, note, shown }: { progress: CopyProgress; note: (message: string) => void; shown: string },
): Promise<CopyReport> {
  await target('BEGIN')
  let committed = false
  try {
    // Again inside the transaction: a server started on the target meanwhile has written its first rows.
    const occupied = await tablesWithRows(target)
    if (occupied.length > 0)
      throw new CopyRefused(`--to: ${shown} got rows while migrating (${occupied.join(', ')})`)
    const report: CopyReport = { tables: [], sequences: catalog.sequences.length, bytes: 0 }
    for (const table of catalog.tables) {
      const total = await countRows(source, table.name)
      const rows = await copyTable(source, target, table, total, (event) => {
        if (event.done) report.bytes += event.bytes
        progress(event)
      })
      report.tables.push({ name: table.name, rows })
    }
    await copySequences(source, target, catalog)
    note(`verifying: every table's row count and the hash of every value, in both databases`)
    const differ = await compareTables(source, target, catalog.tables)
    if (differ.length > 0) {
      const described = differ.map(
        (d) =>
          `${d.table} (${d.source.rows} rows, ${d.source.hash.slice(0, 8)} → ${d.target.rows}, ${d.target.hash.slice(0, 8)})`,
      )
      throw new Error(`verification failed, the copy was rolled back: ${described.join('; ')}`)
    }
    await target('COMMIT')
    committed = true
    return report
  } finally {
    if (!committed) await target('ROLLBACK').catch(() => [])
  }
}
