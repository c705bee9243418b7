/**
 * The benchmark suite (issue 5). `bun run bench` runs everything; `bun run bench -- --quick` runs the small
 * sizes in under a minute (CI). Writes bench/results/latest.json and docs/performance.md; exits 1 when an
 * enforced check fails (a sequential scan of documents, a broken measurement).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { FULL_PLAN, measureCapacity, QUICK_PLAN } from './lib/capacity.ts'
import type { CapacityResult } from './lib/capacity-figures.ts'
import {
  DEPLOY_SECTION,
  PERFORMANCE_SECTION,
  renderCapacitySection,
  renderDeployEstimate,
  replaceSection,
} from './lib/capacity-report.ts'
import { measureDenseMarks } from './lib/dense-marks.ts'
import { measureFind } from './lib/find.ts'
import { buildFixture, type Fixture } from './lib/fixtures.ts'
import { measureInBlockEdit } from './lib/in-block-edit.ts'
import { measureMemory } from './lib/memory.ts'
import { measurePeer } from './lib/peer.ts'
import { measurePeerDurable } from './lib/peer-durable.ts'
import { measurePure, measureSectionScale } from './lib/pure.ts'
import { renderReport } from './lib/report.ts'
import { measureCutSectionRead, measureFirstCutRead } from './lib/section-cut.ts'
import { measureServer } from './lib/server.ts'
import { fmtRatio } from './lib/stats.ts'
import { measureStore } from './lib/store.ts'
import type { Row } from './lib/types.ts'
import { measureWeb } from './lib/web.ts'

const ROOT = join(import.meta.dir, '..')
const quick = process.argv.includes('--quick')
/**
 * --only=pure|server|store|find|memory|web|peer|capacity runs one group (the others are skipped). Only
 * capacity may run alone at full size: it rewrites its own sections of docs/performance.md and
 * docs/deploy.md and nothing else.
 */
const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7)
const started = performance.now()

const sizes: Array<{ name: string; bytes: number; runs: number }> = quick
  ? [
      { name: '100 KiB', bytes: 100 * 1024, runs: 5 },
      { name: '1 MiB', bytes: 1024 * 1024, runs: 3 },
    ]
  : [
      { name: '100 KiB', bytes: 100 * 1024, runs: 21 },
      { name: '1 MiB', bytes: 1024 * 1024, runs: 11 },
      { name: '5 MiB', bytes: 5 * 1024 * 1024, runs: 7 },
    ]

// The capacity group builds documents of its own: a capacity-only run builds no fixture.
const fixtures: Fixture[] = only === 'capacity' ? [] : sizes.map((s) => buildFixture(s.name, s.bytes))
const rows: Row[] = []
const failures: string[] = []

for (const [i, size] of sizes.entries()) {
  if (only && only !== 'pure') break
  process.stderr.write(`measuring reads at ${size.name}…\n`)
  rows.push(...measurePure(fixtures[i]!, size.runs, quick))
}
if (!only || only === 'pure') {
  process.stderr.write('measuring warm section reads by document size (10 K and 800 K characters)…\n')
  rows.push(measureSectionScale(quick ? 21 : 51))
  process.stderr.write('measuring cut section reads by section size (100,000 and 10 blocks)…\n')
  rows.push(measureCutSectionRead(quick ? 21 : 51))
  process.stderr.write('measuring first cut reads of stored sections (100,000 and 10 blocks)…\n')
  rows.push(measureFirstCutRead(quick ? 5 : 11))
  process.stderr.write('measuring in_block edits by list length (1,000 and 10 items)…\n')
  rows.push(measureInBlockEdit(quick ? 21 : 51))
  process.stderr.write('measuring whole reads by phrasing writer (10,000 marks, an ordinary document)…\n')
  rows.push(...measureDenseMarks(fixtures.find((f) => f.name === '1 MiB')!, quick ? 7 : 21))
}
if (!only || only === 'server') {
  const oneMiB = fixtures.find((f) => f.name === '1 MiB')!
  process.stderr.write('measuring MCP over HTTP and edit propagation…\n')
  try {
    rows.push(...(await measureServer(oneMiB, { quick })))
  } catch (error) {
    failures.push(`server measurements: ${(error as Error).stack ?? error}`)
  }
}

