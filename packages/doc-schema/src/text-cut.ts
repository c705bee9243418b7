/** Cutting text to a length in UTF-16 code units without splitting a surrogate pair (a lone half is not text). */

/** The largest cut ≤ `at` that does not separate a high surrogate from its low surrogate. */
export function safeCut(text: string, at: number): number {
  if (at <= 0) return 0
  if (at >= text.length) return text.length
  const before = text.charCodeAt(at - 1)
  return before >= 0xd800 && before <= 0xdbff ? at - 1 : at
}

/** `text` cut to at most `max` code units, at a code-point boundary. */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, safeCut(text, max))
}
