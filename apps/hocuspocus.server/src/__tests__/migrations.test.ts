/**
 * Migrations through the wasm engine: applied on an empty database, recorded, and idempotent. Whether
 * schema.prisma and the migrations agree is migrations-diff.slow.test.ts (the slow tier).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { type Database, openDatabase } from '../db/client.ts'
import {
  applyMigrations,
  MIGRATIONS_DIR,
  migrationStatus,
  migrationsUpToDate,
  readMigrations,
} from '../db/migrations.ts'

describe(`migrations (${DATABASE_KIND})`, () => {
  let testDb: TestDatabase
  let db: Database

  beforeAll(async () => {
    testDb = await createTestDatabase({ empty: true })
    db = await openDatabase(
      testDb.databaseUrl
        ? { kind: 'postgres', url: testDb.databaseUrl }
        : { kind: 'pglite', dir: `${testDb.dataDir}/pglite` },
    )
  }, 60_000)
  afterAll(async () => {
    await db?.close()
    await testDb?.cleanup()
  }, 60_000)

  test('an empty database reports every migration pending', async () => {
    const status = await migrationStatus(db.adapterFactory)
    const all = readMigrations().migrationDirectories.map((d) => d.path)
    expect(all.length).toBeGreaterThan(0)
    expect(status.pending).toEqual(all)
  })

  test('apply runs every migration once, records it, and a second apply does nothing', async () => {
    const all = readMigrations().migrationDirectories.map((d) => d.path)
    expect(await applyMigrations(db.adapterFactory)).toEqual(all)
    const recorded = await db.prisma.$queryRaw<Array<{ migration_name: string }>>`
      SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name`
    expect(recorded.map((r) => r.migration_name)).toEqual(all)
    expect(await applyMigrations(db.adapterFactory)).toEqual([])
    const status = await migrationStatus(db.adapterFactory)
    expect(status).toMatchObject({ pending: [], failed: [], edited: [] })
  })

  test('an up-to-date database is recognised without the engine; a pending or edited migration is not', async () => {
    expect(await migrationsUpToDate(db.adapterFactory)).toBe(true)
    const copy = mkdtempSync(join(tmpdir(), 'collab-migrations-'))
    try {
      cpSync(MIGRATIONS_DIR, copy, { recursive: true })
      const names = readMigrations(copy).migrationDirectories.map((d) => d.path)
      const first = join(copy, names[0]!, 'migration.sql')
      const original = readFileSync(first, 'utf8')
      writeFileSync(first, `${original}\n-- edited after it was applied\n`)
      expect(await migrationsUpToDate(db.adapterFactory, copy)).toBe(false)
      writeFileSync(first, original)
      expect(await migrationsUpToDate(db.adapterFactory, copy)).toBe(true)
      mkdirSync(join(copy, '99991231000000_later'))
      writeFileSync(
        join(copy, '99991231000000_later', 'migration.sql'),
        'CREATE TABLE later_probe (id int);\n',
      )
      expect(await migrationsUpToDate(db.adapterFactory, copy)).toBe(false)
      // The engine still applies what is pending, and then the quick check agrees.
      expect(await applyMigrations(db.adapterFactory, { dir: copy })).toEqual(['99991231000000_later'])
      expect(await migrationsUpToDate(db.adapterFactory, copy)).toBe(true)
      expect(await migrationsUpToDate(db.adapterFactory)).toBe(true)
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })

  test('the schema is usable: the search chunks and their trigram and full-text GIN indexes exist', async () => {
    const indexes = await db.prisma.$queryRaw<Array<{ indexdef: string }>>`
      SELECT indexdef FROM pg_indexes WHERE tablename = 'document_search_chunks'`
    expect(indexes.some((i) => /USING gin \(body gin_trgm_ops\)/i.test(i.indexdef))).toBe(true)
    expect(indexes.some((i) => /USING gin \(stem\)/i.test(i.indexdef))).toBe(true)
  })
})
