/**
 * CLI tests' common ground: a database for a describe block, the environment a CLI process needs to open
 * it, and `cli`, which runs one command as a real process on it.
 */
import { afterAll, beforeAll } from 'bun:test'
import type { Services } from '@collab/hocuspocus.server/src/services.ts'
import { createTestDatabase, type TestDatabase, withServices } from './database.ts'
import { type Run, runCli, type ServerProcess, spawnServer } from './process.ts'

export type CliDatabase<T> = {
  db: TestDatabase
  /** DATA_DIR and DATABASE_URL of `db`, for a CLI or server process. */
  env: Record<string, string>
  /** The server process holding the database, when the block asked for one. */
  server: ServerProcess | undefined
  /** What `prepare` returned. */
  prepared: T
  cli(...args: string[]): Promise<Run>
}

/**
 * Before the block's tests: a fresh database, then `prepare` with its services open (users, documents:
 * one opening of the database instead of a CLI process per step), then, with `server`, a server process
 * on it, so each command is handed to the running server. After them the server stops and the database
 * is removed.
 */
export function useCliDatabase<T = undefined>(
  options: { prepare?: (services: Services) => Promise<T>; server?: boolean } = {},
): CliDatabase<T> {
  const run: CliDatabase<T> = {
    db: undefined as unknown as TestDatabase,
    env: {},
    server: undefined,
    prepared: undefined as T,
    cli: (...args) => runCli(args, run.env),
  }
  beforeAll(async () => {
    run.db = await createTestDatabase()
    run.env = { DATA_DIR: run.db.dataDir, DATABASE_URL: run.db.databaseUrl ?? '' }
    const { prepare } = options
    if (prepare) run.prepared = await withServices(run.db, prepare)
    if (options.server) run.server = await spawnServer(run.env)
  }, 60_000)
  afterAll(async () => {
    run.server?.proc.kill('SIGTERM')
    await run.server?.proc.exited
    await run.db?.cleanup()
  }, 60_000)
  return run
}
