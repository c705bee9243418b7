/**
 * What a start leaves for later (issue 30): the MCP SDK and the tools (modules/mcp/serving.ts) are imported
 * at the first MCP call, not at start, so /health answers without them; without REDIS_URL, ioredis never;
 * PGlite's module only on the embedded database's thread. A real server process (main.ts)
 * on a migrated database, asked what it has loaded (fixtures/loaded-modules.preload.ts, on SIGUSR2): after
 * its first /health none of it; then the first MCP call (a real SDK client) lists the tools and reads the
 * first run's document, and only then is the SDK loaded; the first web page (sign-in) is served after it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { callText, connectClient } from '@collab/test-support/mcp'
import { type ServerProcess, spawnServer } from '@collab/test-support/process'
import { eventually } from '@collab/test-support/server'
import { firstRunToken, stopProcess } from './reliability/faults-support.ts'

const PRELOAD = join(import.meta.dir, 'fixtures/loaded-modules.preload.ts')

/** The modules the server process has loaded so far (its answer to SIGUSR2). */
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

const isMcpSdk = (path: string) => path.includes('@modelcontextprotocol/sdk')
const isServing = (path: string) => path.endsWith('/modules/mcp/serving.ts')
const isPglite = (path: string) => path.includes('@electric-sql/pglite')
const isIoredis = (path: string) => /node_modules\/(\.bun\/)?ioredis/.test(path)

describe(`a lazy start (${DATABASE_KIND})`, () => {
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

  test('/health answers before the MCP SDK and the tools are loaded; the first MCP call loads them and works', async () => {
    const running = server!
    expect((await fetch(`${running.url}/health`)).status).toBe(200)
    const atStart = await loadedModules(running)
    // The probe sees the server's own modules (else an empty list would pass the checks below).
    expect(atStart.some((path) => path.endsWith('/src/server.ts'))).toBe(true)
    expect(atStart.filter(isMcpSdk)).toEqual([])
    expect(atStart.filter(isServing)).toEqual([])
    // Without REDIS_URL the Redis client is never needed (the rate limit and access changes import it).
    expect(atStart.filter(isIoredis)).toEqual([])
    // PGlite's module runs on the database's own thread (db/pglite-worker.ts), not on the server's.
    expect(atStart.filter(isPglite)).toEqual([])

    const mcp = await connectClient(`${running.url}/mcp`, firstRunToken(db.dataDir))
    try {
      const { tools } = await mcp.listTools()
      expect(tools.map((tool) => tool.name)).toContain('read_document')
      const found = await callText(mcp, 'find_documents', {})
      expect(found.text).toContain('Welcome')
    } finally {
      await mcp.close()
    }
    const afterCall = await loadedModules(running)
    expect(afterCall.filter(isServing)).toHaveLength(1)
    expect(afterCall.some(isMcpSdk)).toBe(true)

    // The first web page after the lazy start: without a session, the sign-in form (auth built on first use).
    const page = await fetch(`${running.url}/`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('action="/sign-in"')
  }, 60_000)
})
