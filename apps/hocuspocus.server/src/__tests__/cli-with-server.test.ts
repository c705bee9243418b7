/**
 * The CLI while a server runs on the same data: with the embedded database the command is handed to the
 * server through its admin socket (the folder is never opened twice); with PostgreSQL it connects itself.
 * Either way the running server sees the result at once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from './helpers/database.ts'
import { runCli, type ServerProcess, spawnServer } from './helpers/process.ts'

describe(`CLI while the server runs (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: ServerProcess
  let env: Record<string, string>

  beforeAll(async () => {
    db = await createTestDatabase()
    env = { DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' }
    server = await spawnServer(env)
  }, 60_000)
  afterAll(async () => {
    server?.proc.kill('SIGTERM')
    await server?.proc.exited
    await db?.cleanup()
  }, 60_000)

  test('a user and token made by the CLI work against the running server', async () => {
    expect((await runCli(['user', 'add', 'walt'], env)).exitCode).toBe(0)
    const issued = await runCli(['token', 'issue', 'walt'], env)
    expect(issued.exitCode).toBe(0)
    const res = await fetch(`${server.url}/api/documents`, {
      headers: { Authorization: `Bearer ${issued.stdout.trim()}` },
    })
    expect(res.status).toBe(200)
    const bad = await runCli(['user', 'add', 'walt'], env)
    expect(bad.exitCode).toBe(2) // errors keep their exit code through the admin channel
    expect(bad.stderr).toContain('already exists')
  })

  test.skipIf(DATABASE_KIND !== 'pglite')('the admin socket is private to this machine user', () => {
    const socket = join(db.dataDir, 'admin.sock')
    expect(existsSync(socket)).toBe(true)
    expect(statSync(socket).mode & 0o077).toBe(0)
  })
})