if (!only || only === 'store') {
  // PostgreSQL as for find_documents below (BENCH_DATABASE_URL, else TEST_DATABASE_URL).
  const postgresUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || null
  const databases: Array<{ name: string; postgresUrl: string | null }> = [
    { name: 'PGlite', postgresUrl: null },
  ]
  if (postgresUrl) databases.push({ name: 'PostgreSQL', postgresUrl })
  for (const database of databases) {
    process.stderr.write(
      `measuring stores on ${database.name}: writes by size, event-loop delay, compaction…\n`,
    )
    try {
      rows.push(...(await measureStore(database, { quick })))
    } catch (error) {
      failures.push(`stores on ${database.name}: ${(error as Error).stack ?? error}`)
    }
  }
}

if (!only || only === 'find') {
  // PostgreSQL from BENCH_DATABASE_URL (else TEST_DATABASE_URL): a database is created on it and dropped.
  const postgresUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || null
  const databases: Array<{ name: string; postgresUrl: string | null }> = [
    { name: 'PGlite', postgresUrl: null },
  ]
  if (postgresUrl) databases.push({ name: 'PostgreSQL', postgresUrl })
  else process.stderr.write('find_documents on PostgreSQL: not measured (set BENCH_DATABASE_URL)\n')
  for (const database of databases) {
    process.stderr.write(`measuring find_documents on ${database.name}…\n`)
    try {
      rows.push(...(await measureFind(database, { quick })))
    } catch (error) {
      failures.push(`find_documents on ${database.name}: ${(error as Error).stack ?? error}`)
    }
  }
}

if (!only || only === 'web') {
  const oneMiB = fixtures.find((f) => f.name === '1 MiB')!
  process.stderr.write(
    'measuring the web editor in Chromium: first paint, keystrokes between browsers, keystroke to paint…\n',
  )
  try {
    rows.push(...(await measureWeb(oneMiB, { quick })))
  } catch (error) {
    failures.push(`web editor measurements: ${(error as Error).stack ?? error}`)
  }
}

if (!only || only === 'memory') {
  // The server in a process of its own, so its RSS is measured without the bench's allocations.
  process.stderr.write('measuring memory: live documents and cold reads…\n')
  try {
    rows.push(...(await measureMemory({ quick })))
  } catch (error) {
    failures.push(`memory measurements: ${(error as Error).stack ?? error}`)
  }
}

if (!only || only === 'peer') {
  // Every server in a child process of its own, on the fixtures above (bench/lib/peer.ts); ours also on
  // PostgreSQL as for the stores above.
  const postgresUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || null
  process.stderr.write('measuring beside a stock Hocuspocus peer: propagation, store steps, memory…\n')
  try {
    rows.push(...(await measurePeer(fixtures, { quick, postgresUrl })))
  } catch (error) {
    failures.push(`peer measurements: ${(error as Error).stack ?? error}`)
  }
  process.stderr.write(
    'measuring beside the peer on disk: store step with and without fsync, unload compaction…\n',
  )
  try {
    rows.push(...(await measurePeerDurable(fixtures.at(-1)!, { quick })))
  } catch (error) {
    failures.push(`durable peer measurements: ${(error as Error).stack ?? error}`)
  }
}

