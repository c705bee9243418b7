/**
 * Regenerates the figures section of docs/reliability.md from a real run: runs the reliability suites
 * with their full counts (RELIABILITY_FULL=1), collects the figures each suite reports, and rewrites the
 * text between the `figures:start` and `figures:end` markers. Exits non-zero (and leaves the doc alone)
 * when a suite fails.
 *
 *   bun apps/hocuspocus.server/src/__tests__/reliability/report.ts
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { TOOLS } from '../../modules/mcp/tools/index.ts'

const REPO = resolve(import.meta.dir, '../../../../..')
const DOC = join(REPO, 'docs/reliability.md')
const START = '<!-- figures:start -->'
const END = '<!-- figures:end -->'

const dir = mkdtempSync(join(tmpdir(), 'reliability-'))
const figuresFile = join(dir, 'figures.jsonl')
const started = Date.now()
const proc = Bun.spawn(
  ['bun', 'test', '--timeout', '60000', 'apps/hocuspocus.server/src/__tests__/reliability'],
  {
    cwd: REPO,
    env: { ...process.env, RELIABILITY_FULL: '1', RELIABILITY_FIGURES: figuresFile },
    stdout: 'inherit',
    stderr: 'inherit',
  },
)
const code = await proc.exited
if (code !== 0) {
  rmSync(dir, { recursive: true, force: true })
  console.error(`reliability suites failed (exit ${code}); docs/reliability.md left unchanged`)
  process.exit(code)
}
const figures = existsSync(figuresFile)
  ? readFileSync(figuresFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown> & { suite: string })
  : []
rmSync(dir, { recursive: true, force: true })
const of = (suite: string) => figures.find((f) => f.suite === suite) ?? {}
const fuzz = of('input-fuzz') as Record<string, number> & { perTool?: Record<string, number> }
const hostile = of('hostile-content') as { reads?: number; largestOutputChars?: number; corpus?: string[] }
const matrix = of('access-matrix') as { cells?: number; mismatches?: number }
const n = (v: unknown) => (typeof v === 'number' ? v.toLocaleString('en-US') : '—')
type Figures = Record<string, number | undefined>
const kill = of('faults-kill') as Figures
const sigterm = of('faults-sigterm') as Figures
const postgres = of('faults-postgres') as Figures
const redis = of('faults-redis') as Figures
const editors = of('hostile-editors') as Figures
const skipped = (why: string) => `— | not run: ${why} |`
const typingKill = of('faults-typing-kill') as Figures
/** One row per attack of the red-team suites: what another client felt while it ran. */
const redTeam = figures
  .filter(
    (f) =>
      f.suite === 'red-team-imports' ||
      f.suite === 'red-team-editors' ||
      f.suite === 'red-team-history' ||
      f.suite === 'red-team-structs' ||
      f.suite.startsWith('red-team-reads') ||
      f.suite === 'red-team-section-reads',
  )
  .map((f) => {
    const health = (f.p99Ms ?? f.healthP99Ms) as number | undefined
    const keys =
      f.keystrokeP99Ms === undefined ? '' : `, keystrokes in another document p99 ${n(f.keystrokeP99Ms)} ms`
    const took =
      f.revertMs !== undefined
        ? `; the call took ${n(f.revertMs)} ms`
        : f.readMedianMs !== undefined
          ? `; ${n(f.answered)} reads answered, ${n(f.refused)} refused, a read ${n(f.readMedianMs)} ms at the median`
          : ''
    const floor =
      f.floorKeystrokeP99Ms === undefined
        ? ''
        : ` (floor, nothing running: /health p99 ${n(f.floorP99Ms ?? f.floorHealthP99Ms)} ms, keystrokes p99 ${n(f.floorKeystrokeP99Ms)} ms${took})`
    return `| red team: ${String(f.attack)} | one user's input to the real server process, another client probing from a process of its own | /health p99 ${n(health)} ms${keys}; server RSS +${n(f.growthMiB)} MiB${floor} |`
  })

