/**
 * The one refusal shape of the project: every fallible function here and in the server returns a Result,
 * and refusals are data, not exceptions. A refusal carries
 *
 * - `code`: what kind of refusal it is, from a closed list every transport maps once (an HTTP status, an
 *   MCP tool error or JSON-RPC error code, a CLI exit code);
 * - `reason`: for the refusals of the document model, the precise cause, for a caller that acts on it
 *   (a read that offers the next step, a test that names the rule); each reason has one code (REASON_CODE);
 * - `field`: the input at fault, when it is one the caller sent;
 * - `message`: starts with what is wrong (the field or the input) and says what to do instead.
 */

export type RefusalCode =
  /** The input breaks a rule (its message says which, and what to send instead). */
  | 'invalid_input'
  /** The thing named does not exist, or the caller may not know it exists. */
  | 'not_found'
  /** The input was right against an earlier state, not the current one (a stale rev, a taken name). */
  | 'conflict'
  /** The caller is known but may not do this. */
  | 'forbidden'
  /** The caller's own share is in use (its earlier request still runs): wait for it, then try again. */
  | 'rate_limited'
  /** The server cannot do it now (the database away, a queue full): try again later. */
  | 'unavailable'
  /** A failure of the server's own, answered without its details. */
  | 'internal'
  /** The caller went away while its request ran: the work stopped, and nobody reads the answer. */
  | 'cancelled'

/** The precise causes the document model refuses with, and the kind of refusal each one is. */
export const REASON_CODE = {
  // Markdown in
  empty: 'invalid_input',
  empty_title: 'invalid_input',
  missing_title: 'invalid_input',
  title_too_long: 'invalid_input',
  too_large: 'invalid_input',
  too_complex: 'invalid_input',
  invalid_content: 'invalid_input',
  h1_not_allowed: 'invalid_input',
  heading_too_shallow: 'invalid_input',
  media_in_text: 'invalid_input',
  newline_in_text: 'invalid_input',
  // Where an edit or a read points
  detached: 'invalid_input',
  not_empty: 'conflict',
  stale_rev: 'conflict',
  section_not_found: 'not_found',
  section_not_in_chapter: 'invalid_input',
  block_out_of_range: 'invalid_input',
  block_offset_out_of_range: 'invalid_input',
  text_not_found: 'not_found',
  text_ambiguous: 'invalid_input',
  empty_old_text: 'invalid_input',
  /** A line a read shows that is not text (an image placeholder, a table's delimiter, a code fence). */
  not_text: 'invalid_input',
  // What an edit would do
  nothing_to_change: 'invalid_input',
  not_a_container: 'invalid_input',
  not_items: 'invalid_input',
  not_rows: 'invalid_input',
  row_too_wide: 'invalid_input',
  container_emptied: 'invalid_input',
  not_an_item_line: 'invalid_input',
  separator_line: 'invalid_input',
  sub_items_not_listed: 'invalid_input',
  lines_unmatched: 'invalid_input',
  media_removal_needs_flag: 'invalid_input',
  // Suggestions (suggest mode, edits/propose-edit.ts and edits/suggestions.ts)
  not_proposable: 'invalid_input',
  suggestion_not_found: 'not_found',
} as const satisfies Record<string, RefusalCode>

export type RefusalReason = keyof typeof REASON_CODE

export type Refusal = {
  kind: 'error'
  code: RefusalCode
  reason?: RefusalReason
  field?: string
  message: string
}
export type Ok<T> = { kind: 'ok'; value: T }
export type Result<T> = Ok<T> | Refusal

export const ok = <T>(value: T): Ok<T> => ({ kind: 'ok', value })

/** A refusal of a kind; `field` names the input at fault (the message starts with it), omitted when none is. */
export const refuse = (code: RefusalCode, message: string, field?: string): Refusal =>
  field === undefined ? { kind: 'error', code, message } : { kind: 'error', code, field, message }

/** A refusal for a precise cause of the document model: its code is the reason's (REASON_CODE). */
export const refuseFor = (reason: RefusalReason, message: string, field?: string): Refusal => ({
  ...refuse(REASON_CODE[reason], message, field),
  reason,
})
