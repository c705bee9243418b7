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

/** `postgresUrl`: the server to create the database on; null forces PGlite. Default: TEST_DATABASE_URL. */
export async function createTestDatabase(
  options: { postgresUrl?: string | null } = {},
): Promise<TestDatabase> {
  const postgresUrl = options.postgresUrl === undefined ? TEST_DATABASE_URL : options.postgresUrl
  const dataDir = mkdtempSync(join(tmpdir(), 'collab-test-'))
  if (!postgresUrl) {
    return {
      dataDir,
      databaseUrl: undefined,
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  }
  const name = `collab_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  const admin = new Client({ connectionString: postgresUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  await admin.end()
  const url = new URL(postgresUrl)
  url.pathname = `/${name}`
  return {
    dataDir,
    databaseUrl: url.toString(),
    async cleanup() {
      rmSync(dataDir, { recursive: true, force: true })
      await dropDatabase(postgresUrl, name)
    },
  }
}

/**
 * DROP DATABASE … WITH (FORCE), tried again for a few seconds: FORCE cannot end an autovacuum worker
 * (it runs as a superuser), so a drop that meets one fails with "must be a member of the role whose
 * process is being terminated" until the worker is done.
 */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const c = new Client({ connectionString: serverUrl })
    await c.connect()
    try {
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      return
    } catch (error) {
      if (attempt >= 20) throw error
    } finally {
      await c.end()
    }
    await Bun.sleep(500)
  }
}
