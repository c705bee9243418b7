/**
 * Paging a line list by `start` (1-based) within MAX_READ_CHARS, for get_outline and list_chat_rooms:
 * the budget walk from `start`, then the continuation note when lines are left, then the truncation note
 * (also when the page began past the first line, so the count says which part was shown).
 */
import { MAX_READ_CHARS } from '../limits.ts'
import { walkLines } from './budget.ts'
import { notes } from './notes.ts'

export type StartPage = { kind: 'ok'; body: string; notes: string[] } | { kind: 'past_end'; total: number }

export function pageFromStart(
  lines: readonly string[],
  start: number | undefined,
  truncated: (shown: number, total: number) => string,
): StartPage {
  const total = lines.length
  const first = start ?? 1
  if (total > 0 && first > total) return { kind: 'past_end', total }
  const walk = walkLines(lines.slice(first - 1), MAX_READ_CHARS)
  const shownEnd = first - 1 + walk.kept
  const noteLines: string[] = []
  if (shownEnd < total || first > 1) {
    if (shownEnd < total) noteLines.push(notes.nextStart(shownEnd + 1))
    noteLines.push(truncated(walk.kept, total))
  }
  return { kind: 'ok', body: walk.text, notes: noteLines }
}
