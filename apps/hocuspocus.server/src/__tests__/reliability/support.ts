/**
 * Shared pieces of the reliability suites: the fast-check run parameters, deadlines, /health probes and
 * the figures each suite reports to docs/reliability.md. Servers and clients come from @collab/test-support
 * (useTestServer, connectRecording), as in every other test.
 */
import { appendFileSync } from 'node:fs'
import type { RunningServer } from '../../server.ts'

/** Full counts when RELIABILITY_FULL=1 (the `reliability` script); the quick ones in every `bun test`. */
export const FULL = process.env.RELIABILITY_FULL === '1'

/** fast-check parameters, as the document model's properties use them: a fixed seed under CI only. */
export { CI_SEED, runs } from '../../../../../packages/doc-schema/src/__tests__/property-runs.ts'

/** Rejects after `ms` with a recognisable error, so a hang is a failure, not a stuck test. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`HANG: ${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

/** GET /health on the real port. */
export async function healthStatus(server: RunningServer): Promise<number> {
  const response = await fetch(`${server.url}/health`)
  await response.arrayBuffer()
  return response.status
}

/**
 * Figures for docs/reliability.md: when RELIABILITY_FIGURES names a file, each suite appends one JSON
 * line per figure; scripts/reliability-report.ts runs the suites and rewrites the figures section.
 */
export function reportFigure(suite: string, figures: Record<string, unknown>): void {
  const target = process.env.RELIABILITY_FIGURES
  if (!target) return
  appendFileSync(target, `${JSON.stringify({ suite, ...figures, at: new Date().toISOString() })}\n`)
}
