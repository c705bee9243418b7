/**
 * Shared pieces of the fault suites (faults-*.test.ts): real server processes on a database that outlives
 * them, the stored state read straight from that database, editors that know which of their updates the
 * server acknowledged, and private PostgreSQL clusters and Redis servers that a test may stop without
 * disturbing anything else on the machine.
 */
import { afterAll, beforeAll, expect } from 'bun:test'
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { createTestDatabase, type TestDatabase } from '@collab/test-support/database'
import { callText, connectRecording } from '@collab/test-support/mcp'
import { type ServerProcess, spawnServer } from '@collab/test-support/process'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { openDatabase } from '../../db/client.ts'

/** What one describe block of a fault suite runs on: a database that outlives its server processes. */
export type ProcessRun = {
  db: TestDatabase
  /** The server process a test started; stopped after the block unless the test already stopped it. */
  server: ServerProcess | undefined
  /** Editors a test left connected; destroyed after the block. */
  editors: TestProvider[]
}

/**
 * A fresh database before the block's tests; after them, the editors left in `editors` are destroyed, the
 * server process in `server` is stopped and the database is removed.
 */
export function useProcessRun(): ProcessRun {
  const run: ProcessRun = { db: undefined as unknown as TestDatabase, server: undefined, editors: [] }
  beforeAll(async () => {
    run.db = await createTestDatabase()
  }, 60_000)
  afterAll(async () => {
    for (const editor of run.editors) editor.destroy()
    await stopProcess(run.server)
    await run.db?.cleanup()
  }, 60_000)
  return run
}

/**
 * The server process on `db`, storing soon after a change (the fault tests do not wait for defaults);
 * `wrap`: a command it runs under (spawnServer).
 */
export function spawnOn(
  db: Pick<TestDatabase, 'dataDir' | 'databaseUrl'>,
  env: Record<string, string | undefined> = {},
  options: { wrap?: string[] } = {},
): Promise<ServerProcess> {
  return spawnServer(
    {
      DATA_DIR: db.dataDir,
      DATABASE_URL: db.databaseUrl ?? '',
      LOG_LEVEL: 'warn',
      STORE_DEBOUNCE_MS: '200',
      STORE_MAX_DEBOUNCE_MS: '1000',
      MCP_CALLS_PER_MINUTE: '0',
      ...env,
    },
    options,
  )
}

/** The read+write token the first start of a server wrote into its data folder. */
export function firstRunToken(dataDir: string): string {
  return readFileSync(join(dataDir, 'first-run-token'), 'utf8').trim()
}

/** SIGTERM (when still running) and wait; resolves with the exit code. */
export async function stopProcess(server: ServerProcess | undefined): Promise<number | null> {
  if (!server) return null
  if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGTERM')
  return server.proc.exited
}

export type StoredDocument = { doc: Y.Doc; text: string; vector: Map<number, number> }

/**
 * The stored state of the documents in `rooms`, read from the database itself (the server must have
 * exited when the database is PGlite: its folder is opened by one process at a time).
 */
export async function readStored(
  db: Pick<TestDatabase, 'dataDir' | 'databaseUrl'>,
  rooms: string[],
): Promise<Map<string, StoredDocument>> {
  const database = await openDatabase(
    db.databaseUrl
      ? { kind: 'postgres', url: db.databaseUrl }
      : { kind: 'pglite', dir: join(db.dataDir, 'pglite') },
  )
  try {
    const out = new Map<string, StoredDocument>()
    for (const room of rooms) {
      const row = await database.prisma.document.findUnique({
        where: { room },
        include: { state: true, updates: { orderBy: { id: 'asc' } } },
      })
      const doc = new Y.Doc()
      // What a load applies: the snapshot, then the update log in order.
      if (row?.state) Y.applyUpdate(doc, new Uint8Array(row.state.state))
      for (const logged of row?.updates ?? []) Y.applyUpdate(doc, new Uint8Array(logged.update))
      out.set(room, {
        doc,
        text: readPlainText(doc.getXmlFragment(FRAGMENT_NAME)),
        vector: Y.decodeStateVector(Y.encodeStateVector(doc)),
      })
    }
    return out
  } finally {
    await database.close()
  }
}

/** Appends a paragraph holding `text` in one transaction (one update, one acknowledgement). */
export function addParagraph(doc: Y.Doc, text: string): void {
  const p = new Y.XmlElement('paragraph')
  p.insert(0, [new Y.XmlText(text)])
  doc.getXmlFragment(FRAGMENT_NAME).push([p])
}

export function plainText(doc: Y.Doc): string {
  return readPlainText(doc.getXmlFragment(FRAGMENT_NAME))
}

