import { MAX_DIFF_EDITS } from '../limits.ts'
/**
 * A character diff of two strings, for edits applied in place: the characters both share stay untouched in
 * Yjs (their formatting, and a person's cursor anchored to them, survive), only the differing stretches are
 * deleted and inserted.
 */

/** One differing stretch: `a[aStart, aEnd)` becomes `b[bStart, bEnd)` (either side may be empty). */
export type Hunk = { aStart: number; aEnd: number; bStart: number; bEnd: number }

/** The hunks turning `a` into `b`, in order; none when they are equal. Never splits a surrogate pair. */
export function diffText(a: string, b: string): Hunk[] {
  let start = 0
  const shortest = Math.min(a.length, b.length)
  while (start < shortest && a.charCodeAt(start) === b.charCodeAt(start)) start++
  let aEnd = a.length
  let bEnd = b.length
  while (aEnd > start && bEnd > start && a.charCodeAt(aEnd - 1) === b.charCodeAt(bEnd - 1)) {
    aEnd--
    bEnd--
  }
  if (start === aEnd && start === bEnd) return []
  const hunks = myers(a.slice(start, aEnd), b.slice(start, bEnd)) ?? [
    { aStart: 0, aEnd: aEnd - start, bStart: 0, bEnd: bEnd - start },
  ]
  return hunks.map((hunk) =>
    wholeCodePoints(a, b, {
      aStart: hunk.aStart + start,
      aEnd: hunk.aEnd + start,
      bStart: hunk.bStart + start,
      bEnd: hunk.bEnd + start,
    }),
  )
}

const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff
const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff

/**
 * Widens a hunk so it never starts right after a high surrogate or ends right before a low one (a shared
 * high surrogate followed by different low ones would otherwise leave half a character in place). The
 * widened parts are equal on both sides, so the hunk still turns `a` into `b`, and it never overlaps a
 * neighbour (they may touch).
 */
function wholeCodePoints(a: string, b: string, hunk: Hunk): Hunk {
  let { aStart, aEnd, bStart, bEnd } = hunk
  while (aStart > 0 && bStart > 0 && isHigh(a.charCodeAt(aStart - 1))) {
    aStart--
    bStart--
  }
  while (aEnd < a.length && bEnd < b.length && isLow(a.charCodeAt(aEnd))) {
    aEnd++
    bEnd++
  }
  return { aStart, aEnd, bStart, bEnd }
}

/** Myers' O((N+M)·D) diff; undefined when it needs more than MAX_DIFF_EDITS edits. */
function myers(a: string, b: string): Hunk[] | undefined {
  const n = a.length
  const m = b.length
  const max = Math.min(n + m, MAX_DIFF_EDITS)
  const offset = max + 1
  let v = new Int32Array(2 * max + 3)
  const trace: Int32Array[] = []
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice())
    const next = v.slice()
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a.charCodeAt(x) === b.charCodeAt(y)) {
        x++
        y++
      }
      next[offset + k] = x
      if (x >= n && y >= m) return backtrack(trace, d, n, m, offset)
    }
    v = next
  }
  return undefined
}

/** Walks the saved frontiers back from (n, m), gathering the non-diagonal steps into hunks. */
function backtrack(trace: Int32Array[], depth: number, n: number, m: number, offset: number): Hunk[] {
  const steps: Array<{ x: number; y: number; deleted: boolean }> = []
  let x = n
  let y = m
  for (let d = depth; d > 0; d--) {
    const v = trace[d]!
    const k = x - y
    const down = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
    const prevK = down ? k + 1 : k - 1
    const prevX = v[offset + prevK]!
    const prevY = prevX - prevK
    // The snake after the step is equal characters; the step itself inserts b[prevY] or deletes a[prevX].
    x = prevX
    y = prevY
    steps.push({ x, y, deleted: !down })
  }
  steps.reverse()
  const hunks: Hunk[] = []
  for (const step of steps) {
    const hunk = hunks.at(-1)
    const aAfter = step.deleted ? step.x + 1 : step.x
    const bAfter = step.deleted ? step.y : step.y + 1
    if (hunk && hunk.aEnd === step.x && hunk.bEnd === step.y) {
      hunk.aEnd = aAfter
      hunk.bEnd = bAfter
    } else hunks.push({ aStart: step.x, aEnd: aAfter, bStart: step.y, bEnd: bAfter })
  }
  return hunks
}
