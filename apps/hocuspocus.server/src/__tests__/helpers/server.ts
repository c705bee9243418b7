/** Starts the real server (real port, real database) in this process, with test-friendly timings. */
import { afterAll, beforeAll } from 'bun:test'
import type { Config } from '../../config.ts'
import { createLogger } from '../../logger.ts'
import { type RunningServer, startServer } from '../../server.ts'
import { createTestDatabase, type TestDatabase } from './database.ts'

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
    shutdownTimeoutMs: 10_000,
    publicUrl: undefined,
    mcpAllowedOrigins: [],
    ...overrides,
  }
}

export async function startTestServer(
  db: Pick<TestDatabase, 'dataDir' | 'databaseUrl'>,
  overrides: Partial<Config> = {},
): Promise<RunningServer> {
  return startServer(testConfig(db, overrides), createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'))
}

/**
 * The usual test file's setup: before its tests, a fresh database (createTestDatabase) and a server on
 * it, handed to `use`; after them, both stopped and removed. A later beforeAll (they run in order) can
 * seed what the tests need.
 */
export function useTestServer(use: (server: RunningServer) => void, overrides: Partial<Config> = {}): void {
  let db: TestDatabase | undefined
  let server: RunningServer | undefined
  beforeAll(async () => {
    db = await createTestDatabase()
    server = await startTestServer(db, overrides)
    use(server)
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await db?.cleanup()
  }, 60_000)
}

/** A user with a token of the given scopes. */
export async function userWithToken(
  server: RunningServer,
  handle: string,
  scopes: Array<'read' | 'write'> = ['read', 'write'],
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
