/**
 * Restoring an embedded database backup (PGlite's dumpDataDir tarball, written by the process that holds
 * the folder: client.ts / pglite-worker.ts) into a data folder: PGlite loads the tarball into a new folder
 * beside the target (loadDataDir), opens it once (PostgreSQL's recovery replays the write-ahead log the
 * tarball holds), and only then is it renamed into place, so a failed restore leaves the target as it was.
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { PGLITE_EXTENSIONS } from '../pglite-extensions.ts'
import { BackupRefused } from './files.ts'

export type RestoredFolder = {
  /** Where the folder that was there went (with --force), or null. */
  setAside: string | null
  /** Tables and their rows in the restored database (a check that it opens and answers). */
  tables: Array<{ name: string; rows: number }>
}

const isEmptyFolder = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0

export async function restorePgliteFolder(
  file: string,
  dir: string,
  force: boolean,
): Promise<RestoredFolder> {
  if (!isEmptyFolder(dir) && !force) {
    throw new BackupRefused(
      `DATA_DIR: ${dir} already holds a database; restore into a new DATA_DIR, or add --force to set the current one aside (renamed, not deleted) and restore in its place`,
    )
  }
  const building = `${dir}.restoring-${process.pid}`
  rmSync(building, { recursive: true, force: true })
  let tables: RestoredFolder['tables'] = []
  try {
    const tarball = new Blob([await Bun.file(file).arrayBuffer()], { type: 'application/x-gzip' })
    const pglite = await PGlite.create(building, { extensions: PGLITE_EXTENSIONS, loadDataDir: tarball })
    try {
      const rows = await pglite.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY c.relname`,
      )
      for (const { name } of rows.rows) {
        const count = await pglite.query<{ n: number }>(`SELECT count(*)::int AS n FROM "public"."${name}"`)
        tables.push({ name, rows: count.rows[0]?.n ?? 0 })
      }
    } finally {
      await pglite.close()
    }
  } catch (error) {
    rmSync(building, { recursive: true, force: true })
    tables = []
    throw new Error(`${file}: PGlite could not load it as a data folder: ${(error as Error).message}`)
  }
  let setAside: string | null = null
  if (!isEmptyFolder(dir)) {
    setAside = `${dir}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`
    renameSync(dir, setAside)
  } else rmSync(dir, { recursive: true, force: true })
  renameSync(building, dir)
  return { setAside, tables }
}
