/**
 * Issue 30, beside the stock Hocuspocus peer (peer-server.ts), every contender's files on the same disk
 * (the system's temporary folder, not the tests' /dev/shm), each in a child process of its own:
 * - the store step for one paragraph typed into a 10 KiB document: ours syncing its commits (PGLITE_FSYNC,
 *   the default), ours with PGLITE_FSYNC=false, and the peer (SQLite in its default journal mode,
 *   synchronous=FULL: it syncs too). Rounds interleave the three; medians. The ratio "fsync on / off" is
 *   what syncing costs a store, in the same run.
 * - the longest wait of an HTTP request while each server does its heaviest step for the largest fixture:
 *   ours when the last editor leaves (the unload's compaction: what is stored merged on the documents'
 *   worker, the state written in slices), the peer's store of one typed paragraph (its whole state encoded
 *   and written on its event loop). A request every few ms from this process (ours /health/live, the peer's
 *   "/"); each server's idle floor is sampled the same way.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '@collab/test-support/database'
import { buildFixture, type Fixture } from './fixtures.ts'
import {
  type Contender,
  compare,
  connectInserter,
  ms,
  phase,
  seedOurs,
  seedPeer,
  startOurs,
  startPeer,
  waitFor,
} from './peer-contenders.ts'
import { percentile } from './stats.ts'
import type { Row } from './types.ts'

/** The production store debounce (config.ts defaults), for every contender alike. */
const DEBOUNCE = { debounceMs: 200, maxDebounceMs: 600 }

/** Sends one request after another to `url` (a pause of `gapMs` between) until stopped: each one's wait. */
function pinger(url: string, gapMs = 5): { stop(): Promise<number[]> } {
  const waits: number[] = []
  let running = true
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      await (await fetch(url)).arrayBuffer()
      waits.push(performance.now() - started)
      await Bun.sleep(gapMs)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return waits
    },
  }
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
}