const section = [
  START,
  `Last run: ${new Date().toISOString().slice(0, 10)}, ${Math.round((Date.now() - started) / 1000)} s, database: ${process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'}${process.env.CI ? ', CI seed' : ', random seed'}.`,
  '',
  '| suite | tried | result |',
  '| --- | --- | --- |',
  `| input fuzzing | ${n(fuzz.calls)} tool calls over HTTP (${n(fuzz.success)} successes, ${n(fuzz.validation)} validation errors, ${n(fuzz.refusal)} refusals, ${n(fuzz.too_large)} bodies over 1 MiB → 413) | 0 HTTP 5xx, 0 generic failures, 0 hangs (slowest call ${n(fuzz.slowestMs)} ms), /health 200 throughout |`,
  `| hostile content | ${(hostile.corpus ?? []).join(', ')}; ${n(hostile.reads)} framed reads | every read within MAX_READ_CHARS (largest output ${n(hostile.largestOutputChars)} chars), exactly one frame end, only server notes after it |`,
  `| hostile editors | ${n(editors.attempts)} connections, one after another, each sending a blockquote nested 1,000 deep, while another client polls /health every 50 ms (${n(editors.probes)} polls) | every attempt refused with its reason and nothing applied; /health 200 throughout, p99 ${n(editors.healthP99Ms)} ms |`,
  `| access matrix | ${n(matrix.cells)} cells (${TOOLS.length} tools × 4 roles × 5 tokens × 4 documents) | ${n(matrix.mismatches)} mismatches with the table |`,
  `| kill -9 after an acknowledged write | ${'kills' in kill ? `${n(kill.kills)} SIGKILLs, each the instant an MCP write (create_document or append_to_document) was answered; restarted on the same data | ${n(kill.lost)} of ${n(kill.acknowledged)} acknowledged writes missing after restart |` : skipped('no figures')}`,
  `| SIGTERM under 50 editors | ${'editors' in sigterm ? `${n(sigterm.editors)} providers typing into ${n(sigterm.documents)} documents, SIGTERM mid-typing (${n(sigterm.sent)} updates sent, ${n(sigterm.acknowledged)} acknowledged) | exit 0; ${n(sigterm.lost)} editors with an acknowledged update missing from the stored state |` : skipped('no figures')}`,
  `| PostgreSQL stopped | ${'calls' in postgres ? `private cluster stopped ${n(postgres.outageSeconds)} s under MCP calls and two editors; ${n(postgres.outageCalls)} calls during the outage | ${n(postgres.tryAgain)} "try again" tool answers, ${n(postgres.http503)} HTTP 503 (token not checkable), ${n(postgres.notConfirmed)} "not confirmed", 0 generic failures or HTTP 500; /health 503 (${n(postgres.health503)} polls); editors live throughout; ${n(postgres.storeFailures)} failed stores retried; ${n(postgres.lost)} edits missing once back |` : skipped('no PostgreSQL binaries in /usr/lib/postgresql/15/bin')}`,
  `| Redis stopped | ${'edits' in redis ? `private redis-server killed ${n(redis.outageSeconds)} s under two instances, one editor per instance on two documents (${n(redis.edits)} edits) | each instance served its own editors; converged ${n(redis.convergedMs)} ms after Redis returned with no further edit; ${n(redis.lost)} edits missing in the database |` : skipped('needs TEST_DATABASE_URL and redis-server')}`,
  `| kill -9 while editors type | ${'kills' in typingKill ? `${n(typingKill.kills)} SIGKILLs of the server process with its default store settings while ${n(typingKill.editors)} providers typed (${n(typingKill.acknowledgedWords)} words acknowledged) | ${n(typingKill.lost)} editors missing typing acknowledged more than 1 s before the kill; ${n(typingKill.ofThemFullyStored)} of ${n(typingKill.editorsWithTypingInLastSecond)} editors had even their last second stored |` : skipped('no figures')}`,
  ...redTeam,
  '| lost | — | nothing: no acknowledged write went unstored (a write answered "not confirmed" counts as a failure) |',
  END,
].join('\n')

const doc = readFileSync(DOC, 'utf8')
const from = doc.indexOf(START)
const to = doc.indexOf(END)
if (from < 0 || to < 0) throw new Error(`${DOC}: figures markers not found`)
writeFileSync(DOC, doc.slice(0, from) + section + doc.slice(to + END.length))
console.error(`docs/reliability.md: figures rewritten`)
