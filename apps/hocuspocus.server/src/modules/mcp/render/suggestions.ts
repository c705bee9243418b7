/** What list_suggestions and decide_suggestions show: a line per pending suggestion, and their notes. */
import type { PendingSuggestion } from '@collab/doc-schema'
import { escapeFrameContent } from './frame.ts'

/** One suggestion as a line inside the data frame: its id, who, when, where, and its text. */
export function suggestionLine(s: PendingSuggestion): string {
  const quote = (text: string, chars: number) =>
    JSON.stringify(text) + (chars > text.length ? ` (${chars} characters, cut)` : '')
  const parts = [
    `${s.id}: by ${s.author || 'an agent'} at ${s.at}, section_id ${s.sectionId || '(before the first heading)'}`,
  ]
  if (s.insertedChars > 0) parts.push(`adds ${quote(s.inserted, s.insertedChars)}`)
  if (s.deletedChars > 0) parts.push(`removes ${quote(s.deleted, s.deletedChars)}`)
  return escapeFrameContent(parts.join('; '))
}

export const suggestionNotes = {
  more: (shown: number) =>
    `[More suggestions: these are the first ${shown} in document order; decide some (decide_suggestions) and call list_suggestions again for the rest.]`,
  cut: (shown: number, total: number) =>
    `[Showing ${shown} of the ${total} suggestions listed here: the answer reached its size limit; decide these and call list_suggestions again for the rest.]`,
  howToDecide: () =>
    '[Reads show pending suggestions inside the text as {++added++} and {--removed--}; markers typed as text show escaped (\\{++text++\\}) and are no suggestion. Export and search hold the document without them. decide_suggestions accepts or rejects them by id or all at once.]',
}