const capacity: CapacityResult[] = []
if (!only || only === 'capacity') {
  // One instance stepped up under editors, open documents and agent calls (bench/lib/capacity.ts), on
  // PostgreSQL with Redis (BENCH_DATABASE_URL, else TEST_DATABASE_URL) and on PGlite.
  const postgresUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || null
  const both = [
    ...(postgresUrl ? [{ name: 'PostgreSQL + Redis', postgresUrl, redis: true }] : []),
    { name: 'PGlite', postgresUrl: null, redis: false },
  ]
  // CI's quick run of every group keeps it from rotting on one database (~2–3 minutes on a loaded machine).
  const databases = quick && only !== 'capacity' ? both.slice(0, 1) : both
  if (!postgresUrl)
    process.stderr.write('capacity on PostgreSQL + Redis: not measured (set BENCH_DATABASE_URL)\n')
  for (const database of databases) {
    process.stderr.write(`measuring the capacity of one instance on ${database.name}…\n`)
    try {
      capacity.push(await measureCapacity(database, quick ? QUICK_PLAN : FULL_PLAN))
    } catch (error) {
      failures.push(`capacity on ${database.name}: ${(error as Error).stack ?? error}`)
    }
  }
}

for (const row of rows)
  if (row.target?.enforced && !row.target.met) failures.push(`${row.measure}: ${row.target.text}`)

const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Bun ${Bun.version}, ${os.platform()}`
const mode = quick ? 'quick (100 KiB and 1 MiB)' : 'full'
mkdirSync(join(ROOT, 'bench/results'), { recursive: true })
writeFileSync(
  join(ROOT, 'bench/results/latest.json'),
  `${JSON.stringify({ date: new Date().toISOString(), mode, machine, fixtures: fixtures.map(({ state, ...f }) => ({ ...f, stateBytes: state.length })), rows, capacity, failures }, null, 2)}\n`,
)
// The committed report comes from full runs; a quick run (CI) writes it only when asked. A capacity-only
// run rewrites the capacity section and docs/deploy.md's estimate, leaving every other row as it was.
const writeDocs = !quick || process.argv.includes('--write-docs')
if (writeDocs && only === 'capacity' && capacity.length > 0) {
  const performance = join(ROOT, 'docs/performance.md')
  writeFileSync(
    performance,
    replaceSection(
      readFileSync(performance, 'utf8'),
      PERFORMANCE_SECTION,
      renderCapacitySection(capacity, machine),
    ),
  )
} else if (writeDocs && !only) {
  const notes = readFileSync(join(ROOT, 'bench/notes.md'), 'utf8')
  const section = renderCapacitySection(capacity.length > 0 ? capacity : null, machine)
  writeFileSync(
    join(ROOT, 'docs/performance.md'),
    renderReport({ rows, mode, machine, notes, capacity: section }),
  )
}
if (writeDocs && (!only || only === 'capacity') && capacity.length > 0) {
  const deploy = join(ROOT, 'docs/deploy.md')
  if (existsSync(deploy))
    writeFileSync(
      deploy,
      replaceSection(readFileSync(deploy, 'utf8'), DEPLOY_SECTION, renderDeployEstimate(capacity)),
    )
}

for (const row of rows) {
  const ratios = Object.entries(row.ratios)
    .map(([k, v]) => `${k} ${fmtRatio(v)}×`)
    .join(', ')
  const target = row.target ? `  [${row.target.met ? 'met' : 'MISSED'}: ${row.target.text}]` : ''
  console.log(`${row.measure.padEnd(28)} ${row.size.padEnd(8)} ${ratios}${target}`)
}
for (const result of capacity) {
  const line = result.series
    .map((s) => `${s.name} ${s.highest ?? 'none'}${s.steps.at(-1)?.carried ? '+' : ''}`)
    .join(', ')
  console.log(`capacity ${result.database.padEnd(20)} carried at p99 ≤ ${result.latencyMs} ms: ${line}`)
}
console.log(`bench ${mode}: ${rows.length} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`)
if (failures.length > 0) {
  console.error(`bench FAILED:\n${failures.join('\n')}`)
  process.exit(1)
}
process.exit(0)
