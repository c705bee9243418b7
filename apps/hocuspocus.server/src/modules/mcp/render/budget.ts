/**
 * The output budget walk: keep lines from the first while `size + line.length + 1 <= max`, so the first
 * lines always survive and a cut lands on a line boundary. A first line longer than the whole budget is
 * shown cut (never inside a surrogate pair) so every call makes progress.
 */
import { safeCut } from '@collab/doc-schema'

export type Walk = {
  /** The kept lines joined by newlines. */
  text: string
  /** How many lines were kept (a cut first line counts as kept). */
  kept: number
  /** True when the first kept line had to be cut. */
  cutLine: boolean
}

export function walkLines(lines: readonly string[], max: number): Walk {
  let size = 0
  const kept: string[] = []
  for (const line of lines) {
    if (size + line.length + 1 > max) break
    kept.push(line)
    size += line.length + 1
  }
  if (kept.length === 0 && lines.length > 0) {
    const first = lines[0]!
    return { text: first.slice(0, safeCut(first, Math.max(0, max - 1))), kept: 1, cutLine: true }
  }
  return { text: kept.join('\n'), kept: kept.length, cutLine: false }
}
