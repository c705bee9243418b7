/**
 * Where a typed edit's server CPU goes (issue 30): the production server (`bun src/main.ts`) on PGlite in
 * a child process, a ~100 KiB document (bench/lib/fixtures.ts), one provider in this process typing
 * paragraphs at a steady pace and an editor in another process receiving them (as the peer group's CPU
 * row does, bench/lib/peer.ts). Prints the server's CPU per edit over rounds of `--edits` paragraphs and
 * the stores they cause, per thread (/proc/<pid>/task/<tid>/stat: the server's thread, the database
 * thread, the collector's helpers), beside an idle window of the same length, so what the edits cost is
 * told apart from what the process spends anyway.
 *
 *   bun bench/cpu-per-edit.ts [--kib=100] [--edits=40] [--rounds=5] [--pace=20] [--debounce=300]
 *                             [--max-debounce=3000] [--settle=400] [--prof=DIR] [--env=NAME=VALUE ...]
 *                             [--peer] [--totals] [--server-log=FILE]
 *
 * `--prof=DIR` runs the server under Bun's CPU profiler (Markdown summaries and .cpuprofile files in DIR,
 * written when the server stops). `--peer` measures the stock Hocuspocus peer (bench/lib/peer-server.ts)
 * instead, on the same document (not profiled). `--totals` seeds the document's stored outline with every
 * section's total, as a compaction stores it (without, the first store after the load measures them all).
 * `--server-log=FILE` writes ours' stderr there when it stops (with `--env=BUN_JSC_reportDFGCompileTimes=1`
 * and the like, JSC's reports of what its JIT compiled: which functions the JIT threads' CPU went to). Not part of `bun run bench`: a tool for attributing the peer row's CPU.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '@collab/test-support/database'
import { buildFixture } from './lib/fixtures.ts'
import {
  COLLECT_ON_SIGNAL,
  connectInserter,
  seedOurs,
  seedPeer,
  startOurs,
  startPeer,
} from './lib/peer-contenders.ts'
import { startRemoteEditor } from './lib/server.ts'

const args = new Map<string, string[]>()
for (const arg of process.argv.slice(2)) {
  const match = /^--([^=]+)(?:=(.*))?$/.exec(arg)
  if (!match) throw new Error(`unknown argument ${arg}`)
  args.set(match[1]!, [...(args.get(match[1]!) ?? []), match[2] ?? ''])
}
const num = (name: string, fallback: number) => Number(args.get(name)?.[0] ?? fallback)
const kib = num('kib', 100)
const edits = num('edits', 40)
const rounds = num('rounds', 5)
const paceMs = num('pace', 20)
const debounce = { debounceMs: num('debounce', 300), maxDebounceMs: num('max-debounce', 3_000) }
const settleMs = num('settle', 400)
const prof = args.get('prof')?.[0]
const peer = args.has('peer')
const totals = args.has('totals')
const serverLog = args.get('server-log')?.[0]
const extraEnv = Object.fromEntries(
  (args.get('env') ?? []).map((pair) => [
    pair.slice(0, pair.indexOf('=')),
    pair.slice(pair.indexOf('=') + 1),
  ]),
)

/** utime + stime of each thread of `pid` in clock ticks (100 a second), by thread name. */
function threadTicks(pid: number): Map<string, number> {
  const byName = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    } catch {
      continue // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '#')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const key = tid === String(pid) ? `main (${name})` : name
    byName.set(key, (byName.get(key) ?? 0) + Number(fields[11]) + Number(fields[12]))
  }
  return byName
}
function processTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}
const diff = (after: Map<string, number>, before: Map<string, number>) =>
  new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]))
const add = (into: Map<string, number>, from: Map<string, number>) => {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v)
}

const root = mkdtempSync(join(tmpdir(), 'collab-cpu-per-edit-'))
const db = await createTestDatabase({ root })
const fixture = buildFixture(`${kib} KiB`, kib * 1024)
const preload = COLLECT_ON_SIGNAL.BUN_OPTIONS
const options = prof ? `${preload} --cpu-prof --cpu-prof-md --cpu-prof-dir=${prof}` : preload
const ours = peer
  ? await (async () => {
      const file = join(root, 'peer.sqlite')
      const seededPeer = seedPeer(file, [fixture], [])
      return startPeer(file, seededPeer.rooms, [], debounce)
    })()
  : await startOurs('ours', await seedOurs(db, [fixture], [], { totals }), debounce, {
      BUN_OPTIONS: options,
      ...extraEnv,
    })
