/**
 * The contenders of the peer benchmark (peer.ts): this project's server and the stock Hocuspocus peer,
 * each seeded with the same documents and started in a child process of its own, and what is read of a
 * child from /proc (RSS, CPU time).
 */

import { Database as SQLite } from 'bun:sqlite'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FRAGMENT_NAME, HEADING_ID_ATTR, parseMarkdown } from '@collab/doc-schema'
import type { TestDatabase } from '@collab/test-support/database'
import { spawnServer } from '@collab/test-support/process'
import { connectProvider } from '@collab/test-support/provider'
import { startTestServer, userWithToken } from '@collab/test-support/server'
import type { Subprocess } from 'bun'
import { blocksToY } from '../../packages/doc-schema/src/yjs/build-y.ts'
import { Y } from '../deps.ts'
import { machineNow } from './clock.ts'
import { type Fixture, headingId } from './fixtures.ts'
import { eachLine } from './lines.ts'
import { createFixtureDocument } from './server.ts'
import { between, type Rng, summarize } from './stats.ts'
import type { Row } from './types.ts'

/** The unit of utime and stime in /proc/<pid>/stat (`getconf CLK_TCK`: 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100

/** A server under comparison, as the measurements see it: where editors connect, and its store steps. */
export type Contender = {
  /** `ours` (PGlite), `ours on PostgreSQL`, `peer`: the variant's name in every row. */
  label: string
  peer: boolean
  /** The room of each fixture (by name), and of each small document. */
  rooms: Map<string, string>
  small: string[]
  url: string
  pid: number
  token: string
  /** Resolves with the duration (ms) of the next store step of `room` that ends after this call. */
  nextStore(room: string): Promise<number>
  /** Store steps of `room` so far (ours: of every document, one changes at a time). */
  storeCount(room: string): Promise<number>
  /** Ours: what the server wrote on stderr so far (its logs, and JSC's reports when asked for). */
  serverLog?: () => string
  stop(): Promise<void>
}

export const WORDS = (
  'the a of and to in for on with as by team plan review release notes design api server client editor ' +
  'document section heading draft change update schedule budget risk owner deadline meeting summary'
).split(' ')

export function sentence(rng: Rng): string {
  const words = Array.from({ length: between(rng, 8, 18) }, () => WORDS[between(rng, 0, WORDS.length - 1)])
  return `${words.join(' ')}.`
}

/** A ~3 KB document (title, four sections of paragraphs and a list), as Yjs state, heading ids set. */
export function smallState(rng: Rng, i: number): Uint8Array {
  const parts = [`# Peer bench ${i}`]
  for (let s = 0; s < 4; s++) {
    parts.push(`## Section ${s + 1}`)
    parts.push(Array.from({ length: 4 }, () => sentence(rng)).join(' '))
    parts.push(['- ', '- ', '- '].map((dash) => dash + sentence(rng)).join('\n'))
  }
  const parsed = parseMarkdown(parts.join('\n\n'), { allowTitle: true })
  if (parsed.kind === 'error') throw new Error(parsed.message)
  // Well-formed ids: a malformed one is repaired when the document loads, a change and a store that the
  // peer never makes (so every opened document was written to, and measured with its memos built).
  for (const node of parsed.value)
    if (node.type === 'heading') node.attrs = { ...node.attrs, [HEADING_ID_ATTR]: headingId(rng) }
  const doc = new Y.Doc()
  doc.getXmlFragment(FRAGMENT_NAME).insert(0, blocksToY(parsed.value))
  const state = Y.encodeStateAsUpdate(doc)
  doc.destroy()
  return state
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024
}

/** CPU time (user + system) a process has used so far, in ms (clock ticks of /proc/<pid>/stat). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND
}

/**
 * The preload every measured server runs (BUN_OPTIONS): a full collection on SIGUSR2, so settledRss can read
 * each server's RSS after one (`collect`), the same for every contender.
 */
export const COLLECT_ON_SIGNAL = {
  BUN_OPTIONS: `--preload ${join(import.meta.dir, 'collect-on-signal.preload.ts')}`,
}

/**
 * After `settleMs` of quiet, the median of five VmRSS samples of each process (same instants for both);
 * with `collect`, each process is first asked for a full collection (COLLECT_ON_SIGNAL).
 */
export async function settledRss(pids: number[], settleMs: number, collect = false): Promise<number[]> {
  if (collect) for (const pid of pids) process.kill(pid, 'SIGUSR2')
  await Bun.sleep(settleMs)
  const samples = pids.map(() => [] as number[])
  for (let i = 0; i < 5; i++) {
    for (const [j, pid] of pids.entries()) samples[j]!.push(rssMiB(pid))
    await Bun.sleep(200)
  }
  return samples.map((s) => summarize(s).median)
}

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await Bun.sleep(20)
  }
}

/** A database of ours seeded with the bench's documents, the rooms they got and a token of their owner. */
export type Seeded = { db: TestDatabase; token: string; rooms: Map<string, string>; small: string[] }

