/** Deterministic randomness and small statistics: medians with min/max, percentiles, side-by-side timing. */

import type { Rng } from '../../packages/doc-schema/src/__tests__/seeded-random.ts'

/** The seeded generator tests use too (mulberry32): fixtures are byte-identical run to run. */
export {
  type Rng,
  seededRandom as prng,
} from '../../packages/doc-schema/src/__tests__/seeded-random.ts'

export const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!
export const between = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1))

export type Summary = { median: number; min: number; max: number; n: number }

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    median: percentile(sorted, 50),
    min: sorted[0] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
    n: sorted.length,
  }
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  if (p === 50 && sorted.length % 2 === 0) {
    const mid = sorted.length / 2
    return (sorted[mid - 1]! + sorted[mid]!) / 2
  }
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!
}

/**
 * Times several variants interleaved (A B C, A B C, …) so drift and noise on a shared machine hit them
 * alike. Each run may set up untimed state first (`prepare`), then the timed body runs once.
 */
export function timeSideBySide<K extends string>(
  runs: number,
  variants: Record<K, { prepare?: () => unknown; run: (prepared: unknown) => unknown }>,
  warmup = 1,
): Record<K, Summary> {
  const keys = Object.keys(variants) as K[]
  const samples = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>
  let sink = 0
  for (let i = 0; i < warmup + runs; i++) {
    for (const key of keys) {
      const variant = variants[key]
      const prepared = variant.prepare?.()
      const start = Bun.nanoseconds()
      const out = variant.run(prepared)
      const ms = (Bun.nanoseconds() - start) / 1e6
      if (out !== undefined) sink++
      if (i >= warmup) samples[key].push(ms)
    }
  }
  if (sink < 0) console.log(sink)
  return Object.fromEntries(keys.map((k) => [k, summarize(samples[k])])) as Record<K, Summary>
}

/** Ratios of medians, each named `a / b`: variant a's median over variant b's ("naive / ours": a speed-up). */
export function ratiosOf<K extends string>(
  variants: Record<K, Summary>,
  names: readonly `${K} / ${K}`[],
): Record<string, number> {
  return Object.fromEntries(
    names.map((name) => {
      const [a, b] = name.split(' / ') as [K, K]
      return [name, variants[a].median / variants[b].median]
    }),
  )
}

/** A one-line progress bar on stderr (redrawn in place on a terminal, one line per step otherwise). */
export function progress(label: string, done: number, total: number) {
  const width = 24
  const filled = Math.round((done / Math.max(1, total)) * width)
  const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round((done / Math.max(1, total)) * 100)}%`
  if (process.stderr.isTTY) process.stderr.write(`\r${line}${done >= total ? '\n' : ''}`)
  else if (done >= total || done === 0) process.stderr.write(`${line}\n`)
}

export const fmtMs = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2))
export const fmtRatio = (r: number) => (r >= 10 ? r.toFixed(0) : r.toFixed(2))
