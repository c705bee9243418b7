/**
 * The embedded database syncs its commits to the disk (PGLITE_FSYNC, on by default; db/pglite-fsync.ts).
 * PGlite's own default starts PostgreSQL with fsync off, and even with it on, PostgreSQL's sync calls did not
 * reach the disk through PGlite's file system (strace: 0 fsync calls per store). Checked twice: PostgreSQL's
 * settings as the server opens it, on either thread; and a real server process under strace, whose store
 * of a new document makes fsync calls (none with PGLITE_FSYNC=false).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { callText, connectRecording } from '@collab/test-support/mcp'
import { spawnServer } from '@collab/test-support/process'
import { type DatabaseTarget, databaseTarget, openDatabase } from '../../db/client.ts'

/** strace where it is installed (Debian's package); the process test needs it. */
const STRACE = ['/usr/bin/strace', '/bin/strace'].find((path) => existsSync(path))

async function settingsOf(target: DatabaseTarget): Promise<{ fsync: string; walSyncMethod: string }> {
  const db = await openDatabase(target)
  try {
    const [fsync] = await db.prisma.$queryRawUnsafe<Array<{ fsync: string }>>('SHOW fsync')
    const [method] =
      await db.prisma.$queryRawUnsafe<Array<{ wal_sync_method: string }>>('SHOW wal_sync_method')
    return { fsync: fsync?.fsync ?? '', walSyncMethod: method?.wal_sync_method ?? '' }
  } finally {
    await db.close()
  }
}

describe.skipIf(DATABASE_KIND !== 'pglite')('the embedded database syncs its commits', () => {
  let testDb: TestDatabase
  beforeAll(async () => {
    testDb = await createTestDatabase({ postgresUrl: null })
  }, 60_000)
  afterAll(async () => {
    await testDb?.cleanup()
  })

  test('PostgreSQL runs with fsync on by default, on its own thread and on the server’s; off when asked', async () => {
    const target = (overrides: { pgliteThread: 'worker' | 'main'; pgliteFsync?: boolean }) =>
      databaseTarget({ dataDir: testDb.dataDir, databaseUrl: undefined, ...overrides })
    // `fsync` alone is not enough: PGlite's file system drops fdatasync, PostgreSQL's default method.
    const synced = { fsync: 'on', walSyncMethod: 'fsync' }
    expect(await settingsOf(target({ pgliteThread: 'worker' }))).toEqual(synced)
    expect(await settingsOf(target({ pgliteThread: 'main' }))).toEqual(synced)
    expect((await settingsOf(target({ pgliteThread: 'worker', pgliteFsync: false }))).fsync).toBe('off')
  }, 60_000)

  describe.skipIf(!STRACE)('under strace', () => {
    /** fsync calls strace recorded so far in `file` (one line per call; a resumed call is not a second). */
    const fsyncCalls = (file: string) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /\bfsync\(\d+/.test(line)).length

    /** A real server process under strace; the fsync calls made while a document is created and stored. */
    async function syncsOfOneStore(env: Record<string, string>, trace: string): Promise<number> {
      rmSync(trace, { force: true })
      const server = await spawnServer(
        { DATA_DIR: testDb.dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn', ...env },
        // Every thread (-f), only fsync, filtered in the kernel (--seccomp-bpf) so the server runs at speed.
        { wrap: [STRACE!, '-f', '--seccomp-bpf', '-qq', '-e', 'trace=fsync', '-o', trace] },
      )
      try {
        const token = readFileSync(join(testDb.dataDir, 'first-run-token'), 'utf8').trim()
        const mcp = await connectRecording(`${server.url}/mcp`, token)
        try {
          const before = fsyncCalls(trace)
          // Answered once the document's content is committed (documents.create stores its state).
          await callText(mcp.client, 'create_document', { title: 'Synced', markdown: 'One paragraph.' })
          return fsyncCalls(trace) - before
        } finally {
          await mcp.close()
        }
      } finally {
        // The server is strace's child (strace does not pass SIGTERM on); strace ends with it.
        const self = server.proc.pid
        const child = Number(readFileSync(`/proc/${self}/task/${self}/children`, 'utf8').trim().split(' ')[0])
        if (child > 0) process.kill(child, 'SIGTERM')
        else server.proc.kill('SIGKILL')
        await server.proc.exited
      }
    }

    test('a store makes fsync calls by default, and none with PGLITE_FSYNC=false', async () => {
      const trace = join(testDb.dataDir, 'strace.out')
      expect(await syncsOfOneStore({}, trace)).toBeGreaterThan(0)
      expect(await syncsOfOneStore({ PGLITE_FSYNC: 'false' }, trace)).toBe(0)
    }, 120_000)
  })
})
