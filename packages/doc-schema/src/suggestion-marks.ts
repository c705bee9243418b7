/**
 * Suggestions: an agent in suggest mode proposes text instead of writing it. Its new text carries the
 * `suggestionInsert` mark, and text it would delete stays, carrying `suggestionDelete`. Both marks hold who
 * proposed it (set by the server from the principal, never by an editor: the boundary refuses an editor's
 * update that starts a suggestion, check-update.ts), an id shared by the change's pieces, and when.
 *
 * Until someone decides, the document's accepted content is its text without the insertions and with the
 * deletions kept: that is what export, search and plain text hold. Accepting an insertion drops its mark;
 * accepting a deletion deletes the text; rejecting does the inverse (suggestions.ts).
 */
export const SUGGESTION_INSERT = 'suggestionInsert'
export const SUGGESTION_DELETE = 'suggestionDelete'
export const SUGGESTION_MARKS: readonly string[] = [SUGGESTION_INSERT, SUGGESTION_DELETE]

/** What a suggestion mark holds (Yjs stores it as the formatting attribute's value). */
export type SuggestionAttrs = {
  /** Shared by every piece of one proposed change (one tool call). */
  id: string
  /** The user whose agent proposed it. */
  userId: string
  /** Who proposed it, as people read it: `handle` or `handle via app`. */
  author: string
  /** When, ISO 8601. */
  at: string
}

/** Whether a Yjs formatting attribute set (of a text run) holds a proposed insertion. */
export function isProposedInsertion(attributes: Record<string, unknown> | undefined): boolean {
  return attributes?.[SUGGESTION_INSERT] != null
}
