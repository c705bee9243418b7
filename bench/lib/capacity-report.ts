/**
 * What the capacity group (bench/lib/capacity.ts) writes: the section "Capacity of one instance" of
 * docs/performance.md and the paper estimate of docs/deploy.md, each between markers of its own, so a
 * capacity-only run rewrites them and nothing else. Without results both say so and name the command.
 */
import type { CapacityResult, SeriesResult, StepFigures } from './capacity-figures.ts'

/** The command that measures the figures on a quiet machine and writes both sections. */
export const CAPACITY_COMMAND = 'BENCH_DATABASE_URL=postgresql://… bun run bench -- --only=capacity'

const marker = (name: string, edge: 'start' | 'end') => `<!-- generated:${name} ${edge} -->`
export const PERFORMANCE_SECTION = 'capacity'
export const DEPLOY_SECTION = 'capacity-estimate'

/** The text between `name`'s markers in `text` (markers included), or null when it has none. */
export function sectionOf(text: string, name: string): string | null {
  const start = text.indexOf(marker(name, 'start'))
  const end = text.indexOf(marker(name, 'end'))
  if (start < 0 || end < start) return null
  return text.slice(start, end + marker(name, 'end').length)
}

/** `text` with `name`'s section replaced by `section` (which carries its markers); throws when it has none. */
export function replaceSection(text: string, name: string, section: string): string {
  const old = sectionOf(text, name)
  if (old === null)
    throw new Error(
      `no ${marker(name, 'start')} … ${marker(name, 'end')} markers: put them back where the section goes`,
    )
  return text.replace(old, () => section)
}

const wrap = (name: string, lines: string[]) =>
  [marker(name, 'start'), ...lines, marker(name, 'end')].join('\n')

const ms = (n: number | undefined) =>
  n === undefined || !Number.isFinite(n) ? '–' : n >= 100 ? n.toFixed(0) : n.toFixed(1)