/**
 * Which of an editor's own updates the server acknowledged. The provider counts an update as unsynced
 * when it sends it and counts it down when the server answers with a sync status for it; the server
 * applies and answers the messages of one connection in order, so the k-th acknowledgement after the
 * baseline is the k-th update sent after it. `acknowledgedClock` is this editor's clock after its last
 * acknowledged update: every struct below it is something the server said it has.
 */
export type AckTracker = {
  readonly clientId: number
  /** Updates sent since the baseline. */
  readonly sent: number
  /** Of those, acknowledged by the server. */
  readonly acknowledged: number
  /** This client's clock after its last acknowledged update (0 when none). */
  acknowledgedClock(): number
  /** The same, of what was acknowledged at or before `time` (`performance.now()`). */
  acknowledgedClockAt(time: number): number
  stop(): void
}

/** Start tracking once `editor` is synced and has nothing unsynced (the baseline). */
export function trackAcknowledgements(editor: TestProvider): AckTracker {
  const { provider, doc } = editor
  if (provider.unsyncedChanges !== 0) throw new Error('track acknowledgements from a settled provider')
  const clocks: number[] = []
  /** When each acknowledgement arrived, in order (the k-th is of the k-th update sent). */
  const ackedAt: number[] = []
  let acknowledged = 0
  let previous = provider.unsyncedChanges
  const onUpdate = (_update: Uint8Array, origin: unknown) => {
    if (origin === provider) return // a remote change the provider applied: not ours, not sent
    clocks.push(Y.getState(doc.store, doc.clientID))
  }
  const onUnsynced = ({ number }: { number: number }) => {
    // Only a decrease is an acknowledgement; an increase is an update being sent.
    if (number < previous) {
      const now = performance.now()
      const next = Math.min(clocks.length, acknowledged + (previous - number))
      while (ackedAt.length < next) ackedAt.push(now)
      acknowledged = next
    }
    previous = number
  }
  doc.on('update', onUpdate)
  provider.on('unsyncedChanges', onUnsynced)
  return {
    clientId: doc.clientID,
    get sent() {
      return clocks.length
    },
    get acknowledged() {
      return acknowledged
    },
    acknowledgedClock: () => (acknowledged === 0 ? 0 : clocks[acknowledged - 1]!),
    acknowledgedClockAt(time) {
      let k = 0
      while (k < ackedAt.length && ackedAt[k]! <= time) k++
      return k === 0 ? 0 : clocks[k - 1]!
    },
    stop() {
      doc.off('update', onUpdate)
      provider.off('unsyncedChanges', onUnsynced)
    },
  }
}

/** A TCP port nobody listens on right now (on loopback). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      const port = typeof address === 'object' && address ? address.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export const PG_BIN = '/usr/lib/postgresql/15/bin'
export const HAS_POSTGRES_BINARIES = existsSync(join(PG_BIN, 'initdb')) && existsSync(join(PG_BIN, 'pg_ctl'))

/**
 * A PostgreSQL cluster of its own (a temp folder, a free loopback port, trust auth), so a test can stop
 * it without touching any other database. As root the binaries run as the `postgres` user.
 */
