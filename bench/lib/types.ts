import type { Summary } from './stats.ts'

/** One measurement at one size: every variant timed side by side, ratios computed from the medians. */
export type Row = {
  measure: string
  size: string
  stateBytes?: number
  /** Milliseconds per operation (or per request), median with min/max over n runs. */
  variants: Record<string, Summary>
  /** Named ratios of medians, e.g. "ours / floor" or "naive / ours" (speed-up). */
  ratios: Record<string, number>
  extra?: Record<string, number | string>
  target?: { text: string; met: boolean; enforced?: boolean }
}