const num = (n: number) => n.toLocaleString('en-US')
const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(1)}×` : '–')

const SERIES_LABEL: Record<SeriesResult['name'], string> = {
  editors: 'editors typing',
  openDocuments: 'documents open',
  mcp: 'MCP calls/s',
}

function stepRow(label: string, s: StepFigures, floor: StepFigures): string {
  const carried = s === floor ? '(the floor)' : s.carried ? 'yes' : `no: ${s.problems.join('; ')}`
  const mcp = s.mcp ? `${s.mcp.answered} (${ms(s.mcp.p50)} / ${ms(s.mcp.p99)})` : ''
  const extra = [s.redisCpu, s.postgresCpu].map((v) => (v === undefined ? '–' : `${v}%`)).join(' / ')
  return (
    `| ${label} | ${num(s.editors)} / ${num(s.documentsOpen)} | ${ms(s.keystrokeP50)} / **${ms(s.keystrokeP99)}** ` +
    `(${ratio(s.keystrokeP99, floor.keystrokeP99)}) | **${ms(s.healthP99)}** (${ratio(s.healthP99, floor.healthP99)}) ` +
    `| ${s.serverCpu}% | ${s.loadCpu}% | ${extra} | ${s.serverRssMB} | ${mcp} | ${carried} |`
  )
}

/**
 * What a keystroke costs, from the highest editors step carried (else the last one measured): the step's
 * CPU, Redis publishes and PostgreSQL transactions and rows over its keystrokes (the probes' included).
 * The idle work in the window (timers, upkeep) is charged to the keystrokes too, so each figure is an
 * upper bound; the difference to the floor is not used, as at small steps it is within the noise.
 */
export function perKeystroke(result: CapacityResult) {
  const editors = result.series.find((s) => s.name === 'editors')
  const step = editors?.steps.find((s) => s.load === editors.highest) ?? editors?.steps.at(-1) ?? undefined
  if (!step || step.keystrokes <= 0) return null
  const keys = step.keystrokes
  const cpuMsOf = (percent: number | undefined) =>
    percent === undefined ? undefined : (percent / 100) * result.windowMs
  const per = (n: number | undefined) => (n === undefined ? undefined : n / keys)
  const redisCpu = cpuMsOf(step.redisCpu)
  const postgresCpu = cpuMsOf(step.postgresCpu)
  return {
    step: step.load,
    carried: step.carried,
    serverCpuMs: per(cpuMsOf(step.serverCpu))!,
    redisCpuMs: per(redisCpu),
    postgresCpuMs: per(postgresCpu),
    redisPublishes: per(step.redisPublishes),
    postgresTransactions: per(step.postgresTransactions),
    postgresRows: per(step.postgresRowsWritten),
    redisCpuPerPublishMs:
      redisCpu !== undefined && step.redisPublishes ? redisCpu / step.redisPublishes : undefined,
    postgresCpuPerTransactionMs:
      postgresCpu !== undefined && step.postgresTransactions
        ? postgresCpu / step.postgresTransactions
        : undefined,
  }
}

const highestText = (s: SeriesResult | undefined) =>
  !s
    ? '–'
    : s.highest === null
      ? `< ${num(s.steps[0]?.load ?? 0)}`
      : s.steps.at(-1)?.carried
        ? `≥ ${num(s.highest)}`
        : num(s.highest)

/** docs/performance.md's section, between its markers. */
export function renderCapacitySection(results: CapacityResult[] | null, machine: string): string {
  const lines = [
    '## Capacity of one instance',
    '',
    `Written by \`${CAPACITY_COMMAND}\` (bench/lib/capacity.ts; PostgreSQL with Redis when`,
    '`BENCH_DATABASE_URL` or `TEST_DATABASE_URL` is set, and PGlite; ~10 minutes), which rewrites this section',
    'and the estimate in docs/deploy.md only; a full `bun run bench` writes it too. One real instance',
    '(`bun src/main.ts`, production store timing) in a process of its own, its load from three load',
    'processes of real providers and a real MCP SDK client, a fourth asking `/health` every 20 ms. Through',
    'every step, probe typists (4 documents, 2 editors each, 5 keystrokes/s) type; each step is a window in',
    "which every keystroke typed is timed to the other editor of its document (one clock: the machine's monotonic one),",
    "and the server's, the load processes', Redis's and the database's backends' CPU is read from /proc.",
    "Editors type one keystroke a second each (the paper estimate's average), two to a document; open",
    'documents are held by one idle editor each; MCP calls are offered at a fixed rate, open loop, 70% reads',
    '(get_outline, read_document) and 30% append_to_document (answered once stored), on 16 documents of',
    'which 4 are open. A step is **carried** when keystroke p99 and `/health` p99 stay within the latency,',
    'no keystroke is lost, every editor syncs and every call is answered on schedule; a series stops at its',
    'first step not carried. The floor is the same window with the probes only (an idle instance), in the',
    "same run; ×floor is the step's p99 over the floor's. Before the floor, 3 s of MCP calls at 2 a second",
    'per load process go unmeasured: the server loads its MCP module at its first call, once after a start.',
    '',
  ]
  if (!results || results.length === 0) {
    lines.push(
      '**Not measured yet.** The figures come from the command above on a quiet machine; the machine this',
      'group was written on (2 cores shared by several sessions, load average 20–30) validated it at small',
      'steps only (`--quick`), which measure the other work on the machine, not the instance.',
    )
    return wrap(PERFORMANCE_SECTION, lines)
  }
  lines.push(`Machine: ${machine}.`, '')
  lines.push(
    '| database | editors typing | documents open | MCP calls/s | latency | run | load average (start → end) |',
    '|---|---:|---:|---:|---|---|---|',
  )
  for (const r of results) {
    const s = (n: SeriesResult['name']) => r.series.find((x) => x.name === n)
    lines.push(
      `| ${r.database} | **${highestText(s('editors'))}** | **${highestText(s('openDocuments'))}** | **${highestText(s('mcp'))}** ` +
        `| p99 ≤ ${r.latencyMs} ms | ${r.date.slice(0, 16).replace('T', ' ')} UTC, ${r.durationS} s | ${r.loadAverage.join(' → ')} |`,
    )
  }
  lines.push(
    '',
    '"≥": the last step tried was carried (the plan\'s last, or the series\' share of the time budget ran out): the instance carries more than the run tried.',
    '',
  )
  for (const r of results) {
    const k = perKeystroke(r)
    lines.push(`### ${r.database}`, '')
    if (!(r.floor.keystrokeP99 <= r.latencyMs && r.floor.healthP99 <= r.latencyMs))
      lines.push(
        `**The idle floor is already over ${r.latencyMs} ms** (keystroke p99 ${ms(r.floor.keystrokeP99)} ms, /health p99`,
        `${ms(r.floor.healthP99)} ms): the machine was busy with other work (load average ${r.loadAverage.join(' → ')}),`,
        'so these steps measure it, not the instance. Run again on a quiet machine.',
        '',
      )
    if (k) {
      const parts = [`server ${ms(k.serverCpuMs)} ms of CPU`]
      if (k.redisPublishes !== undefined)
        parts.push(`${k.redisPublishes.toFixed(2)} Redis publishes (${ms(k.redisCpuMs)} ms of Redis CPU)`)
      if (k.postgresTransactions !== undefined)
        parts.push(
          `${k.postgresTransactions.toFixed(3)} PostgreSQL transactions and ${k.postgresRows!.toFixed(3)} rows written (${ms(k.postgresCpuMs)} ms of its CPU)`,
        )
      lines.push(
        `Per keystroke (editors step ${k.step}${k.carried ? '' : ', not carried'}: the window's totals over its keystrokes, idle work included, so upper bounds): ${parts.join(', ')}.`,
        '',
      )
    }
    lines.push(
      '| step | editors / documents open | keystroke p50 / p99 ms (×floor) | /health p99 ms (×floor) | server CPU | load processes CPU | Redis / PostgreSQL CPU | server RSS MB | MCP answered/s (p50 / p99 ms) | carried |',
      '|---|---:|---|---|---:|---:|---|---:|---|---|',
      stepRow('floor (idle)', r.floor, r.floor),
    )
    for (const s of r.series)
      for (const step of s.steps)
        lines.push(stepRow(`${SERIES_LABEL[s.name]} ${num(step.load)}`, step, r.floor))
    lines.push('')
  }
  lines.push('CPU is % of one core over the window (200% is both cores of a 2-core machine).')
  return wrap(PERFORMANCE_SECTION, lines)
}

