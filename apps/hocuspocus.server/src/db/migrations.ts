/**
 * Migrations in Prisma's standard layout (prisma/migrations/<timestamp>_<name>/migration.sql plus
 * migration_lock.toml), applied and diagnosed through the wasm schema engine. Applied migrations are
 * recorded in `_prisma_migrations`, exactly as `prisma migrate deploy` would.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils'
import { createSchemaEngine, type EngineLog } from './schema-engine.ts'

export const PRISMA_DIR = resolve(import.meta.dir, '../../../../prisma')
export const SCHEMA_PATH = join(PRISMA_DIR, 'schema.prisma')
export const MIGRATIONS_DIR = join(PRISMA_DIR, 'migrations')

const NO_FILTERS = { externalTables: [], externalEnums: [] }

export type MigrationList = {
  baseDir: string
  lockfile: { path: string; content: string | null }
  shadowDbInitScript: string
  migrationDirectories: Array<{
    path: string
    migrationFile: { path: string; content: { tag: 'ok'; value: string } | { tag: 'error'; value: string } }
  }>
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationList {
  const lockPath = join(dir, 'migration_lock.toml')
  const names = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort()
    : []
  return {
    baseDir: dir,
    // The engine refuses a directory without a lock file; the project has one provider, so say it.
    lockfile: {
      path: 'migration_lock.toml',
      content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : 'provider = "postgresql"\n',
    },
    shadowDbInitScript: '',
    migrationDirectories: names.map((name) => {
      const file = join(dir, name, 'migration.sql')
      return {
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: existsSync(file)
            ? { tag: 'ok', value: readFileSync(file, 'utf8') }
            : { tag: 'error', value: `${file} is missing` },
        },
      }
    }),
  }
}

function readSchema() {
  return { path: SCHEMA_PATH, content: readFileSync(SCHEMA_PATH, 'utf8') }
}

/** Engine log lines are JSON; pass on warnings and errors only. */
function engineLog(onWarning: (message: string) => void): EngineLog {
  return (line) => {
    try {
      const parsed = JSON.parse(line) as { level?: string; fields?: { message?: string } }
      if (parsed.level === 'WARN' || parsed.level === 'ERROR') onWarning(parsed.fields?.message ?? line)
    } catch {
      onWarning(line)
    }
  }
}

export type MigrateOptions = { dir?: string; onWarning?: (message: string) => void }

/**
 * Whether every migration in the directory is recorded as applied, with the checksum of its file as it is
 * now, and no attempt is recorded as failed: then `migrate deploy` has nothing to do. Read with one query
 * on the application's own adapter, without the schema engine (loading and starting it is ~0.2–0.9 s of
 * every server start and CLI command). Anything else (no table yet, a pending, failed or edited
 * migration, a query error) answers false, and the engine decides as before.
 */
export async function migrationsUpToDate(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  dir = MIGRATIONS_DIR,
): Promise<boolean> {
  const list = readMigrations(dir)
  const expected = new Map<string, string>()
  for (const migration of list.migrationDirectories) {
    if (migration.migrationFile.content.tag !== 'ok') return false
    // Prisma's checksum: SHA-256 of the file's bytes, in hex.
    expected.set(
      migration.path,
      new Bun.CryptoHasher('sha256').update(migration.migrationFile.content.value).digest('hex'),
    )
  }
  let adapter: Awaited<ReturnType<SqlMigrationAwareDriverAdapterFactory['connect']>> | undefined
  try {
    adapter = await adapterFactory.connect()
    const result = await adapter.queryRaw({
      sql: 'SELECT migration_name, checksum, finished_at IS NOT NULL AS finished FROM _prisma_migrations WHERE rolled_back_at IS NULL',
      args: [],
      argTypes: [],
    })
    const applied = new Map<string, string>()
    for (const [name, checksum, finished] of result.rows as Array<[string, string, boolean]>) {
      if (!finished) return false
      applied.set(name, checksum)
    }
    for (const [name, checksum] of expected) if (applied.get(name) !== checksum) return false
    return true
  } catch {
    return false
  } finally {
    await adapter?.dispose().catch(() => {})
  }
}

/** Applies every pending migration; returns the names applied (empty when up to date). */
export async function applyMigrations(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  options: MigrateOptions = {},
): Promise<string[]> {
  if (await migrationsUpToDate(adapterFactory, options.dir)) return []
  const { engine, close } = await createSchemaEngine(
    readSchema(),
    adapterFactory,
    engineLog(options.onWarning ?? (() => {})),
  )
  try {
    const result = await engine.applyMigrations({
      migrationsList: readMigrations(options.dir) as never,
      filters: NO_FILTERS,
    })
    return result.appliedMigrationNames
  } finally {
    await close()
  }
}

export type MigrationStatus = {
  total: number
  pending: string[]
  failed: string[]
  edited: string[]
  /** Applied to the database but absent from prisma/migrations (a newer server wrote them). */
  unknown: string[]
}

export async function migrationStatus(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  options: MigrateOptions = {},
): Promise<MigrationStatus> {
  const list = readMigrations(options.dir)
  const { engine, close } = await createSchemaEngine(
    readSchema(),
    adapterFactory,
    engineLog(options.onWarning ?? (() => {})),
  )
  try {
    const out = await engine.diagnoseMigrationHistory({
      migrationsList: list as never,
      optInToShadowDatabase: false,
      filters: NO_FILTERS,
    })
    const history = out.history
    const pending =
      history?.diagnostic === 'databaseIsBehind' || history?.diagnostic === 'historiesDiverge'
        ? history.unappliedMigrationNames
        : []
    const unknown =
      history?.diagnostic === 'migrationsDirectoryIsBehind' || history?.diagnostic === 'historiesDiverge'
        ? history.unpersistedMigrationNames
        : []
    return {
      total: list.migrationDirectories.length,
      pending,
      failed: out.failedMigrationNames,
      edited: out.editedMigrationNames,
      unknown,
    }
  } finally {
    await close()
  }
}

/**
 * SQL that takes the migrations directory to the current schema (empty string when nothing changed).
 * Runs against a throwaway in-memory PGlite as the shadow database.
 */
export async function diffSchemaAgainstMigrations(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  options: MigrateOptions = {},
): Promise<string> {
  const schema = readSchema()
  const { engine, close } = await createSchemaEngine(
    schema,
    adapterFactory,
    engineLog(options.onWarning ?? (() => {})),
  )
  try {
    const result = await engine.diff({
      from: { tag: 'migrations', ...readMigrations(options.dir) } as never,
      to: { tag: 'schemaDatamodel', files: [schema] },
      script: true,
      exitCode: null,
      filters: NO_FILTERS,
    } as never)
    const sql = result.stdout ?? ''
    return sql.includes('This is an empty migration') ? '' : sql.trim()
  } finally {
    await close()
  }
}
