/**
 * Paging a line list by `start` (1-based) within MAX_READ_CHARS, for get_outline and list_chat_rooms:
 * the budget walk from `start`, then the continuation note when lines are left, then the truncation note
 * (also when the page began past the first line, so the count says which part was shown).
 */
import { type Result, refuse } from '@collab/doc-schema'
import { MAX_READ_CHARS } from '../limits.ts'
import { walkLines } from '../render/budget.ts'
import { notes } from '../render/notes.ts'

export type StartPage = { body: string; notes: string[] }

/** What the lines are, for the refusal of a `start` past the end: "heading" / "headings". */
export type LineUnit = { one: string; many: string }

export function pageFromStart(
  lines: readonly string[],
  start: number | undefined,
  unit: LineUnit,
  truncated: (shown: number, total: number) => string,
): Result<StartPage> {
  const total = lines.length
  const first = start ?? 1
  if (total > 0 && first > total) {
    return refuse(
      'invalid_input',
      `start: ${first} is past the last ${unit.one}; the document has ${total} ${unit.many}. Call again with start from 1 to ${total}, or without start.`,
      'start',
    )
  }
  const walk = walkLines(lines.slice(first - 1), MAX_READ_CHARS)
  const shownEnd = first - 1 + walk.kept
  const noteLines: string[] = []
  if (shownEnd < total || first > 1) {
    if (shownEnd < total) noteLines.push(notes.nextStart(shownEnd + 1))
    noteLines.push(truncated(walk.kept, total))
  }
  return { kind: 'ok', value: { body: walk.text, notes: noteLines } }
}
