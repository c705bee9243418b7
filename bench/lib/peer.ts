/**
 * Issue 14 item 5: this project's server beside the peer a user would pick instead, a stock Hocuspocus 4.7
 * with extension-database on SQLite (bench/lib/peer-server.ts), each in a child process of its own, on the
 * same documents with the same store debounce, in the same run. The peer is the floor of every ratio
 * ("ours / peer"); no target is enforced.
 *
 * - Memory: VmRSS of each child after a full collection (bench/lib/collect-on-signal.preload.ts), idle (no
 *   document loaded), with half of `smallCount` small documents open (one bare provider each, from this
 *   process) and with all: KB per open document from the second half's growth.
 * - Per fixture size (bench/lib/fixtures.ts): a bare provider in this process inserts a paragraph at the
 *   end, an editor in another process (bench/lib/remote-editor.ts) stamps when it has it: editor-to-editor
 *   propagation, p50/p99. Then one paragraph alone and the store step that follows it: ours reports the
 *   step's duration in its `collab_document_store_duration_seconds` histogram (the append to the update
 *   log), the peer prints its store hook's (the whole state encoded and upserted).
 * Repetitions interleave the two servers (ours, peer, ours, peer) so the machine's noise hits both alike.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '@collab/test-support/database'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import type { Fixture } from './fixtures.ts'
import {
  type Contender,
  compare,
  connectInserter,
  cpuMs,
  mib,
  phase,
  rssMiB,
  type Seeded,
  seedOurs,
  seedPeer,
  settledRss,
  smallState,
  startIdleFloor,
  startOurs,
  startPeer,
  waitFor,
} from './peer-contenders.ts'
import { startRemoteEditor } from './server.ts'
import { percentile, prng } from './stats.ts'
import type { Row } from './types.ts'

/** The production store debounce (config.ts defaults); --quick shortens both alike to fit CI. */
const FULL_DEBOUNCE = { debounceMs: 2_000, maxDebounceMs: 10_000 }
const QUICK_DEBOUNCE = { debounceMs: 300, maxDebounceMs: 3_000 }
/**
 * After a batch of edits, how long past the debounce the CPU window stays open for the store they cause
 * (the peer's whole-state store: ~50 ms at 1 MiB, ~0.2 s at 5 MiB); --quick stops at 1 MiB.
 */
const STORE_SETTLE_MS = { quick: 400, full: 1_000 }

/**
 * `postgresUrl` (BENCH_DATABASE_URL in main.ts) adds ours on PostgreSQL as a third contender: a database is
 * created on it and dropped.
 */
/** Resolves once the typist (remote-typist.ts) says it is synced and typing; throws after 60 s. */
async function typistReady(stdout: ReadableStream<Uint8Array>): Promise<void> {
  const reader = stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const deadline = Bun.sleep(60_000).then(() => {
    throw new Error('the typist did not sync within 60 s')
  })
  while (!text.includes('ready\n')) {
    const { value, done } = await Promise.race([reader.read(), deadline])
    if (done) throw new Error('the typist ended before it synced')
    text += decoder.decode(value, { stream: true })
  }
  reader.releaseLock()
}

/** Whether the contender named `label` is ours on PostgreSQL (else ours on PGlite, or the peer). */
const onPostgres = (label: string) => label.includes('PostgreSQL')

/** The name of the database floor of the contender named `label` (PGlite, or PostgreSQL). */
const floorLabel = (label: string) => `database floor, ${onPostgres(label) ? 'PostgreSQL' : 'PGlite'}`

/** Issue 30's idle RSS targets, ours over the peer: on PGlite, and on PostgreSQL. */
const IDLE_RSS_TARGET = { pglite: 2, postgres: 1.5 }

/**
 * The idle RSS row: each server over the peer (issue 30's target), over its database floor (the server's
 * database layer alone: what no change to the server's own code can take below), the floor over the peer,
 * and what the server's own code holds above its floor beside what the peer's holds above bare Bun.
 */
