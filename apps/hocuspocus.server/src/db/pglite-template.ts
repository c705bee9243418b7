/**
 * Migrated templates of the embedded database (PGLITE_TEMPLATES): a new data folder is made by loading a
 * tarball of an empty, fully migrated database instead of running initdb and then every migration.
 *
 * Why: a start on a new folder ran PGlite's initdb (a second, in-memory PostgreSQL whose folder is then
 * copied over) and applied each migration one statement at a time: 8–25 s on this machine, against ~3 s
 * for a start on an existing folder. A template is PGlite's own `dumpDataDir` tarball of a folder right
 * after its migrations, loaded with its own `loadDataDir` (no initdb). It is written by the first start on
 * a new folder, right after the migrations and before the first run's user, token and welcome document, so
 * it holds the schema and nothing of anyone's; not at install time, which would add initdb to every
 * `bun install`. It is named by what it depends on (`templateKey`): a change of any migration or of PGlite's
 * version names a new one, and an old one is never loaded. A template that does not load is removed and
 * the folder is made the long way.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { readMigrations } from './migrations.ts'
import { templateName } from './pglite-thread.ts'

let key: string | undefined

/**
 * What a template depends on: every migration (its name and SQL) and the version of PGlite that writes
 * the folder. The tests' templates (packages/test-support) are named by it too.
 */
export function templateKey(): string {
  if (key) return key
  const hash = createHash('sha256')
  for (const migration of readMigrations().migrationDirectories) {
    hash.update(`${migration.path}\n${JSON.stringify(migration.migrationFile.content)}\n`)
  }
  hash.update(`pglite ${pgliteVersion()}`)
  key = hash.digest('hex').slice(0, 16)
  return key
}

function pgliteVersion(): string {
  const pglitePackage = join(dirname(Bun.resolveSync('@electric-sql/pglite', import.meta.dir)), '..')
  const manifest = join(pglitePackage, 'package.json')
  return existsSync(manifest)
    ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version
    : 'unknown'
}

/** The template file for this code's migrations and PGlite in `folder` (PGLITE_TEMPLATES). */
export function templateFile(folder: string): string {
  return join(folder, `${templateName.prefix}${templateKey()}${templateName.suffix}`)
}

/** The template to make a new folder from, if one is kept; undefined otherwise. */
export function findTemplate(folder: string | undefined): string | undefined {
  if (!folder) return undefined
  const file = templateFile(folder)
  return existsSync(file) ? file : undefined
}

/** The template as PGlite's loadDataDir takes it (gzipped tarball). */
export async function readTemplate(file: string): Promise<Blob> {
  return new Blob([await Bun.file(file).arrayBuffer()], { type: 'application/x-gzip' })
}

/**
 * Saves a template of a freshly migrated database: `dump` writes the tarball to the path it is given (the
 * database's dumpDataDir), here a temporary name in the folder, renamed into place, so no process ever
 * loads half a template (two first starts at once: the last rename wins, both whole).
 */
export async function saveTemplate(folder: string, dump: (file: string) => Promise<number>): Promise<string> {
  mkdirSync(folder, { recursive: true, mode: 0o700 })
  const file = templateFile(folder)
  const partial = `${file}.${process.pid}.partial`
  try {
    await dump(partial)
    renameSync(partial, file)
  } finally {
    rmSync(partial, { force: true })
  }
  return file
}

/** Removes a template that did not load, so the next new folder is made the long way (and saves a new one). */
export function discardTemplate(file: string): void {
  rmSync(file, { force: true })
}