/** Seeds `db` through the production wiring in this process (stopped before the child process starts). */
export async function seedOurs(
  db: TestDatabase,
  fixtures: Fixture[],
  small: Uint8Array[],
  options: { totals?: boolean } = {},
): Promise<Seeded> {
  const seeder = await startTestServer(db)
  try {
    const { user, token } = await userWithToken(seeder, 'peerbench')
    const rooms = new Map<string, string>()
    for (const fixture of fixtures) {
      const created = await createFixtureDocument(
        seeder,
        user.id,
        `Peer ${fixture.name}`,
        fixture.state,
        options,
      )
      rooms.set(fixture.name, created.room)
    }
    const smallRooms: string[] = []
    for (let i = 0; i < small.length; i += 10) {
      const batch = small.slice(i, i + 10)
      const created = await Promise.all(
        batch.map((state, j) => createFixtureDocument(seeder, user.id, `Peer bench ${i + j}`, state)),
      )
      smallRooms.push(...created.map((c) => c.room))
    }
    return { db, token, rooms, small: smallRooms }
  } finally {
    await seeder.stop()
  }
}

/** The peer's SQLite file with the same Yjs states (extension-sqlite's table). */
export function seedPeer(file: string, fixtures: Fixture[], small: Uint8Array[]) {
  const sqlite = new SQLite(file, { create: true })
  sqlite.run('CREATE TABLE documents (name TEXT NOT NULL PRIMARY KEY, data BLOB NOT NULL)')
  const insert = sqlite.query('INSERT INTO documents (name, data) VALUES (?1, ?2)')
  const rooms = new Map<string, string>()
  for (const fixture of fixtures) {
    rooms.set(fixture.name, `peer-${fixture.name.replace(/\s+/g, '')}`)
    insert.run(rooms.get(fixture.name)!, fixture.state)
  }
  const smallRooms = small.map((state, i) => {
    insert.run(`peer-small-${i}`, state)
    return `peer-small-${i}`
  })
  sqlite.close()
  return { rooms, small: smallRooms }
}

/**
 * A row comparing each of ours with the peer (the last contender): every variant's summary, and per
 * variant of ours the ratio of each statistic to the peer's.
 */
export function compare(
  row: Pick<Row, 'measure' | 'size' | 'stateBytes'>,
  contenders: Contender[],
  samples: (c: Contender) => number[],
  stats: Record<string, (sorted: number[]) => number>,
  unit: string,
  target?: { text: string; stat: string },
): Row {
  const peer = contenders.find((c) => c.peer)!
  const sorted = new Map(contenders.map((c) => [c, [...samples(c)].sort((a, b) => a - b)]))
  const value = (c: Contender, stat: string) => stats[stat]!(sorted.get(c)!)
  const ours = contenders.filter((c) => !c.peer)
  const single = Object.keys(stats).length === 1
  return {
    ...row,
    variants: Object.fromEntries(contenders.map((c) => [c.label, summarize(sorted.get(c)!)])),
    // One statistic: "ours / peer", "ours ms"; several: "ours p99 / peer p99", "ours p99 ms".
    ratios: Object.fromEntries(
      ours.flatMap((c) =>
        Object.keys(stats).map((stat) => [
          single ? `${c.label} / peer` : `${c.label} ${stat} / peer ${stat}`,
          value(c, stat) / value(peer, stat),
        ]),
      ),
    ),
    extra: Object.fromEntries(
      contenders.flatMap((c) =>
        Object.keys(stats).map((stat) => [
          single ? `${c.label} ${unit}` : `${c.label} ${stat} ${unit}`,
          ms(value(c, stat)),
        ]),
      ),
    ),
    target: target && {
      text: target.text,
      met: ours.every((c) => value(c, target.stat) <= value(peer, target.stat)),
    },
  }
}

/** This project's server (`bun src/main.ts`) on a database seeded in this process beforehand. */
export async function startOurs(
  label: string,
  seeded: Seeded,
  debounce: { debounceMs: number; maxDebounceMs: number },
  env: Record<string, string> = {},
): Promise<Contender> {
  const server = await spawnServer({
    DATA_DIR: seeded.db.dataDir,
    DATABASE_URL: seeded.db.databaseUrl ?? '',
    REDIS_URL: '',
    LOG_LEVEL: 'warn',
    STORE_DEBOUNCE_MS: String(debounce.debounceMs),
    STORE_MAX_DEBOUNCE_MS: String(debounce.maxDebounceMs),
    ...COLLECT_ON_SIGNAL,
    ...env,
  })
  const metric = async (name: string) => {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    const value = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]
    if (value === undefined) throw new Error(`/metrics has no ${name}`)
    return Number(value)
  }
  const stores = async () => ({
    count: await metric('collab_document_store_duration_seconds_count').catch(() => 0),
    sum: await metric('collab_document_store_duration_seconds_sum').catch(() => 0),
  })
  return {
    label,
    peer: false,
    rooms: seeded.rooms,
    small: seeded.small,
    url: server.url,
    pid: server.proc.pid,
    token: seeded.token,
    storeCount: async () => (await stores()).count,
    serverLog: server.stderr,
    async nextStore() {
      // One document changes at a time: the histogram's sum grows by exactly the store steps that follow.
      const before = await stores()
      let after = before
      await waitFor('our store', async () => {
        after = await stores()
        return after.count > before.count && (await metric('collab_documents_unstored')) === 0
      })
      return ((after.sum - before.sum) / (after.count - before.count)) * 1000
    },
    stop: () => stopChild(server.proc, 10_000),
  }
}