function idleRssRow(contenders: Contender[], idle: number[], floorMb: Map<string, number>): Row {
  const peerAt = contenders.length - 1
  const peer = idle[peerAt]!
  const bare = floorMb.get('bare Bun')!
  const ratios: Record<string, number> = {}
  const extra: Record<string, number | string> = {}
  const misses: string[] = []
  for (const [i, c] of contenders.slice(0, peerAt).entries()) {
    const floor = floorMb.get(floorLabel(c.label))!
    ratios[`${c.label} / peer`] = idle[i]! / peer
    ratios[`${floorLabel(c.label)} / peer`] = floor / peer
    ratios[`${c.label} above its floor / peer above bare Bun`] = (idle[i]! - floor) / (peer - bare)
    extra[`${c.label} MB`] = mib(idle[i]!)
    extra[`${floorLabel(c.label)} MB`] = mib(floor)
    const target = onPostgres(c.label) ? IDLE_RSS_TARGET.postgres : IDLE_RSS_TARGET.pglite
    if (idle[i]! / peer > target) misses.push(c.label)
  }
  extra['peer MB'] = mib(peer)
  extra['bare Bun MB'] = mib(bare)
  return {
    measure: 'peer: idle RSS (no document loaded)',
    size: 'server process',
    variants: {},
    ratios,
    extra,
    // Shown, not enforced: the floor ratios say how much of a miss no change to the server's code can close.
    target: {
      text: `≤ ${IDLE_RSS_TARGET.pglite}× the peer on PGlite, ≤ ${IDLE_RSS_TARGET.postgres}× on PostgreSQL (issue 30)`,
      met: misses.length === 0,
      enforced: false,
    },
  }
}

