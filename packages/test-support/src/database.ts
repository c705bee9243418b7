import { afterAll, beforeAll } from 'bun:test'
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { type Database, databaseTarget, openDatabase } from '@collab/hocuspocus.server/src/db/client.ts'
import { acquireDataDirLock } from '@collab/hocuspocus.server/src/db/data-dir-lock.ts'
import type { PrismaClient } from '@collab/hocuspocus.server/src/db/generated/client.ts'
import { applyMigrations } from '@collab/hocuspocus.server/src/db/migrations.ts'
import { templateKey } from '@collab/hocuspocus.server/src/db/pglite-template.ts'
import { createServices, type Services } from '@collab/hocuspocus.server/src/services.ts'
import { Client } from 'pg'
import { TEST_DATA_ROOT } from './data-root.ts'
import { dropDatabase } from './drop-database.ts'

export { TEST_DATA_ROOT }

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined
export const DATABASE_KIND = TEST_DATABASE_URL ? 'postgres' : 'pglite'

export type TestDatabase = { dataDir: string; databaseUrl: string | undefined; cleanup(): Promise<void> }

export type TestDatabaseOptions = {
  /** The server to create the database on; null forces PGlite. Default: TEST_DATABASE_URL. */
  postgresUrl?: string | null
  /** An unmigrated database instead of a copy of the migrated template. */
  empty?: boolean
  /** The folder to make the data folder in (the bench: on disk, beside its peer's file); default TEST_DATA_ROOT. */
  root?: string
}

