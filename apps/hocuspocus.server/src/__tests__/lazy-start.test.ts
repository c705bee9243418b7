/**
 * What a start leaves for later (issue 30): the MCP SDK and the tools (modules/mcp/serving.ts) are imported
 * at the first MCP call, not at start, so /health answers without them; without REDIS_URL, ioredis never;
 * PGlite's module only on the embedded database's thread. A real server process (main.ts)
 * on a migrated database, asked what it has loaded (fixtures/loaded-modules.preload.ts, on SIGUSR2): after
 * its first /health none of it; then the first MCP call (a real SDK client) lists the tools and reads the
 * first run's document, and only then is the SDK loaded; the first web page (sign-in) is served after it.
 *
 * And what an idle server no longer keeps (issue 30, idle RSS): Prisma's query compiler used to be imported
 * as a JavaScript module whose 4.6 MB base64 string (and the module's source) stayed in memory after the
 * WebAssembly was compiled from it, and PGlite's 6 MB file bundle was read into memory on the server's
 * thread to be handed to the database thread. Now scripts/prisma-generate.ts writes the compiler's binary
 * beside the generated client, which reads it from that file, and the database thread is handed the
 * bundle's file and reads it itself. RSS itself is measured by the bench (bench/notes.md), not asserted here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { callText, connectClient } from '@collab/test-support/mcp'
import { type ServerProcess, spawnServer } from '@collab/test-support/process'
import { connectProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import { loadPgliteAssets } from '../db/pglite-thread.ts'
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

/** A server process on the test's database that answers SIGUSR2 with what it has loaded. */
const startOn = (db: TestDatabase) =>
  spawnServer({
    DATA_DIR: db.dataDir,
    DATABASE_URL: db.databaseUrl ?? '',
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    BUN_OPTIONS: `--preload ${PRELOAD}`,
  })

const isMcpSdk = (path: string) => path.includes('@modelcontextprotocol/sdk')
const isServing = (path: string) => path.endsWith('/modules/mcp/serving.ts')
const isPglite = (path: string) => path.includes('@electric-sql/pglite')
const isIoredis = (path: string) => /node_modules\/(\.bun\/)?ioredis/.test(path)
const isTiptap = (path: string) => /node_modules\/(\.bun\/)?(@tiptap|prosemirror-)/.test(path)
/** markdown-it's entry and helpers (its two small tables of HTML names are loaded by the escaping code). */
const isMarkdownIt = (path: string) => /\/markdown-it\/(index\.mjs|lib\/(?!common\/html_))/.test(path)
const isToMarkdown = (path: string) => /node_modules\/(\.bun\/)?mdast-util-to-markdown/.test(path)

describe(`a lazy and lean start (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: ServerProcess | undefined
  beforeAll(async () => {
    db = await createTestDatabase()
    server = await startOn(db)
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

  test("a start on an existing folder loads no TipTap or Markdown library until a document's text is read and written, not when it is opened", async () => {
    // The first start wrote the first run's document (Markdown parsed and checked): a start after it
    // writes nothing, as a server that restarts on its data does.
    await stopProcess(server)
    server = undefined
    server = await startOn(db)
    const running = server
    expect((await fetch(`${running.url}/health`)).status).toBe(200)
    const atStart = await loadedModules(running)
    expect(atStart.some((path) => path.endsWith('/src/server.ts'))).toBe(true)
    expect(atStart.filter(isTiptap)).toEqual([])
    expect(atStart.filter(isMarkdownIt)).toEqual([])
    expect(atStart.filter(isToMarkdown)).toEqual([])

    const mcp = await connectClient(`${running.url}/mcp`, firstRunToken(db.dataDir))
    try {
      const found = await callText(mcp, 'find_documents', {})
      const slug = /^(\S+) .*Welcome/m.exec(found.text)?.[1]
      expect(slug).toBeDefined()
      const token = firstRunToken(db.dataDir)
      const { room } = (await (
        await fetch(`${running.url}/api/documents/${slug}`, { headers: { Authorization: `Bearer ${token}` } })
      ).json()) as { room: string }
      // Opened in an editor (loaded from the database, synced): none of them yet.
      const editor = connectProvider(running.url, room, token)
      try {
        await editor.ready
        const afterOpen = await loadedModules(running)
        expect(
          afterOpen.filter((path) => isTiptap(path) || isMarkdownIt(path) || isToMarkdown(path)),
        ).toEqual([])
      } finally {
        editor.destroy()
      }
      const read = await callText(mcp, 'read_document', { slug })
      expect(read.text).toContain('# Welcome')
      expect((await loadedModules(running)).some(isToMarkdown)).toBe(true)
      const written = await callText(mcp, 'append_to_document', {
        slug,
        markdown: 'A line **written** here.',
      })
      expect(written.isError).toBe(false)
      expect((await callText(mcp, 'read_document', { slug })).text).toContain('A line **written** here.')
    } finally {
      await mcp.close()
    }
    // The write parsed its Markdown and checked it against TipTap's schema.
    const afterWrite = await loadedModules(running)
    expect(afterWrite.some(isMarkdownIt)).toBe(true)
    expect(afterWrite.some(isTiptap)).toBe(true)
  }, 60_000)

  test("PGlite's file bundle is handed to the database thread as its file, not as bytes held by the server's thread", async () => {
    const { fsBundle } = await loadPgliteAssets()
    // A file-backed Blob (Bun.file) has the file's path as its name; bytes read into a Blob have none.
    expect((fsBundle as Blob & { name?: string }).name ?? '').toEndWith('/pglite.data')
  })
})
