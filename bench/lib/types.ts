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

/**
 * A row whose one ratio is variant `over`'s median to variant `under`'s, named `name` ("over / under" when
 * it says none); `more` adds the row's other fields.
 */
export function medianRatioRow(
  head: Pick<Row, 'measure' | 'size' | 'stateBytes'>,
  variants: Record<string, Summary>,
  { over, under, name = `${over} / ${under}` }: { over: string; under: string; name?: string },
  more: Pick<Row, 'extra' | 'target'> = {},
): Row {
  const ratio = variants[over]!.median / variants[under]!.median
  return { ...head, variants, ratios: { [name]: ratio }, ...more }
}
