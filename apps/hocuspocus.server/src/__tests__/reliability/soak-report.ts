/**
 * What the soak (soak.ts) says when it ends: its figures as a Markdown section, the distinct errors in an
 * instance's log, and docs/reliability.md's soak section rewritten with the figures.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { TOOLS } from '../../modules/mcp/tools/index.ts'
import { CALL_DEADLINE_MS, percentile, type Recorder, type Typist } from './soak-support.ts'

const DOC_FILE = join(resolve(import.meta.dir, '../../../../..'), 'docs/reliability.md')
const START = '<!-- soak:start -->'
const END = '<!-- soak:end -->'

export type Convergence = { documents: number; copiesPerDocument: string; converged: number; stored: number }

/** Distinct error-level log lines (message and error), with counts: the diagnosis of a failed call. */
export function serverErrors(logs: string): string[] {
  const counts = new Map<string, number>()
  for (const line of logs.split('\n')) {
    if (!line.startsWith('{')) continue
    try {
      const entry = JSON.parse(line) as {
        level?: number
        msg?: string
        err?: { message?: string; code?: string }
      }
      if ((entry.level ?? 0) < 50) continue
      const key = `${entry.msg ?? ''}: ${entry.err?.code ?? ''} ${(entry.err?.message ?? '').split('\n')[0]!.slice(0, 200)}`
      counts.set(key, (counts.get(key) ?? 0) + 1)
    } catch {}
  }
  return [...counts].map(([key, n]) => `${n} × ${key}`)
}

const fmt = (n: number) => n.toLocaleString('en-US')
const ms = (n: number) => (n < 10 ? n.toFixed(1) : Math.round(n).toString())

/** The run's figures as docs/reliability.md shows them: a sentence, a table a tool, refusals and convergence. */
export function soakReport(run: {
  recorder: Recorder
  typists: Typist[]
  convergence: Convergence
  settings: { seconds: number; clients: number; providers: number; documents: number; seed: number }
  /** The whole run's seconds, start-up and checks included. */
  seconds: number
  /** Whether the log check found a token or a text in an instance's log. */
  logsFailed: boolean
}) {
  const { recorder, typists, convergence, settings, seconds } = run
  const tools = recorder.tools().filter((t) => t !== 'initialize')
  const writes = new Set(TOOLS.filter((tool) => tool.kind !== 'read').map((tool) => tool.name))
  const total = recorder.total(undefined)
  const writeCalls = tools.filter((t) => writes.has(t)).reduce((s, t) => s + recorder.total(t), 0)
  const rateLimited = recorder.total(undefined, (k) => k === 'rate_limited')
  const refusals = [...recorder.byOutcome()].filter(([k]) => k.startsWith('refused:'))
  const failureKinds = [...recorder.byOutcome()].filter(([k]) => k.startsWith('failure:'))
  const updates = typists.reduce((s, t) => s + t.updates(), 0)
  const lines = [
    `${fmt(total)} tool calls in ${settings.seconds} s (${fmt(Math.round(total / settings.seconds))}/s), ${Math.round((100 * writeCalls) / Math.max(1, total))}% writes; ${settings.clients} MCP clients and ${settings.providers} typing providers over ${settings.documents} documents, half on each of two instances (PostgreSQL, Redis); ${fmt(updates)} provider updates sent; seed ${settings.seed}; whole run ${seconds} s.`,
    '',
    '| tool | calls | ok | refused (expected) | rate limited | failed | p50 ms | p99 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...tools.map((tool) => {
      const lat = recorder.latencies.get(tool) ?? []
      return `| ${tool} | ${fmt(recorder.total(tool))} | ${fmt(recorder.total(tool, (k) => k === 'ok'))} | ${fmt(recorder.total(tool, (k) => k.startsWith('refused:')))} | ${fmt(recorder.total(tool, (k) => k === 'rate_limited'))} | ${fmt(recorder.total(tool, (k) => k.startsWith('failure:')))} | ${ms(percentile(lat, 50))} | ${ms(percentile(lat, 99))} |`
    }),
    '',
    `Refusals: ${refusals.length ? refusals.map(([k, n]) => `${k.slice(8)} ${fmt(n)}`).join(', ') : 'none'}; rate limited: ${fmt(rateLimited)}; failed calls: ${failureKinds.length ? failureKinds.map(([k, n]) => `${k.slice(8)} ${fmt(n)}`).join(', ') : '0'} (HTTP or transport error, generic server failure, write not confirmed, unexpected refusal, malformed answer, over ${CALL_DEADLINE_MS / 1000} s).`,
    `Convergence: ${convergence.converged} of ${convergence.documents} documents identical in every provider and in each instance's live copy (${convergence.copiesPerDocument}), ${convergence.stored} of ${convergence.documents} identical to the stored state after both instances stopped. Log check over both instances' stderr (LOG_LEVEL=debug): ${run.logsFailed ? 'FAILED' : 'no token, no document or chat text'}.`,
  ]
  return lines.join('\n')
}

/** Replaces the soak section of docs/reliability.md (between its markers) with `summary` and the machine. */
export function writeSoakFigures(summary: string, kind: 'quick' | 'full', loadAtStart: number): void {
  const doc = readFileSync(DOC_FILE, 'utf8')
  const from = doc.indexOf(START)
  const to = doc.indexOf(END)
  if (from < 0 || to < 0) throw new Error(`${DOC_FILE}: soak markers not found`)
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, load average ${loadAtStart.toFixed(1)} at the start and ${loadavg()[0]!.toFixed(1)} at the end`
  const section = `${START}\nLast run: ${new Date().toISOString().slice(0, 10)}, ${kind}, ${machine}.\n\n${summary}\n${END}`
  writeFileSync(DOC_FILE, doc.slice(0, from) + section + doc.slice(to + END.length))
}