export async function measurePeerDurable(big: Fixture, opts: { quick: boolean }): Promise<Row[]> {
  const rounds = opts.quick ? 7 : 21
  const stallRounds = opts.quick ? 1 : 3
  const small = buildFixture('10 KiB', 10 * 1024)
  const fixtures = [small, big]
  const cleanups: Array<() => unknown> = []
  const rows: Row[] = []
  try {
    let t = performance.now()
    const dir = mkdtempSync(join(tmpdir(), 'collab-bench-durable-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const seededOurs = []
    for (let i = 0; i < 2; i++) {
      const db = await createTestDatabase({ postgresUrl: null, root: dir })
      cleanups.push(() => db.cleanup())
      // With every section's total, as a document that grew under editors has them from its compactions
      // (without, the first store measures a 5 MiB document for seconds, in slices, before compacting).
      seededOurs.push(await seedOurs(db, fixtures, [], { totals: true }))
    }
    const sqliteFile = join(dir, 'peer.sqlite')
    const peerSeeded = seedPeer(sqliteFile, fixtures, [])
    const synced = await startOurs('ours', seededOurs[0]!, DEBOUNCE)
    cleanups.push(() => synced.stop())
    const unsynced = await startOurs('ours, PGLITE_FSYNC=false', seededOurs[1]!, DEBOUNCE, {
      PGLITE_FSYNC: 'false',
    })
    cleanups.push(() => unsynced.stop())
    const peer = await startPeer(sqliteFile, peerSeeded.rooms, [], DEBOUNCE)
    cleanups.push(() => peer.stop())
    const contenders: Contender[] = [synced, unsynced, peer]
    phase('durable: three servers seeded and started on disk', t)

    // 1. Store steps of a 10 KiB document, interleaved; two warm-up rounds are not counted.
    t = performance.now()
    const steps = new Map<Contender, number[]>(contenders.map((c) => [c, []]))
    const inserters = await Promise.all(contenders.map((c) => connectInserter(c, c.rooms.get(small.name)!)))
    try {
      let n = 0
      for (let round = -2; round < rounds; round++) {
        for (const [i, contender] of contenders.entries()) {
          const stored = contender.nextStore(contender.rooms.get(small.name)!)
          inserters[i]!.insert(n++)
          const step = await stored
          if (round >= 0) steps.get(contender)!.push(step)
        }
      }
    } finally {
      for (const inserter of inserters) inserter.editor.destroy()
    }
    phase(`durable: ${rounds} store steps each`, t)
    const median = (c: Contender) =>
      percentile(
        [...steps.get(c)!].sort((a, b) => a - b),
        50,
      )
    const stepRow = compare(
      {
        measure:
          'durable: store step for one paragraph typed into a 10 KiB document, on disk (ours: PGLITE_FSYNC on and off; peer: SQLite, synchronous=FULL)',
        size: small.name,
        stateBytes: small.state.length,
      },
      contenders,
      (c) => steps.get(c)!,
      { median: (xs) => percentile(xs, 50) },
      'ms',
    )
    stepRow.ratios['ours fsync on / off'] = median(synced) / median(unsynced)
    rows.push(stepRow)

    // 2. The longest wait of a request while ours compacts at unload and while the peer stores.
    t = performance.now()
    const room = (c: Contender) => c.rooms.get(big.name)!
    const pingUrl = (c: Contender) => (c.peer ? c.url : `${c.url}/health/live`)
    const longest = new Map<Contender, number[]>([
      [synced, []],
      [peer, []],
    ])
    const idle = new Map<Contender, number[]>([
      [synced, []],
      [peer, []],
    ])
    for (let round = 0; round < stallRounds; round++) {
      for (const contender of [synced, peer]) {
        const floor = pinger(pingUrl(contender))
        await Bun.sleep(1_000)
        idle.get(contender)!.push(Math.max(...(await floor.stop())))
        const inserter = await connectInserter(contender, room(contender))
        try {
          if (contender.peer) {
            // Its heaviest step: the whole state stored after one typed paragraph.
            const ping = pinger(pingUrl(contender))
            const stored = contender.nextStore(room(contender))
            inserter.insert(1_000_000 + round)
            await stored
            await Bun.sleep(200)
            longest.get(contender)!.push(Math.max(...(await ping.stop())))
            continue
          }
          // Ours: the paragraph is stored (an append), then the last editor leaves: the unload's compaction.
          const stored = contender.nextStore(room(contender))
          inserter.insert(1_000_000 + round)
          await stored
          const compactions = await metric(contender.url, 'collab_document_compactions_total')
          const ping = pinger(pingUrl(contender))
          inserter.editor.destroy()
          // The unload and its compaction, with a margin; /metrics is read only after the window.
          await Bun.sleep(opts.quick ? 3_000 : 5_000)
          longest.get(contender)!.push(Math.max(...(await ping.stop())))
          await waitFor(
            'the unload compaction',
            async () => (await metric(contender.url, 'collab_document_compactions_total')) > compactions,
            // On the worker, off every request's path: a loaded machine may take a while.
            300_000,
          )
        } finally {
          inserter.editor.destroy()
        }
      }
    }
    phase(`durable: ${big.name} unload compaction and peer store, ${stallRounds} rounds`, t)
    const stallRow = compare(
      {
        measure: `durable: longest wait of an HTTP request while ours compacts ${big.name} as its last editor leaves, and while the peer stores a typed paragraph into it`,
        size: big.name,
        stateBytes: big.state.length,
      },
      [synced, peer],
      (c) => longest.get(c)!,
      { median: (xs) => percentile(xs, 50) },
      'ms',
      { text: "≤ 100 ms and no worse than the peer's store", stat: 'median' },
    )
    stallRow.target!.met &&=
      percentile(
        [...longest.get(synced)!].sort((a, b) => a - b),
        50,
      ) <= 100
    for (const c of [synced, peer])
      stallRow.extra![`${c.label} idle longest ms`] = ms(
        percentile(
          [...idle.get(c)!].sort((a, b) => a - b),
          50,
        ),
      )
    rows.push(stallRow)
  } finally {
    for (const c of cleanups.reverse()) await c()
  }
  return rows
}
