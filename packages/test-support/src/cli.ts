/**
 * CLI tests' common ground: a database for a describe block, the environment a CLI process needs to open
 * it, and `cli`, which runs one command as a real process on it.
 */
import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { RunningServer } from '@collab/hocuspocus.server/src/server.ts'
import type { Services } from '@collab/hocuspocus.server/src/services.ts'
import { createTestDatabase, TEST_DATA_ROOT, type TestDatabase, withServices } from './database.ts'
import { type Run, runCli, type ServerProcess, spawnServer } from './process.ts'
import { type ServerShare, useSharedServer } from './shared-server.ts'

export type CliDatabase<T> = {
  db: TestDatabase
  /** DATA_DIR and DATABASE_URL of `db`, for a CLI or server process. */
  env: Record<string, string>
  /** The server process holding the database, when the block asked for one (`server: true`). */
  server: ServerProcess | undefined
  /** The server holding the database in this process, when the block asked for one (`server: 'in-process'`). */
  inProcess: RunningServer | undefined
  /** What `prepare` returned. */
  prepared: T
  cli(...args: string[]): Promise<Run>
}

/**
 * Before the block's tests: a fresh database, then `prepare` with its services open (users, documents:
 * one opening of the database instead of a CLI process per step), then, with `server`, a server process
 * on it (`true`), so each command is handed to the running server. With `server: 'in-process'` the server
 * is started in this process (startServer, as the other tests' servers: no second process loading the
 * server's modules) and `prepare` runs on its services. After them the server stops and the database is
 * removed.
 */
export function useCliDatabase<T = undefined>(
  options: { prepare?: (services: Services) => Promise<T>; server?: boolean | 'in-process' } = {},
): CliDatabase<T> {
  const run: CliDatabase<T> = {
    db: undefined as unknown as TestDatabase,
    env: {},
    server: undefined,
    inProcess: undefined,
    prepared: undefined as T,
    cli: (...args) => runCli(args, run.env),
  }
  beforeAll(async () => {
    run.db = await createTestDatabase()
    run.env = { DATA_DIR: run.db.dataDir, DATABASE_URL: run.db.databaseUrl ?? '' }
    const { prepare } = options
    if (options.server === 'in-process') {
      // Prepared through the server's own services: no opening of the database before it.
      const { startTestServer } = await import('./server.ts')
      run.inProcess = await startTestServer(run.db)
      if (prepare) run.prepared = await prepare(run.inProcess.services)
      return
    }
    if (prepare) run.prepared = await withServices(run.db, prepare)
    if (options.server) run.server = await spawnServer(run.env)
  }, 60_000)
  afterAll(async () => {
    run.server?.proc.kill('SIGTERM')
    await run.server?.proc.exited
    await run.inProcess?.stop()
    await run.db?.cleanup()
  }, 60_000)
  return run
}

export type SharedCliServer<T> = {
  /** The file's share of the process's server (`share.handle('ann')`: this file's own handle). */
  share: ServerShare
  /** DATA_DIR and DATABASE_URL of the shared server's database, for a CLI process. */
  env: Record<string, string>
  /** A folder of the file's own for the files its commands read and write (the data folder is shared). */
  folder: string
  /** What `prepare` returned. */
  prepared: T
  cli(...args: string[]): Promise<Run>
}

/**
 * CLI commands on the process's shared server (shared-server.ts), for a file that needs a server holding
 * the database but not one of its own: on the embedded database each command is handed to it through its
 * admin socket, as to any running server; on PostgreSQL the command connects itself. `prepare` seeds
 * what the file's tests start from through the server's services (its users by `share.handle`). The
 * sharing rules of useSharedServer hold: the file's own handles, nothing counted server-wide.
 */
export function useSharedCliServer<T = undefined>(
  options: { prepare?: (services: Services, share: ServerShare) => Promise<T> } = {},
): SharedCliServer<T> {
  const run: SharedCliServer<T> = {
    share: useSharedServer(),
    env: {},
    folder: '',
    prepared: undefined as T,
    cli: (...args) => runCli(args, run.env),
  }
  beforeAll(async () => {
    const { dataDir, databaseUrl } = run.share.database
    run.env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '' }
    run.folder = mkdtempSync(join(TEST_DATA_ROOT, 'collab-cli-'))
    if (options.prepare) run.prepared = await options.prepare(run.share.server.services, run.share)
  }, 60_000)
  afterAll(() => {
    if (run.folder) rmSync(run.folder, { recursive: true, force: true })
  })
  return run
}
