/** Migrations through the wasm engine: applied on an empty database, recorded, and idempotent. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Database, openDatabase } from '../db/client.ts'
import { applyMigrations, migrationStatus, readMigrations } from '../db/migrations.ts'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from './helpers/database.ts'

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

  test('the schema is usable: the full-text column and its GIN index exist', async () => {
    const indexes = await db.prisma.$queryRaw<Array<{ indexdef: string }>>`
      SELECT indexdef FROM pg_indexes WHERE tablename = 'documents'`
    expect(indexes.some((i) => /USING gin \(search_vector\)/i.test(i.indexdef))).toBe(true)
  })
})
