/**
 * One server per test process, for the files that can share it. `bun run test` runs a worker's files one
 * after another in one process (`--no-isolate`), and a server start costs ~1.8 s of CPU (database, Prisma,
 * Hocuspocus, the MCP module): a file that only needs *a* server, not one of its own, opts in with
 * `useSharedServer` and gets this process's one, started at the first such file.
 *
 * What a sharing file must not do: take fixed user handles (`alice`: the next file's `alice` would collide;
 * `share.handle('alice')` gives this file its own), count things server-wide (metrics, OAuth
 * registrations, rate limits, rows of a table), list documents it does not own expecting only its own
 * (find_documents sees other files' public documents), start it with settings of its own, or stop it.
 * Such files keep their own server (`useTestServer`).
 *
 * Bun ends a test worker without an 'exit' event, so no hook can stop the server: the process's end stops
 * it (its sockets and its database's thread go with the process). What outlives the process, the data
 * folder and, on PostgreSQL, the database, is removed by a small process of its own (shared-server-reaper.ts)
 * that waits for this one to end.
 */
import { beforeAll } from 'bun:test'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import type { RunningServer } from '@collab/hocuspocus.server/src/server.ts'
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from './database.ts'
import { startTestServer } from './server.ts'

/** A file's share of the process's server: the server, and names of the file's own on it. */
export type ServerShare = {
  server: RunningServer
  /** `base` made this file's own (`alice` -> `alice-f3`): a user handle no other file on the server takes. */
  handle(base: string): string
  /** Where the server's database is: for a CLI process run on it (`@collab/test-support/cli` useSharedCliServer). */
  database: Pick<TestDatabase, 'dataDir' | 'databaseUrl'>
}

let running: Promise<RunningServer> | undefined
/** The shared server's database, once started. */
let runningDb: TestDatabase | undefined
let files = 0

/** This process's shared server, started at the first call (a failed start is tried again by the next). */
export function sharedServer(): Promise<RunningServer> {
  running ??= start()
  running.catch(() => {
    running = undefined
  })
  return running
}

async function start(): Promise<RunningServer> {
  const db = await createTestDatabase()
  removeWhenThisProcessEnds(db)
  const server = await startTestServer(db)
  runningDb = db
  return server
}

/**
 * The removal of `db` once this process has ended: a detached process whose standard input is a pipe from
 * this one, which it reads until the pipe closes (this process ended, however it ended).
 */
function removeWhenThisProcessEnds(db: TestDatabase): void {
  const name = db.databaseUrl ? new URL(db.databaseUrl).pathname.slice(1) : ''
  const args = [join(import.meta.dir, 'shared-server-reaper.ts'), db.dataDir, TEST_DATABASE_URL ?? '', name]
  const reaper = spawn(process.execPath, args, { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
  reaper.unref()
}

/**
 * The file's share of the process's server, returned (its `server` read inside tests and hooks) and handed
 * to `use` before the file's tests (a later beforeAll can seed what they need). Each call is a new share:
 * its handles are unique on the server.
 */
export function useSharedServer(use?: (share: ServerShare) => void): ServerShare {
  const tag = `f${(files++).toString(36)}`
  let server: RunningServer | undefined
  const share: ServerShare = {
    get server(): RunningServer {
      if (server === undefined) throw new Error('the shared server is not started (use it inside tests)')
      return server
    },
    handle: (base) => `${base}-${tag}`,
    get database() {
      if (server === undefined || runningDb === undefined)
        throw new Error('the shared server is not started (use it inside tests)')
      return { dataDir: runningDb.dataDir, databaseUrl: runningDb.databaseUrl }
    },
  }
  beforeAll(async () => {
    server = await sharedServer()
    use?.(share)
  }, 60_000)
  return share
}