export type PrivatePostgres = {
  /** Superuser URL of the `postgres` database. */
  url: string
  port: number
  start(): void
  /** pg_ctl stop -m fast: open connections are terminated, new ones refused. */
  stop(): void
  /** Stops (if running) and deletes the folder; safe to call twice. */
  destroy(): void
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const root = mkdtempSync(join(tmpdir(), 'faults-pg-'))
  const data = join(root, 'data')
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
    chownSync(root, uid, gid)
    chmodSync(root, 0o700)
  }
  const run = (bin: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : join(PG_BIN, bin),
      asRoot ? ['-u', 'postgres', '--', join(PG_BIN, bin), ...args] : args,
      { stdio: 'pipe', cwd: root },
    )
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const port = await freePort()
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${root} -c fsync=off -c max_connections=50`
  let running = false
  let destroyed = false
  const pg: PrivatePostgres = {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    start() {
      run('pg_ctl', ['-D', data, '-l', join(root, 'log'), '-o', options, '-w', '-t', '30', 'start'])
      running = true
    },
    stop() {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop'])
      running = false
    },
    destroy() {
      if (destroyed) return
      destroyed = true
      if (running) {
        try {
          run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop'])
        } catch {}
      }
      rmSync(root, { recursive: true, force: true })
    },
  }
  try {
    pg.start()
  } catch (error) {
    pg.destroy()
    throw error
  }
  return pg
}

export const HAS_REDIS_SERVER = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'pipe' })
    return true
  } catch {
    return false
  }
})()

/** A redis-server of its own on a free loopback port, no persistence; stopped and started by the test. */
export type PrivateRedis = {
  url: string
  port: number
  /** Starts it (again, on the same port); a no-op while it runs. */
  start(): Promise<void>
  /** SIGKILL: the server vanishes as in a crash; its port is free again once this resolves. */
  kill(): Promise<void>
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort()
  let proc: ReturnType<typeof Bun.spawn> | undefined
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      if (proc && proc.exitCode === null && proc.signalCode === null) return // already running
      proc = Bun.spawn(
        ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' },
      )
      const end = Date.now() + 10_000
      for (;;) {
        const ready = await fetchRedisPing(port)
        if (ready) return
        if (proc.exitCode !== null || Date.now() > end) {
          proc.kill('SIGKILL')
          throw new Error(`redis-server did not start on ${port}`)
        }
        await Bun.sleep(50)
      }
    },
    async kill() {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return
      proc.kill('SIGKILL')
      await proc.exited
    },
  }
  await redis.start()
  return redis
}

async function fetchRedisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('error', () => resolve(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (data: Buffer) => {
      socket.destroy()
      resolve(data.toString().startsWith('+PONG'))
    })
  })
}

/**
 * Gives each editor a paragraph of its own (`editor N:`) and waits until every one is acknowledged, the
 * baseline typing tests start from; returns each editor's line.
 */
export async function linePerEditor(editors: TestProvider[]): Promise<Y.XmlText[]> {
  const lines = editors.map((e, i) => {
    const text = new Y.XmlText(`editor ${i}:`)
    const p = new Y.XmlElement('paragraph')
    p.insert(0, [text])
    e.doc.getXmlFragment(FRAGMENT_NAME).push([p])
    return text
  })
  await eventually(
    () => expect(editors.every((e) => e.provider.unsyncedChanges === 0)).toBe(true),
    20_000,
    'every editor settled',
  )
  return lines
}

/**
 * Each editor appends `typed(n)` to its line every `everyMs` (starting at a random moment within the first
 * interval, so not all in the same instant) until `stop()`, which resolves once every typist has stopped.
 */
export function typeContinuously(
  editors: TestProvider[],
  lines: Y.XmlText[],
  everyMs: number,
  typed: (n: number) => string,
): { stop(): Promise<void> } {
  let typing = true
  const typists = editors.map((e, i) =>
    (async () => {
      await Bun.sleep(Math.floor(Math.random() * everyMs))
      let n = 0
      while (typing) {
        const line = lines[i]!
        e.doc.transact(() => line.insert(line.length, typed(n++)))
        await Bun.sleep(everyMs)
      }
    })(),
  )
  return {
    async stop() {
      typing = false
      await Promise.all(typists)
    },
  }
}

/** Editors typing on a server process into documents of their own, each change's acknowledgement tracked. */
export type TrackedTyping = {
  /** The documents' rooms, in the order of their titles. */
  rooms: string[]
  /** Each editor's tracker, in the order of `run.editors`. */
  trackers: AckTracker[]
  /** Stops the typists, then the trackers. */
  stop(): Promise<void>
}

/**
 * The typing the fault suites cut short: the first-run user makes a document per title over MCP on the
 * run's server process, and `editors` providers of that user connect into `run.editors` (the i-th on the
 * (i mod titles)-th document); once every one is synced and its own line acknowledged (linePerEditor, the
 * baseline), each one's acknowledgements are tracked and it types `typed(n)` every `everyMs`
 * (typeContinuously) until `stop()`.
 */
export async function typeTracked(
  run: ProcessRun,
  titles: string[],
  editors: number,
  everyMs: number,
  typed: (n: number) => string,
): Promise<TrackedTyping> {
  if (!run.server) throw new Error("start the run's server process first")
  const { url } = run.server
  const token = firstRunToken(run.db.dataDir)
  const rooms = await createRooms(url, token, titles)
  run.editors = Array.from({ length: editors }, (_, i) =>
    connectProvider(url, rooms[i % rooms.length]!, token),
  )
  await Promise.all(run.editors.map((e) => e.ready))
  const lines = await linePerEditor(run.editors)
  const trackers = run.editors.map((e) => trackAcknowledgements(e))
  const typing = typeContinuously(run.editors, lines, everyMs, typed)
  return {
    rooms,
    trackers,
    async stop() {
      await typing.stop()
      for (const t of trackers) t.stop()
    },
  }
}

/** A document made over MCP per title; their rooms in the same order (MCP names a document by its slug). */
async function createRooms(url: string, token: string, titles: string[]): Promise<string[]> {
  const mcp = await connectRecording(`${url}/mcp`, token)
  const slugs: string[] = []
  try {
    for (const title of titles) {
      const created = await callText(mcp.client, 'create_document', { title })
      expect(created.isError).toBe(false)
      slugs.push(/slug: (\S+)/.exec(created.text)?.[1] ?? '')
    }
  } finally {
    await mcp.close()
  }
  const headers = { Authorization: `Bearer ${token}` }
  return Promise.all(
    slugs.map(async (slug) => {
      const response = await fetch(`${url}/api/documents/${slug}`, { headers })
      return ((await response.json()) as { room: string }).room
    }),
  )
}
