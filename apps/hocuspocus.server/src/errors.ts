/**
 * Expected refusals carry a stable code, the field at fault when there is one, and a message that names
 * what is wrong and what to do. Services return them as values; transports map codes to their own answers
 * (HTTP status, CLI exit code, MCP tool error).
 */
export type Refusal = { kind: 'error'; code: RefusalCode; field?: string; message: string }
export type Ok<T> = { kind: 'ok'; value: T }
export type Result<T> = Ok<T> | Refusal

export type RefusalCode =
  | 'invalid_input'
  | 'not_found'
  | 'conflict'
  | 'forbidden'
  | 'unavailable'
  /** The caller's own share is in use (its earlier request still runs): wait for it, then try again. */
  | 'rate_limited'

export const ok = <T>(value: T): Ok<T> => ({ kind: 'ok', value })
/** `field` names the input at fault (the message starts with it); omit it when no single field is. */
export const refuse = (code: RefusalCode, message: string, field?: string): Refusal =>
  field === undefined ? { kind: 'error', code, message } : { kind: 'error', code, field, message }
