/** Starts the real server (real port, real database) in this process, with test-friendly timings. */
import { afterAll, beforeAll, expect } from 'bun:test'
import type { Config } from '@collab/hocuspocus.server/src/config.ts'
import { createLogger, type Logger } from '@collab/hocuspocus.server/src/logger.ts'
import { type RunningServer, startServer } from '@collab/hocuspocus.server/src/server.ts'
import {
  createTestDatabase,
  TEST_DATABASE_URL,
  type TestDatabase,
  type TestDatabaseOptions,
} from './database.ts'
import { connectProvider, type TestProvider } from './provider.ts'

/** Redis for the two-instance tests; they also need a shared PostgreSQL (TEST_DATABASE_URL). */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || undefined
/** Whether the two-instance tests can run here (`describe.skipIf(!TWO_INSTANCES)`). */
export const TWO_INSTANCES = Boolean(TEST_REDIS_URL && TEST_DATABASE_URL)

export function testConfig(
  db: Pick<TestDatabase, 'dataDir' | 'databaseUrl'>,
  overrides: Partial<Config> = {},
): Config {
  return {
    host: '127.0.0.1',
    port: 0,
    dataDir: db.dataDir,
    databaseUrl: db.databaseUrl,
    redisUrl: undefined,
    logLevel: 'silent',
    migrateOnStart: true,
    storeDebounceMs: 50,
    storeMaxDebounceMs: 200,
    // Title and search text at every store, so a test can search for what it just wrote; the lag has
    // its own tests (update-log.test.ts).
    searchRefreshMs: 0,
    shutdownTimeoutMs: 10_000,
    publicUrl: undefined,
    mcpAllowedOrigins: [],
    ...overrides,
  }
}

/**
 * The production composition root (server.ts: HTTP, WebSocket and MCP on one port, MCP at
 * `${server.url}/mcp`) on a test database. `logger`: a test that reads the server's log lines.
 */
export async function startTestServer(
  db: Pick<TestDatabase, 'dataDir' | 'databaseUrl'>,
  overrides: Partial<Config> = {},
  logger: Logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
): Promise<RunningServer> {
  return startServer(testConfig(db, overrides), logger)
}

export type FreshServer = { server: RunningServer; db: TestDatabase; close(): Promise<void> }

/**
 * A fresh database (createTestDatabase) and a server on it, for code outside a test file's hooks (the
 * benchmarks); `close` stops the server and removes the database.
 */
export async function startFreshServer(
  database: TestDatabaseOptions = {},
  overrides: Partial<Config> = {},
  logger?: Logger,
): Promise<FreshServer> {
  const db = await createTestDatabase(database)
  try {
    const server = await startTestServer(db, overrides, logger)
    return {
      server,
      db,
      async close() {
        await server.stop()
        await db.cleanup()
      },
    }
  } catch (error) {
    await db.cleanup()
    throw error
  }
}

/**
 * Providers a file opens on `serverUrl()` (each returned once synced; `before` runs on it first, e.g. to
 * listen for stateless messages from the start), all destroyed after the file's tests.
 */
export function useProviders(serverUrl: () => string) {
  const opened: TestProvider[] = []
  afterAll(() => {
    for (const p of opened.splice(0)) p.destroy()
  })
  return async (room: string, token: string, before?: (p: TestProvider) => void): Promise<TestProvider> => {
    const p = connectProvider(serverUrl(), room, token)
    opened.push(p)
    before?.(p)
    await p.ready
    return p
  }
}

/**
 * The usual test file's setup: before its tests, a fresh database (createTestDatabase) and a server on
 * it, handed to `use`; after them, both stopped and removed. A later beforeAll (they run in order) can
 * seed what the tests need.
 */
export function useTestServer(
  use: (server: RunningServer, db: TestDatabase) => void,
  overrides: Partial<Config> = {},
  logger?: Logger,
): void {
  let fresh: FreshServer | undefined
  beforeAll(async () => {
    fresh = await startFreshServer({}, overrides, logger)
    use(fresh.server, fresh.db)
  }, 60_000)
  afterAll(() => fresh?.close(), 60_000)
}

/** A test file's two instances and their database, once started (read them inside tests and hooks). */
export interface ServerPair {
  readonly a: RunningServer
  readonly b: RunningServer
  readonly db: TestDatabase
}

/**
 * Two instances on one fresh database, stopped and removed after the file's tests: A applies the
 * migrations, B starts on the migrated database. `configs` gives each one's settings once the database
 * exists; `use` (when given) is handed both before the file's tests.
 */
