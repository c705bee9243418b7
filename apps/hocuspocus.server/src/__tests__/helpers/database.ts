/**
 * A fresh database per test file: a new PGlite folder, or, when TEST_DATABASE_URL is set, a new
 * PostgreSQL database created on that server (dropped afterwards). Tests that use this run on both.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from 'pg'

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined
export const DATABASE_KIND = TEST_DATABASE_URL ? 'postgres' : 'pglite'

export type TestDatabase = { dataDir: string; databaseUrl: string | undefined; cleanup(): Promise<void> }

export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'collab-test-'))
  if (!TEST_DATABASE_URL) {
    return {
      dataDir,
      databaseUrl: undefined,
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  }
  const name = `collab_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const admin = new Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  await admin.end()
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return {
    dataDir,
    databaseUrl: url.toString(),
    async cleanup() {
      rmSync(dataDir, { recursive: true, force: true })
      const c = new Client({ connectionString: TEST_DATABASE_URL })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await c.end()
    },
  }
}
