/**
 * The capacity bench's figures (bench/lib/capacity.ts measures them; capacity-report.ts writes them into
 * the docs): what a step, a series and a run record, each keystroke's propagation to the other editors of
 * its document, and the highest step a series carried. Pure.
 */

export type StepFigures = {
  /** What the step holds: editors typing, documents open, or MCP calls a second offered. */
  load: number
  editors: number
  documentsOpen: number
  keystrokes: number
  lostKeystrokes: number
  keystrokeP50: number
  keystrokeP99: number
  healthP99: number
  healthFailed: number
  /** CPU as % of one core over the window. */
  serverCpu: number
  loadCpu: number
  redisCpu?: number
  postgresCpu?: number
  serverRssMB: number
  redisPublishes?: number
  postgresTransactions?: number
  postgresRowsWritten?: number
  mcp?: {
    offered: number
    /** Calls answered without error, a second. */
    answered: number
    failed: number
    /** Not started: 64 calls of that load process were already waiting. */
    skipped: number
    unanswered: number
    p50: number
    p99: number
  }
  problems: string[]
  carried: boolean
}

export type SeriesResult = {
  name: 'editors' | 'openDocuments' | 'mcp'
  steps: StepFigures[]
  highest: number | null
  /** The series ended on its share of the time budget, before a step not carried or its last planned one. */
  stoppedByTime: boolean
}

export type CapacityResult = {
  database: string
  date: string
  /** The machine's 1-minute load average at the start and at the end of the run. */
  loadAverage: number[]
  latencyMs: number
  windowMs: number
  floor: StepFigures
  series: SeriesResult[]
  durationS: number
}

export type EditorReport = {
  room: string
  client: number
  sent: Array<[number, number]>
  recv: Record<string, Array<[number, number]>>
}

/**
 * Every keystroke sent within [from, to] paired with its arrival at each other editor of its document:
 * the first time that editor held the author's clock. One that never arrived counts as lost.
 */
export function keystrokeLatencies(editors: EditorReport[], from: number, to: number) {
  const byRoom = new Map<string, EditorReport[]>()
  for (const e of editors) {
    const list = byRoom.get(e.room) ?? []
    list.push(e)
    byRoom.set(e.room, list)
  }
  const latencies: number[] = []
  let lost = 0
  let keystrokes = 0
  for (const group of byRoom.values()) {
    for (const author of group) {
      const sent = author.sent.filter(([, t]) => t >= from && t <= to)
      keystrokes += sent.length
      for (const reader of group) {
        if (reader === author) continue
        const arrivals = reader.recv[String(author.client)] ?? []
        let j = 0
        for (const [clock, at] of sent) {
          while (j < arrivals.length && arrivals[j]![0] < clock) j++
          if (j < arrivals.length) latencies.push(arrivals[j]![1] - at)
          else lost++
        }
      }
    }
  }
  latencies.sort((a, b) => a - b)
  return { latencies, lost, keystrokes }
}

/** The last step before the first one not carried (steps stop there), or null when the first was not. */
export function highestCarried(steps: ReadonlyArray<{ carried: boolean; load: number }>): number | null {
  let highest: number | null = null
  for (const s of steps) {
    if (!s.carried) break
    highest = s.load
  }
  return highest
}