export function useServerPair(
  configs: () => [Partial<Config>, Partial<Config>],
  use?: (a: RunningServer, b: RunningServer, db: TestDatabase) => void,
): ServerPair {
  let db: TestDatabase | undefined
  let a: RunningServer | undefined
  let b: RunningServer | undefined
  beforeAll(async () => {
    db = await createTestDatabase()
    const [forA, forB] = configs()
    a = await startTestServer(db, forA)
    b = await startTestServer(db, { ...forB, migrateOnStart: false })
    use?.(a, b, db)
  }, 60_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await db?.cleanup()
  }, 60_000)
  return {
    get a() {
      return started(a)
    },
    get b() {
      return started(b)
    },
    get db() {
      return started(db)
    },
  }
}

/**
 * Two instances on one PostgreSQL database, sharing live documents through Redis (TEST_REDIS_URL), as
 * several instances run in production (`useServerPair`, both on `overrides`). Use inside
 * `describe.skipIf(!TWO_INSTANCES)`.
 */
export function useTwoTestServers(
  overrides: Partial<Config> = {},
  use?: (a: RunningServer, b: RunningServer, db: TestDatabase) => void,
): ServerPair {
  const config = { redisUrl: TEST_REDIS_URL, ...overrides }
  return useServerPair(() => [config, config], use)
}

function started<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the server is not started (use it inside tests)')
  return value
}

/**
 * A server a test file can stop and start again on the same database (the SIGTERM path, then a new
 * process's start), with an owner whose token the editors it connects use. Editors are destroyed before
 * each restart and after the file.
 */
export function useRestartableServer(ownerHandle: string) {
  let db: TestDatabase | undefined
  let server: RunningServer | undefined
  let owner: Awaited<ReturnType<typeof userWithToken>> | undefined
  const editors: TestProvider[] = []
  beforeAll(async () => {
    db = await createTestDatabase()
    server = await startTestServer(db)
    owner = await userWithToken(server, ownerHandle)
  }, 60_000)
  afterAll(async () => {
    for (const editor of editors.splice(0)) editor.destroy()
    await server?.stop()
    await db?.cleanup()
  }, 60_000)
  return {
    get server(): RunningServer {
      return started(server)
    },
    get db(): TestDatabase {
      return started(db)
    },
    get owner() {
      return started(owner)
    },
    /** A provider of the owner's on `room`, synced. */
    async connect(room: string): Promise<TestProvider> {
      const editor = connectProvider(started(server).url, room, started(owner).token)
      editors.push(editor)
      await editor.ready
      return editor
    },
    /** Destroys the editors connected so far (their documents may then unload). */
    closeEditors(): void {
      for (const editor of editors.splice(0)) editor.destroy()
    },
    /** stop() (the SIGTERM path), then a new server on the same database. */
    async restart(overrides: Partial<Config> = {}, logger?: Logger): Promise<{ unstored: string[] }> {
      for (const editor of editors.splice(0)) editor.destroy()
      const stopped = await started(server).stop()
      server = await startTestServer(started(db), overrides, logger)
      return stopped
    },
  }
}

/**
 * Two instances sharing a document: a new user `handle` creates it on A, and it is open in an editor on A
 * and one on B, both synced. The caller destroys the editors.
 */
export async function editorsOnBoth(a: RunningServer, b: RunningServer, handle: string, title: string) {
  const owner = await userWithToken(a, handle)
  const created = await a.services.documents.create(owner.user.id, { title })
  if (created.kind === 'error') throw new Error(created.message)
  const room = created.value.room
  const onA = connectProvider(a.url, room, owner.token)
  const onB = connectProvider(b.url, room, owner.token)
  await Promise.all([onA.ready, onB.ready])
  return { owner, room, onA, onB }
}

/**
 * What a later start finds stored after both instances stop: B, then A, each stopped (the SIGTERM path)
 * with nothing left unstored, then a new server on their database (no migrations: they ran) handed to
 * `read`, and stopped after it.
 */
export async function readAfterBothStop<T>(
  pair: ServerPair,
  read: (reader: RunningServer) => Promise<T>,
): Promise<T> {
  expect((await pair.b.stop()).unstored).toEqual([])
  expect((await pair.a.stop()).unstored).toEqual([])
  const reader = await startTestServer(pair.db, { migrateOnStart: false })
  try {
    return await read(reader)
  } finally {
    await reader.stop()
  }
}

/** A user with a token of the given scopes. */
export async function userWithToken(
  server: RunningServer,
  handle: string,
  scopes: Array<'read' | 'write' | 'suggest'> = ['read', 'write'],
) {
  const user = await server.services.users.add(handle)
  if (user.kind === 'error') throw new Error(user.message)
  const issued = await server.services.tokens.issue(user.value.id, { scopes })
  if (issued.kind === 'error') throw new Error(issued.message)
  return { user: user.value, token: issued.value.token, tokenId: issued.value.record.id }
}

/** Polls until `check` passes or the deadline passes (then throws with the last failure). */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      return await check()
    } catch (error) {
      last = error
    }
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}: ${(last as Error)?.message ?? last}`)
    await Bun.sleep(25)
  }
}
