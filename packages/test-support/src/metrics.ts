/**
 * Reading the server's `/metrics` (Prometheus text) in tests: one series at a time, named exactly as the
 * server writes it, `name` or `name{label="value",…}` with its labels in the server's order.
 */

/** The value of `series` in a `/metrics` text, or undefined when the text has no such series. */
export function seriesValue(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(series)) continue
    const rest = line.slice(series.length)
    // `name 3` or `name{…} 3` when the series is named without labels; exactly the labels given otherwise.
    if (rest.startsWith(' ')) return Number(rest.trim())
    if (!series.includes('{') && rest.startsWith('{')) return Number(rest.slice(rest.indexOf('} ') + 2))
  }
  return undefined
}

/** Fetches `baseUrl`'s `/metrics` (loopback: no token needed) and reads `series`; throws when it is absent. */
export async function readMetric(baseUrl: string, series: string): Promise<number> {
  const value = seriesValue(await metricsText(baseUrl), series)
  if (value === undefined) throw new Error(`/metrics has no series ${series}`)
  return value
}

/** Like readMetric, but 0 for a series not written yet (a labelled counter appears at its first count). */
export async function readCounter(baseUrl: string, series: string): Promise<number> {
  return seriesValue(await metricsText(baseUrl), series) ?? 0
}

const metricsText = async (baseUrl: string) => (await fetch(`${baseUrl}/metrics`)).text()
