/**
 * What an idle server keeps in memory that it need not (issue 30, idle RSS). Two things a start used to
 * hold for the process's life: Prisma's query compiler imported as a JavaScript module whose 4.6 MB base64
 * string (and the module's source) stayed in memory after the WebAssembly was compiled from it, and PGlite's
 * 6 MB file bundle read into memory on the server's thread to be handed to the database thread. Now
 * scripts/prisma-generate.ts writes the compiler's binary beside the generated client, which reads it from
 * that file, and the database thread is handed the bundle's file and reads it itself.
 *
 * A real server process (main.ts) on a migrated database, asked what it has loaded
 * (fixtures/loaded-modules.preload.ts, on SIGUSR2) once its /health answered: its queries ran, so the query
 * compiler was loaded, and not from the base64 module. RSS itself is measured by the bench (bench/notes.md),
 * not asserted here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { type ServerProcess, spawnServer } from '@collab/test-support/process'
import { eventually } from '@collab/test-support/server'
import { loadPgliteAssets } from '../db/pglite-thread.ts'
import { stopProcess } from './reliability/faults-support.ts'

const PRELOAD = join(import.meta.dir, 'fixtures/loaded-modules.preload.ts')

async function loadedModules(server: ServerProcess): Promise<string[]> {
  const before = server.stderr().length
  server.proc.kill('SIGUSR2')
  let line: string | undefined
  await eventually(() => {
    line = /loaded-modules: (.*)\n/.exec(server.stderr().slice(before))?.[1]
    expect(line).toBeDefined()
  })
  return JSON.parse(line!) as string[]
}

describe(`an idle server's memory (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: ServerProcess | undefined
  beforeAll(async () => {
    db = await createTestDatabase()
    server = await spawnServer({
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? '',
      LOG_LEVEL: 'warn',
      REDIS_URL: '',
      BUN_OPTIONS: `--preload ${PRELOAD}`,
    })
  }, 60_000)
  afterAll(async () => {
    await stopProcess(server)
    await db?.cleanup()
  }, 60_000)

  test("Prisma's query compiler is loaded from its binary file, not from a base64 module kept in memory", async () => {
    const running = server!
    // /health answers 200 once its database probe did; that and the start's own queries went through
    // Prisma's client, so its compiler is loaded.
    expect((await fetch(`${running.url}/health`)).status).toBe(200)
    const loaded = await loadedModules(running)
    expect(loaded.some((path) => path.endsWith('/src/server.ts'))).toBe(true)
    expect(loaded.some((path) => /@prisma\/client\/runtime\/query_compiler_\w+\.\w+\.m?js$/.test(path))).toBe(
      true,
    )
    expect(loaded.filter((path) => path.includes('wasm-base64'))).toEqual([])
  }, 60_000)

  test("PGlite's file bundle is handed to the database thread as its file, not as bytes held by the server's thread", async () => {
    const { fsBundle } = await loadPgliteAssets()
    // A file-backed Blob (Bun.file) has the file's path as its name; bytes read into a Blob have none.
    expect((fsBundle as Blob & { name?: string }).name ?? '').toEndWith('/pglite.data')
  }, 60_000)
})