/** docs/deploy.md's paper estimate for 10,000 editors and 100,000 documents, between its markers. */
export function renderDeployEstimate(results: CapacityResult[] | null): string {
  const r = results?.find((x) => x.database.startsWith('PostgreSQL')) ?? null
  const k = r ? perKeystroke(r) : null
  const highest = (n: SeriesResult['name']) => r?.series.find((s) => s.name === n)?.highest ?? null
  const editors = highest('editors')
  const open = highest('openDocuments')
  const calls = highest('mcp')
  const lines = [
    '**On paper: 10,000 concurrent editors and 100,000 documents.** Editors type one keystroke a second on',
    'average, two to a document (5,000 documents open at a time); each document open on k = 2 instances',
    '(any instance serves any document, so with no routing most documents are held by two).',
    '',
  ]
  if (!r || !k || editors === null || open === null) {
    lines.push(
      '**Placeholders until the capacity run:** the ‹marked› figures come from `bun run bench -- --only=capacity`',
      'with PostgreSQL (docs/performance.md, Capacity of one instance), which rewrites this paragraph with them.',
      '',
      '- Instances: 10,000 ÷ ‹editors one instance carries at p99 ≤ 100 ms›, and 5,000 ÷ ‹documents one',
      '  instance holds open›, whichever is more; agents add 1 instance per ‹MCP calls/s one instance carries›.',
      '- Redis: 10,000 edits/s × (1 + 3(k − 1)) = 40,000 publishes/s (counted above), at ‹Redis CPU per',
      '  publish› on its one thread.',
      '- PostgreSQL: 10,000 × ‹transactions per keystroke› transactions/s (about 1.7 a second per document',
      '  edited without pause, counted above), at ‹PostgreSQL CPU per transaction›.',
      '- Which gives out first: the part not scaled by adding instances whose share of its one unit is',
      "  highest: Redis's one thread or PostgreSQL's one server (expected: Redis, as documents spread over",
      '  more instances); until measured, this is the reasoning above, not a figure.',
    )
    return wrap(DEPLOY_SECTION, lines)
  }
  const forEditors = Math.ceil(10_000 / editors)
  const forDocuments = Math.ceil(5_000 / open)
  const instances = Math.max(forEditors, forDocuments)
  const publishesPerEdit = 4 // 1 + 3(k − 1), k = 2
  const redisMsPerPublish = k.redisCpuPerPublishMs
  const redisShare =
    redisMsPerPublish === undefined ? undefined : (10_000 * publishesPerEdit * redisMsPerPublish) / 1000
  const pgTransactions = (k.postgresTransactions ?? 0) * 10_000
  const pgCores =
    k.postgresCpuPerTransactionMs === undefined
      ? undefined
      : (pgTransactions * k.postgresCpuPerTransactionMs) / 1000
  const pct = (x: number | undefined) => (x === undefined ? '–' : `${(x * 100).toFixed(0)}%`)
  lines.push(
    `From the capacity run of ${r.date.slice(0, 10)} (${r.database}, load average ${r.loadAverage.join(' → ')};`,
    'docs/performance.md, Capacity of one instance):',
    '',
    `- **Instances**: one carries ${num(editors)} editors typing and ${num(open)} documents open at p99 ≤ ${r.latencyMs} ms, so`,
    `  10,000 editors need ${forEditors} and their 5,000 documents ${forDocuments}: **${instances} instances** (plus headroom`,
    `  for a restart: one more). Agents: one instance carries ${calls === null ? '‹not carried at the first rate›' : `${num(calls)} MCP calls/s`}, so each`,
    `  ${calls ? num(calls) : '‹…›'} calls/s of agents adds one. All 100,000 documents open at once would take ${Math.ceil(100_000 / open)}; an idle`,
    '  document costs nothing on an instance (a row and its updates in PostgreSQL).',
    `- **Redis**: 10,000 × ${publishesPerEdit} = 40,000 publishes/s; at ${ms(redisMsPerPublish)} ms of Redis CPU per publish measured`,
    `  here (one instance, so no replies; Redis's idle work included, so an upper bound), its one thread is **${pct(redisShare)} busy**, and each more instance holding a`,
    '  document adds 3 messages an edit, each an answer some instance computes.',
    `- **PostgreSQL**: ${k.postgresTransactions?.toFixed(3)} transactions per keystroke measured, so ${num(Math.round(pgTransactions))} a second; at`,
    `  ${ms(k.postgresCpuPerTransactionMs)} ms of CPU each (its backends' idle work included: an upper bound) that is **${pgCores === undefined ? '–' : pgCores.toFixed(1)} cores** of one server.`,
    `- **Gives out first**: ${firstToGiveOut(redisShare, pgCores)}`,
  )
  return wrap(DEPLOY_SECTION, lines)
}

function firstToGiveOut(redisShare: number | undefined, pgCores: number | undefined): string {
  if (redisShare === undefined || pgCores === undefined)
    return 'not decided by this run (Redis or PostgreSQL CPU not measured).'
  // One Redis thread against a PostgreSQL server of 8 cores, the size one machine of such a fleet has.
  const pgShare = pgCores / 8
  return redisShare >= pgShare
    ? `Redis's one thread (${(redisShare * 100).toFixed(0)}% of it, against ${(pgShare * 100).toFixed(0)}% of an 8-core PostgreSQL): instances scale out, Redis does not; keep a document's editors on the same instances (routing by document) or shard Redis by document.`
    : `PostgreSQL (${(pgShare * 100).toFixed(0)}% of an 8-core server, against ${(redisShare * 100).toFixed(0)}% of Redis's one thread): instances scale out, the one database does not; fewer stores per document (a longer store debounce) or more database CPU.`
}