export async function measurePeer(
  fixtures: Fixture[],
  opts: { quick: boolean; postgresUrl?: string | null },
): Promise<Row[]> {
  const debounce = opts.quick ? QUICK_DEBOUNCE : FULL_DEBOUNCE
  const smallCount = opts.quick ? 100 : 300
  const settleMs = opts.quick ? 1_000 : 3_000
  const rounds = opts.quick ? 3 : 5
  // 200 propagation samples per server and size in a full run (50 made p99 the second-largest sample).
  const editsPerRound = opts.quick ? 10 : 40
  const rows: Row[] = []
  const cleanups: Array<() => unknown> = []
  try {
    // Seed every contender with the same Yjs states: the fixtures and `smallCount` small documents.
    let t = performance.now()
    const rng = prng(14_005)
    const small = Array.from({ length: smallCount }, (_, i) => smallState(rng, i))
    const databases: Array<{ label: string; postgresUrl: string | null }> = [
      { label: 'ours', postgresUrl: null },
    ]
    if (opts.postgresUrl) databases.push({ label: 'ours on PostgreSQL', postgresUrl: opts.postgresUrl })
    // Every contender's files on the same disk (the system's temporary folder, not the tests' /dev/shm),
    // each syncing its commits by default: ours PGLITE_FSYNC, the peer SQLite's synchronous=FULL.
    const peerDir = mkdtempSync(join(tmpdir(), 'collab-bench-peer-'))
    cleanups.push(() => rmSync(peerDir, { recursive: true, force: true }))
    const seeded: Array<{ label: string; seeded: Seeded }> = []
    for (const database of databases) {
      // The database outlives its in-process seeding server; the child process opens it after.
      const db = await createTestDatabase({ postgresUrl: database.postgresUrl, root: peerDir })
      cleanups.push(() => db.cleanup())
      // The fixtures with every section's total, as a document that grew under editors has them from its
      // compactions (peer-durable.ts does the same): without, the first store after the load measured the
      // whole document (~2 s of CPU at 1 MiB), in slices that ran into the first CPU window, counted as
      // the edits' cost (issue 30: most of the 1 MiB row's 3.7×).
      seeded.push({ label: database.label, seeded: await seedOurs(db, fixtures, small, { totals: true }) })
    }
    const sqliteFile = join(peerDir, 'peer.sqlite')
    const peerSeeded = seedPeer(sqliteFile, fixtures, small)
    phase(
      `seeded ${seeded.length + 1} servers with ${fixtures.length} fixtures and ${smallCount} small documents`,
      t,
    )

    t = performance.now()
    const contenders: Contender[] = []
    for (const { label, seeded: s } of seeded) {
      const ours = await startOurs(label, s, debounce)
      cleanups.push(() => ours.stop())
      contenders.push(ours)
    }
    const peer = await startPeer(sqliteFile, peerSeeded.rooms, peerSeeded.small, debounce)
    cleanups.push(() => peer.stop())
    contenders.push(peer)
    phase(`${contenders.length} servers started`, t)

    // Memory: idle, then half the small documents open (a provider of its own each), then all of them.
    // The first documents a server opens also pay its one-off costs (code first run, a worker thread
    // started, caches, allocator arenas: ~30 MB in ours), which divided by a hundred documents read as
    // ~300 KB "per document"; the second half's growth is what each further document holds. Each figure is
    // read after a full collection in every contender (collect-on-signal.preload.ts), alike for all.
    const pids = contenders.map((c) => c.pid)
    // The floors idle RSS is read against, at the same instants: Bun answering HTTP with nothing imported,
    // and each database of ours opened alone as the server opens it (idle-floor.ts; PGlite on a fresh
    // folder of its own, since ours holds its folder; PostgreSQL on ours' database).
    t = performance.now()
    const floors = [await startIdleFloor('bare Bun', 'bare')]
    cleanups.push(() => Promise.all(floors.map((f) => f.stop())))
    for (const { label, seeded: s } of seeded) {
      // PGlite's floor on a folder of its own (postgresUrl null: not the tests' PostgreSQL either).
      const db = s.db.databaseUrl ? s.db : await createTestDatabase({ postgresUrl: null, root: peerDir })
      if (db !== s.db) cleanups.push(() => db.cleanup())
      floors.push(
        await startIdleFloor(floorLabel(label), 'database', {
          DATA_DIR: db.dataDir,
          DATABASE_URL: db.databaseUrl ?? '',
        }),
      )
    }
    phase(`${floors.length} idle floors started`, t)
    const idleAll = await settledRss([...pids, ...floors.map((f) => f.pid)], settleMs, true)
    const idle = idleAll.slice(0, pids.length)
    const floorMb = new Map(floors.map((f, i) => [f.label, idleAll[pids.length + i]!]))
    for (const floor of floors.splice(0)) await floor.stop()
    t = performance.now()
    const open: TestProvider[] = []
    const openRange = async (from: number, to: number) => {
      for (const contender of contenders) {
        for (let i = from; i < to; i += 10) {
          const batch = contender.small
            .slice(i, Math.min(i + 10, to))
            .map((room) => connectProvider(contender.url, room, contender.token))
          open.push(...batch)
          await Promise.all(batch.map((e) => e.ready))
        }
      }
    }
    const half = Math.floor(smallCount / 2)
    await openRange(0, half)
    const halfOpen = await settledRss(pids, settleMs, true)
    await openRange(half, smallCount)
    phase(`${smallCount} documents open in each`, t)
    const live = await settledRss(pids, settleMs, true)
    for (const editor of open.splice(0)) editor.destroy()
    const kb = contenders.map((_, i) => ((live[i]! - halfOpen[i]!) * 1024) / (smallCount - half))
    const kbFromIdle = contenders.map((_, i) => ((live[i]! - idle[i]!) * 1024) / smallCount)
    const peerAt = contenders.length - 1
    rows.push(idleRssRow(contenders, idle, floorMb), {
      measure: 'peer: RSS per open document',
      size: `${smallCount - half} docs after ${half}, ~${(small.reduce((s, b) => s + b.length, 0) / smallCount / 1024).toFixed(1)} KB state`,
      variants: {},
      ratios: Object.fromEntries(
        contenders.slice(0, peerAt).map((c, i) => [`${c.label} / peer`, kb[i]! / kb[peerAt]!]),
      ),
      extra: Object.fromEntries(
        contenders.flatMap((c, i) => [
          [`${c.label} KB per document`, Number(kb[i]!.toFixed(1))],
          [`${c.label} KB per document from idle`, Number(kbFromIdle[i]!.toFixed(1))],
          [`${c.label} live MB`, mib(live[i]!)],
        ]),
      ),
    })
    // Let every server unload the small documents (ours compacts nothing: they were not changed).
    await Bun.sleep(Math.max(1_000, debounce.debounceMs))

    // Propagation and store steps, per fixture size.
    let n = 0
    const p50 = (xs: number[]) => percentile(xs, 50)
    const p99 = (xs: number[]) => percentile(xs, 99)
    for (const fixture of fixtures) {
      t = performance.now()
      const sides = await Promise.all(
        contenders.map(async (contender) => {
          const room = contender.rooms.get(fixture.name)!
          const inserter = await connectInserter(contender, room)
          const remote = await startRemoteEditor(contender.url, room, contender.token)
          return {
            contender,
            room,
            inserter,
            remote,
            seen: [] as number[],
            stores: [] as number[],
            cpu: [] as number[],
          }
        }),
      )
      const of = (c: Contender) => sides.find((side) => side.contender === c)!
      try {
        // Warm-up, not counted, alike for every server: at the first size a whole round's paragraphs at
        // the measured pace and the store they cause, then two more stores; at the others one paragraph
        // and its store. JavaScriptCore compiles hot code in tiers, a function the more it runs: with three
        // paragraphs of warm-up, the first rounds timed ours' larger code (its boundary check, hooks and
        // observers) still being compiled — a long-running server's one-off cost, which the bench notes
        // measured at a quarter of a short window's CPU (bench/notes.md, issue 30).
        const first = fixture === fixtures[0]
        for (const side of sides) {
          for (let w = first ? 3 : 1; w > 0; w--) {
            const stored = side.contender.nextStore(side.room)
            for (let e = first && w === 3 ? editsPerRound : 1; e > 0; e--) {
              side.inserter.insert(n)
              await side.remote.seen(n++, 30_000)
              if (e > 1) await Bun.sleep(20)
            }
            await stored
          }
        }
        const rssOpen = sides.map((side) => rssMiB(side.contender.pid))
        phase(`${fixture.name}: every server holds it, two editors each`, t)
        for (let round = 0; round < rounds; round++) {
          for (const side of sides) {
            // Propagation: paragraphs one after another, each once the other editor has the last; then
            // the store they cause. The server's CPU time over both, with nothing else asking it anything
            // (ours is asked for /metrics only outside this window).
            const storesBefore = await side.contender.storeCount(side.room)
            const cpuBefore = cpuMs(side.contender.pid)
            for (let e = 0; e < editsPerRound; e++) {
              const at = side.inserter.insert(n)
              side.seen.push((await side.remote.seen(n++, 30_000)) - at)
              await Bun.sleep(20)
            }
            await Bun.sleep(debounce.debounceMs + (opts.quick ? STORE_SETTLE_MS.quick : STORE_SETTLE_MS.full))
            side.cpu.push(cpuMs(side.contender.pid) - cpuBefore)
            await waitFor(
              'the store of the propagation edits',
              async () => (await side.contender.storeCount(side.room)) > storesBefore,
            )
            // One paragraph alone, and the store step it causes.
            const stored = side.contender.nextStore(side.room)
            side.inserter.insert(n)
            await side.remote.seen(n++, 30_000)
            side.stores.push(await stored)
          }
        }
        phase(`${fixture.name}: ${rounds} rounds`, t)
        const base = { size: fixture.name, stateBytes: fixture.state.length }
        const propagation = compare(
          {
            ...base,
            measure: 'peer: editor→editor propagation (provider insert → editor in another process has it)',
          },
          contenders,
          (c) => of(c).seen,
          { p50, p99 },
          'ms',
          // Issue 14's target, shown and not enforced (p99 of 200 samples in a full run, 30 in --quick).
          { text: "p99 no worse than the peer's", stat: 'p99' },
        )
        for (const [i, side] of sides.entries())
          propagation.extra![`${side.contender.label} RSS with it open MB`] = mib(rssOpen[i]!)
        // Summed over the windows: CPU time is counted in 10 ms clock ticks.
        const perEdit = (c: Contender) => [
          of(c).cpu.reduce((a, b) => a + b, 0) / (editsPerRound * of(c).cpu.length),
        ]
        rows.push(
          propagation,
          compare(
            {
              ...base,
              measure:
                'peer: store step for one typed paragraph (ours: append to the log; peer: whole state)',
            },
            contenders,
            (c) => of(c).stores,
            { median: p50 },
            'ms',
            { text: "no worse than the peer's", stat: 'median' },
          ),
          compare(
            {
              ...base,
              measure: `peer: server CPU per edit (${editsPerRound} paragraphs and the store they cause)`,
            },
            contenders,
            perEdit,
            { cpu: p50 },
            'CPU ms per edit',
          ),
        )
      } finally {
        for (const side of sides) {
          side.inserter.editor.destroy()
          await side.remote.stop()
        }
      }
    }

    // Head-of-line: a small document's two editors while the largest fixture is typed into without pause
    // in another process (bench/lib/remote-typist.ts, a character every 50 ms; stored every max debounce).
    // Each server has one thread for every document: the peer's whole-state store of the large one
    // holds the small one's edits back for as long as it runs.
    const big = fixtures.at(-1)!
    const windowMs = opts.quick ? 4_000 : 12_000
    const busy = new Map(contenders.map((c) => [c, { seen: [] as number[], stores: 0 }]))
    t = performance.now()
    for (let round = 0; round < (opts.quick ? 1 : 2); round++) {
      for (const contender of contenders) {
        const rooms = [contender.rooms.get(big.name)!, contender.small[0]!]
        const typist = Bun.spawn(
          ['bun', join(import.meta.dir, 'remote-typist.ts'), contender.url, rooms[0]!, contender.token, '50'],
          { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' },
        )
        const inserter = await connectInserter(contender, rooms[1]!)
        const remote = await startRemoteEditor(contender.url, rooms[1]!, contender.token)
        try {
          // The large document loaded and typed into before the window opens: its opening (a load, the
          // first sync's whole state) is not typing, and each contender opens it at its own pace (ours in
          // parts on the worker, docs/history.md). Before, the window opened a fixed second after the
          // typist started, and caught the tail of our slower, sliced load.
          await typistReady(typist.stdout)
          await Bun.sleep(1_000) // typing for a second
          const storeCount = async () =>
            contender.peer
              ? (await contender.storeCount(rooms[0]!)) + (await contender.storeCount(rooms[1]!))
              : contender.storeCount('')
          const storesBefore = await storeCount()
          const side = busy.get(contender)!
          for (const end = Date.now() + windowMs; Date.now() < end; ) {
            const at = inserter.insert(n)
            side.seen.push((await remote.seen(n++, 30_000)) - at)
            await Bun.sleep(20)
          }
          side.stores += (await storeCount()) - storesBefore
        } finally {
          typist.stdin.end()
          await Promise.race([typist.exited, Bun.sleep(3_000).then(() => typist.kill())])
          inserter.editor.destroy()
          await remote.stop()
        }
      }
    }
    phase(`a small document while the ${big.name} one is typed into`, t)
    const headOfLine = compare(
      {
        measure: `peer: editor→editor propagation on a small document while the ${big.name} one is typed into`,
        size: `~3.5 KB beside ${big.name}`,
      },
      contenders,
      (c) => busy.get(c)!.seen,
      // A store stalls a few of hundreds of edits: the p99 may miss it, the longest wait shows it.
      { p50, p99, max: (xs) => xs.at(-1) ?? Number.NaN },
      'ms',
      { text: "p99 no worse than the peer's", stat: 'p99' },
    )
    for (const c of contenders)
      headOfLine.extra![`${c.label} store steps in the windows`] = busy.get(c)!.stores
    rows.push(headOfLine)
  } finally {
    for (const c of cleanups.reverse()) await c()
  }
  return rows
}
