/**
 * A new embedded-database folder is made from a migrated template (PGLITE_TEMPLATES, db/pglite-template.ts)
 * instead of initdb and every migration. Real server processes on new folders: the first saves the template
 * (taken before its first run made a user, token and welcome document), the second is made from it and holds
 * every migration and only its own first run's data, and a damaged template is removed, the folder made the
 * long way and a good template saved again. The embedded database only. In the slow tier: what it tests is
 * a new folder made the long way, twice (initdb and every migration, ~8 s of CPU each), which cannot be made
 * smaller.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DATABASE_KIND, TEST_DATA_ROOT } from '@collab/test-support/database'
import { spawnServer } from '@collab/test-support/process'
import { openDatabase } from '../db/client.ts'
import { readMigrations } from '../db/migrations.ts'
import { templateFile } from '../db/pglite-template.ts'

const root = mkdtempSync(join(TEST_DATA_ROOT, 'collab-template-test-'))
const templates = join(root, 'templates')

afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Starts a server on a new folder, waits until it serves, stops it; its log lines and data folder. */
async function startOnNewFolder(name: string): Promise<{ dataDir: string; log: string }> {
  const dataDir = join(root, name)
  // A new folder made the long way takes seconds of CPU (initdb, every migration): a generous wait.
  const server = await spawnServer(
    { DATA_DIR: dataDir, DATABASE_URL: '', PGLITE_TEMPLATES: templates },
    { startTimeoutMs: 200_000 },
  )
  try {
    expect((await fetch(`${server.url}/health`)).status).toBe(200)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
  return { dataDir, log: server.stderr() }
}

/** What the folder's database holds: migrations applied, users, documents and their titles. */
async function contentsOf(dataDir: string) {
  const db = await openDatabase({ kind: 'pglite', dir: join(dataDir, 'pglite') })
  try {
    const [migrations] = await db.prisma.$queryRawUnsafe<Array<{ n: number }>>(
      'SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL',
    )
    return {
      migrations: migrations?.n ?? 0,
      users: (await db.prisma.user.findMany({ select: { handle: true } })).map((user) => user.handle),
      documents: await db.prisma.document.count(),
    }
  } finally {
    await db.close()
  }
}

describe.skipIf(DATABASE_KIND !== 'pglite')('new database folders from a template', () => {
  const migrationCount = readMigrations().migrationDirectories.length

  test('the first start saves one before its first run; the next new folder is made from it, with its own first run only', async () => {
    const first = await startOnNewFolder('first')
    expect(first.log).toContain('saved a template for new database folders')
    expect(existsSync(templateFile(templates))).toBe(true)

    const second = await startOnNewFolder('second')
    expect(second.log).toContain('new database folder made from a template')
    expect(second.log).not.toContain('saved a template')
    const made = await contentsOf(second.dataDir)
    // Every migration, and exactly one first run's user and welcome document: its own, not the first's too.
    expect(made.migrations).toBe(migrationCount)
    expect(made).toEqual(await contentsOf(first.dataDir))
    expect(made.users).toHaveLength(1)
    expect(made.documents).toBe(1)
    // Each folder's first run made its own token.
    expect(readFileSync(join(second.dataDir, 'first-run-token'), 'utf8')).not.toBe(
      readFileSync(join(first.dataDir, 'first-run-token'), 'utf8'),
    )
  }, 240_000)

  test('a damaged template is removed, the folder made the long way, and a good template saved again', async () => {
    mkdirSync(templates, { recursive: true })
    writeFileSync(templateFile(templates), 'not a tarball')
    const started = await startOnNewFolder('after-damage')
    expect(started.log).toContain('did not load')
    expect(started.log).toContain('saved a template for new database folders')
    expect((await contentsOf(started.dataDir)).migrations).toBe(migrationCount)
    expect(readFileSync(templateFile(templates)).byteLength).toBeGreaterThan(1_000_000)
  }, 240_000)
})