const room = ours.rooms.get(fixture.name)!
/** Ours: title and search refreshes so far (collab_search_refresh_duration_seconds_count); the peer has none. */
async function refreshCount(): Promise<number> {
  if (peer) return 0
  const text = await (await fetch(`${ours.url}/metrics`)).text()
  return Number(/^collab_search_refresh_duration_seconds_count(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? 0)
}
const inserter = await connectInserter(ours, room)
const remote = await startRemoteEditor(ours.url, room, ours.token)
let n = 0
const windowMs = edits * paceMs + debounce.debounceMs + settleMs
try {
  // Warm-up: three batches and their stores, not counted (the store code runs cold at first).
  for (let w = 0; w < 3; w++) {
    for (let e = 0; e < 5; e++) {
      inserter.insert(n)
      await remote.seen(n++, 30_000)
    }
    await Bun.sleep(debounce.debounceMs + settleMs)
  }
  const busy = new Map<string, number>()
  const idle = new Map<string, number>()
  let busyTotal = 0
  let idleTotal = 0
  let stores = 0
  const refreshesBefore = await refreshCount()
  for (let round = 0; round < rounds; round++) {
    // Idle: the same window with nothing typed (what the process spends anyway: timers, collections).
    let before = threadTicks(ours.pid)
    let total = processTicks(ours.pid)
    await Bun.sleep(windowMs)
    add(idle, diff(threadTicks(ours.pid), before))
    idleTotal += processTicks(ours.pid) - total
    // Typing: `edits` paragraphs, each once the other editor has the last, then the store they cause.
    const storesBefore = await ours.storeCount(room)
    before = threadTicks(ours.pid)
    total = processTicks(ours.pid)
    for (let e = 0; e < edits; e++) {
      inserter.insert(n)
      await remote.seen(n++, 30_000)
      await Bun.sleep(paceMs)
    }
    await Bun.sleep(debounce.debounceMs + settleMs)
    add(busy, diff(threadTicks(ours.pid), before))
    busyTotal += processTicks(ours.pid) - total
    stores += (await ours.storeCount(room)) - storesBefore
  }
  const refreshes = (await refreshCount()) - refreshesBefore
  const perEdit = (ticks: number) => ((ticks * 10) / (edits * rounds)).toFixed(2)
  console.log(
    `${fixture.name} (${fixture.state.length} B), ${rounds} rounds of ${edits} paragraphs ${paceMs} ms apart, ` +
      `window ${windowMs} ms, ${stores} stores, ${refreshes} title and search refreshes; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  )
  // The refresh of the title and search text runs by a timer, so it lands in a typing window or in the
  // idle one after it: typing + idle counts all the work the edits set going, wherever it fell.
  console.log(
    `CPU ms per edit: typing ${perEdit(busyTotal)}, idle ${perEdit(idleTotal)}, difference ${perEdit(busyTotal - idleTotal)}, typing + idle ${perEdit(busyTotal + idleTotal)}`,
  )
  const names = [...new Set([...busy.keys(), ...idle.keys()])].sort(
    (a, b) => (busy.get(b) ?? 0) - (busy.get(a) ?? 0),
  )
  for (const name of names)
    if ((busy.get(name) ?? 0) + (idle.get(name) ?? 0) > 0)
      console.log(
        `  ${name.padEnd(28)} typing ${perEdit(busy.get(name) ?? 0)}  idle ${perEdit(idle.get(name) ?? 0)}  both ${perEdit((busy.get(name) ?? 0) + (idle.get(name) ?? 0))}`,
      )
} finally {
  inserter.editor.destroy()
  await remote.stop()
  await ours.stop()
  if (serverLog && ours.serverLog) writeFileSync(serverLog, ours.serverLog())
  await db.cleanup()
  rmSync(root, { recursive: true, force: true })
}
