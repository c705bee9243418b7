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

/** An empty (unmigrated) database opened before the describe's tests and removed after them. */
function useEmptyDatabase(): () => Database {
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
  return () => db
}

describe(`migrations (${DATABASE_KIND})`, () => {
  const database = useEmptyDatabase()
  let db: Database
  beforeAll(() => {
    db = database()
  })

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
    // Each in two parts: one-chunk documents' chunks and longer documents'.
    for (const part of ['WHERE alone', 'WHERE \\(NOT alone\\)']) {
      const on = (column: string) => new RegExp(`USING gin \\(${column}\\) ${part}`, 'i')
      expect(indexes.some((i) => on('body gin_trgm_ops').test(i.indexdef))).toBe(true)
      expect(indexes.some((i) => on('stem').test(i.indexdef))).toBe(true)
    }
  })
})

describe(`the search chunks' alone migration on existing chunks (${DATABASE_KIND})`, () => {
  const ALONE = '20261204054530_search_chunks_alone'
  const database = useEmptyDatabase()
  let db: Database
  beforeAll(() => {
    db = database()
  })

  test('a document of one chunk gets alone, each chunk of a longer document not', async () => {
    const before = mkdtempSync(join(tmpdir(), 'collab-migrations-'))
    try {
      cpSync(MIGRATIONS_DIR, before, { recursive: true })
      const names = readMigrations(before).migrationDirectories.map((d) => d.path)
      expect(names).toContain(ALONE)
      for (const name of names.filter((n) => n >= ALONE)) rmSync(join(before, name), { recursive: true })
      await applyMigrations(db.adapterFactory, { dir: before })
    } finally {
      rmSync(before, { recursive: true, force: true })
    }
    await db.prisma.$executeRaw`INSERT INTO users (id, handle) VALUES (gen_random_uuid(), 'migrant')`
    for (const [slug, parts] of [
      ['one', 1],
      ['three', 3],
    ] as const) {
      await db.prisma.$executeRaw`
        INSERT INTO documents (id, room, slug, title, owner_id)
        SELECT gen_random_uuid(), ${slug}, ${slug}, ${slug}, id FROM users WHERE handle = 'migrant'`
      await db.prisma.$executeRaw`
        INSERT INTO document_search_chunks (document_id, key, n, prefix_chars, body, stem, words)
        SELECT d.id, 'k' || g, g, 0, 'text ' || g, to_tsvector('english', 'text'), to_tsvector('simple', 'text')
          FROM documents d, generate_series(0, ${parts - 1}::int) g WHERE d.slug = ${slug}`
    }
    await applyMigrations(db.adapterFactory)
    const rows = await db.prisma.$queryRaw<Array<{ slug: string; n: number; alone: boolean }>>`
      SELECT d.slug, c.n, c.alone FROM document_search_chunks c JOIN documents d ON d.id = c.document_id
       ORDER BY d.slug, c.n`
    expect(rows.map((r) => [r.slug, r.n, r.alone])).toEqual([
      ['one', 0, true],
      ['three', 0, false],
      ['three', 1, false],
      ['three', 2, false],
    ])
    // The column has no default left: a writer that forgets it is refused.
    const defaults = await db.prisma.$queryRaw<Array<{ d: string | null }>>`
      SELECT column_default AS d FROM information_schema.columns
       WHERE table_name = 'document_search_chunks' AND column_name = 'alone'`
    expect(defaults).toEqual([{ d: null }])
  })
})