export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const postgresUrl = options.postgresUrl === undefined ? TEST_DATABASE_URL : options.postgresUrl
  const dataDir = mkdtempSync(join(options.root ?? TEST_DATA_ROOT, 'collab-test-'))
  if (!postgresUrl) {
    if (!options.empty) cpSync(await pgliteTemplate(), join(dataDir, 'pglite'), { recursive: true })
    return {
      dataDir,
      databaseUrl: undefined,
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  }
  const template = options.empty ? undefined : await postgresTemplate(postgresUrl)
  const name = `collab_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
  await createDatabase(postgresUrl, name, template)
  return {
    dataDir,
    databaseUrl: databaseUrlOf(postgresUrl, name),
    async cleanup() {
      rmSync(dataDir, { recursive: true, force: true })
      await dropDatabase(postgresUrl, name)
    },
  }
}

/**
 * A fresh database (`createTestDatabase`) made before the file's tests and removed after them; the
 * function returned gives it inside a test or hook.
 */
export function useTestDatabase(options: TestDatabaseOptions = {}): () => TestDatabase {
  let db: TestDatabase | undefined
  beforeAll(async () => {
    db = await createTestDatabase(options)
  }, 60_000)
  afterAll(async () => {
    await db?.cleanup()
  }, 60_000)
  return () => {
    if (!db)
      throw new Error('useTestDatabase: the database is made in beforeAll; read it inside a test or hook')
    return db
  }
}

/**
 * Set-up on a test database that no server holds, done in this process with the services the CLI runs
 * (users, tokens, documents), then closed again, for the files that run the CLI as real processes: each
 * CLI process opens the embedded database anew (~2.5 s of CPU on PGlite), so a test's set-up steps
 * (users it needs before the command it checks) are cheaper here, all in one opening. Holds the data
 * folder's lock meanwhile, as the CLI does.
 */
export async function withServices<T>(db: TestDatabase, use: (services: Services) => Promise<T>): Promise<T> {
  const target = databaseTarget({ dataDir: db.dataDir, databaseUrl: db.databaseUrl })
  const lock = target.kind === 'pglite' ? acquireDataDirLock(db.dataDir, 'cli') : undefined
  try {
    const opened = await openDatabase(target)
    const services = createServices(opened)
    try {
      return await use(services)
    } finally {
      services.documents.close()
      await opened.close()
    }
  } finally {
    lock?.release()
  }
}

/** A raw statement a watched client ran (useWatchedServices): its operation, SQL, values and answer. */
export type WatchedStatement = { operation: string; sql: string; values: unknown[]; answer: unknown }

/**
 * A fresh database opened in this process, with the services (`createServices`) on its real Prisma client,
 * watched: `watch` sees every raw statement they run (in transactions too) with its SQL (the template's
 * parts joined by `?`), its values and its answer. For the tests of what the store path sends and reads.
 * `pgliteThread`: the embedded database on its own thread (the default) or on this one (PGLITE_THREAD).
 * Made before the file's tests and closed after; the function returned gives it inside a test or hook.
 */
export function useWatchedServices(
  watch: (statement: WatchedStatement) => void,
  options: { pgliteThread?: 'worker' | 'main' } = {},
): () => { db: Database; services: Services } {
  let testDb: TestDatabase | undefined
  let opened: { db: Database; services: Services } | undefined
  beforeAll(async () => {
    testDb = await createTestDatabase()
    const db = await openDatabase(
      databaseTarget({ dataDir: testDb.dataDir, databaseUrl: testDb.databaseUrl, ...options }),
    )
    const prisma = db.prisma.$extends({
      query: {
        async $allOperations({ operation, args, query }) {
          const answer = await query(args)
          if (operation.includes('Raw')) {
            // A tagged template's Sql, or an unsafe call's [sql, ...values].
            const raw = args as { strings?: string[]; values?: unknown[] } | unknown[]
            const [sql, values] = Array.isArray(raw)
              ? [String(raw[0]), raw.slice(1)]
              : [raw.strings?.join('?') ?? '', raw.values ?? []]
            watch({ operation, sql, values, answer })
          }
          return answer
        },
      },
    }) as unknown as PrismaClient
    opened = { db, services: createServices({ ...db, prisma }) }
  }, 60_000)
  afterAll(async () => {
    opened?.services.documents.close()
    await opened?.db.close()
    await testDb?.cleanup()
  }, 60_000)
  return () => {
    if (!opened)
      throw new Error(
        'useWatchedServices: the services are made in beforeAll; read them inside a test or hook',
      )
    return opened
  }
}

/** The length of the longest string anywhere in `value` (arrays and objects walked). */
export function longestString(value: unknown): number {
  if (typeof value === 'string') return value.length
  const items = Array.isArray(value) ? value : value && typeof value === 'object' ? Object.values(value) : []
  return items.reduce((max: number, item) => Math.max(max, longestString(item)), 0)
}

/** Adds users (handle, or [handle, name]) through the users service, in order; throws on a refusal. */
export async function addUsers(
  services: Services,
  users: Array<string | [string, string]>,
): Promise<Array<{ id: string; handle: string }>> {
  const added: Array<{ id: string; handle: string }> = []
  for (const user of users) {
    const [handle, name] = typeof user === 'string' ? [user, undefined] : user
    const result = await services.users.add(handle, name)
    if (result.kind === 'error') throw new Error(result.message)
    added.push(result.value)
  }
  return added
}

let pgliteTemplateDir: Promise<string> | undefined

/**
 * The migrated PGlite folder every test file copies. Built once under a temporary name and renamed into
 * place, so a process never sees half a template: when two processes build at once, the first rename
 * wins and the other discards its copy.
 */
function pgliteTemplate(): Promise<string> {
  pgliteTemplateDir ??= (async () => {
    const dir = join(TEST_DATA_ROOT, `collab-test-template-${templateKey()}`)
    if (existsSync(join(dir, 'pglite'))) return join(dir, 'pglite')
    const build = mkdtempSync(join(TEST_DATA_ROOT, 'collab-test-template-build-'))
    try {
      const db = await openDatabase({ kind: 'pglite', dir: join(build, 'pglite') })
      try {
        await applyMigrations(db.adapterFactory)
      } finally {
        await db.close()
      }
      try {
        renameSync(build, dir)
      } catch (error) {
        if (!existsSync(join(dir, 'pglite'))) throw error // not "another process was first"
      }
    } finally {
      rmSync(build, { recursive: true, force: true })
    }
    return join(dir, 'pglite')
  })()
  return pgliteTemplateDir
}

const postgresTemplates = new Map<string, Promise<string>>()

/**
 * The migrated PostgreSQL database every test file's database is created from, on `serverUrl`. Built
 * under an advisory lock (other processes wait for it) as `<name>_build`, then renamed, so a crash
 * mid-build never leaves a template that looks finished.
 */
function postgresTemplate(serverUrl: string): Promise<string> {
  let template = postgresTemplates.get(serverUrl)
  if (!template) {
    template = buildPostgresTemplate(serverUrl)
    postgresTemplates.set(serverUrl, template)
    template.catch(() => postgresTemplates.delete(serverUrl))
  }
  return template
}

async function buildPostgresTemplate(serverUrl: string): Promise<string> {
  const name = `collab_tmpl_${templateKey()}`
  const build = `${name}_build`
  const admin = new Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name])
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (found.rowCount) return name
    await admin.query(`DROP DATABASE IF EXISTS "${build}" WITH (FORCE)`)
    await admin.query(`CREATE DATABASE "${build}"`)
    const db = await openDatabase({ kind: 'postgres', url: databaseUrlOf(serverUrl, build) })
    try {
      await applyMigrations(db.adapterFactory)
    } finally {
      await db.close()
    }
    await retryWhileBusy(() => admin.query(`ALTER DATABASE "${build}" RENAME TO "${name}"`))
    return name
  } finally {
    await admin.end() // ends the session, and with it the advisory lock
  }
}

async function createDatabase(serverUrl: string, name: string, template: string | undefined) {
  const admin = new Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    const from = template ? ` TEMPLATE "${template}"` : ''
    await retryWhileBusy(() => admin.query(`CREATE DATABASE "${name}"${from}`))
  } finally {
    await admin.end()
  }
}

/**
 * PostgreSQL refuses to copy or rename a database while a session is on it ("being accessed by other
 * users"); a closing pool's sessions end a moment after their client says so.
 */
async function retryWhileBusy<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      if (attempt >= 40 || !/being accessed by other users/.test((error as Error).message)) throw error
    }
    await Bun.sleep(250)
  }
}

function databaseUrlOf(serverUrl: string, name: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export { dropDatabase }

/**
 * `prisma` with its raw queries (`$queryRaw`) counted as they are sent and as they are answered; everything
 * else passes through. For checking how many queries a cache or a shared query lets through.
 */
export function countingRawQueries(prisma: PrismaClient): {
  client: PrismaClient
  sent: { count: number; answered: number }
} {
  const sent = { count: 0, answered: 0 }
  const client = new Proxy(prisma, {
    get(target, key, receiver) {
      if (key !== '$queryRaw') return Reflect.get(target, key, receiver)
      return (strings: TemplateStringsArray, ...values: unknown[]) => {
        sent.count++
        return target.$queryRaw(strings, ...values).then((rows) => {
          sent.answered++
          return rows
        })
      }
    },
  }) as PrismaClient
  return { client, sent }
}

/** Until `check` holds (every 5 ms, at most 5 s), then one turn more for what follows its answer. */
export async function settled(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await Bun.sleep(5)
  await Bun.sleep(1)
}