/** The peer (bench/lib/peer-server.ts) on a SQLite file seeded beforehand. */
export async function startPeer(
  file: string,
  rooms: Map<string, string>,
  small: string[],
  debounce: { debounceMs: number; maxDebounceMs: number },
): Promise<Contender> {
  const proc = Bun.spawn(
    [
      'bun',
      join(import.meta.dir, 'peer-server.ts'),
      file,
      String(debounce.debounceMs),
      String(debounce.maxDebounceMs),
    ],
    { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit', env: { ...process.env, ...COLLECT_ON_SIGNAL } },
  )
  const stored = new Map<string, number[]>()
  const waiters = new Set<() => void>()
  let listening!: (url: string) => void
  const url = new Promise<string>((resolve) => {
    listening = resolve
  })
  void eachLine(proc.stdout, (line) => {
    const listen = /^listening (\S+)$/.exec(line)
    if (listen) listening(listen[1]!)
    const store = /^stored (\S+) ([\d.]+)$/.exec(line)
    if (!store) return
    const list = stored.get(store[1]!) ?? []
    list.push(Number(store[2]))
    stored.set(store[1]!, list)
    for (const wake of waiters) wake()
  })
  const started = await Promise.race([url, Bun.sleep(30_000).then(() => null)])
  if (!started) {
    proc.kill()
    throw new Error('the peer did not start within 30 s')
  }
  return {
    label: 'peer',
    peer: true,
    rooms,
    small,
    url: started,
    pid: proc.pid,
    token: 'none', // the peer authenticates nobody; the provider sends it and it is ignored
    storeCount: async (room) => stored.get(room)?.length ?? 0,
    async nextStore(room) {
      const seen = stored.get(room)?.length ?? 0
      await waitFor('the peer store', () => (stored.get(room)?.length ?? 0) > seen)
      return stored.get(room)![seen]!
    },
    stop: () => stopChild(proc, 5_000),
  }
}

/** A bare provider that appends paragraphs: `insert(n)` adds "bench edit n marker" at the document's end. */
export async function connectInserter(contender: Contender, room: string) {
  const editor = connectProvider(contender.url, room, contender.token)
  await editor.ready
  const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
  return {
    editor,
    insert(n: number): number {
      const paragraph = new Y.XmlElement('paragraph')
      paragraph.insert(0, [new Y.XmlText(`bench edit ${n} marker`)])
      const at = machineNow()
      fragment.push([paragraph])
      return at
    },
  }
}

export const mib = (n: number) => Number(n.toFixed(1))
export const ms = (n: number) => Number(n.toFixed(2))

export function phase(label: string, since: number) {
  process.stderr.write(`peer: ${label} (${((performance.now() - since) / 1000).toFixed(1)} s)\n`)
}

/** Ends a child process: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
async function stopChild(proc: Pick<Subprocess, 'kill' | 'exited'>, graceMs: number) {
  proc.kill('SIGTERM')
  await Promise.race([proc.exited, Bun.sleep(graceMs).then(() => proc.kill('SIGKILL'))])
}

/** A floor process of the idle RSS row (bench/lib/idle-floor.ts): its pid, and how to end it. */
export type IdleFloor = { label: string; pid: number; stop(): Promise<void> }

/**
 * Starts bench/lib/idle-floor.ts (`bare`: Bun answering HTTP; `database`: with the server's database layer
 * opened on `env`'s DATA_DIR or DATABASE_URL) and resolves once it is listening.
 */
export async function startIdleFloor(
  label: string,
  kind: 'bare' | 'database',
  env: Record<string, string> = {},
): Promise<IdleFloor> {
  const proc = Bun.spawn(['bun', join(import.meta.dir, 'idle-floor.ts'), kind], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, ...env, ...COLLECT_ON_SIGNAL },
  })
  let ready!: () => void
  const listening = new Promise<void>((resolve) => {
    ready = resolve
  })
  void eachLine(proc.stdout, (line) => {
    if (line === 'ready') ready()
  })
  const started = await Promise.race([listening.then(() => true), Bun.sleep(60_000).then(() => false)])
  if (!started) {
    proc.kill('SIGKILL')
    throw new Error(`the idle floor "${label}" did not start within 60 s`)
  }
  return {
    label,
    pid: proc.pid,
    stop: () => stopChild(proc, 10_000),
  }
}
