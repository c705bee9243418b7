/**
 * Expected refusals carry a stable code and a message that names what is wrong and what to do.
 * Services return them as values; transports map codes to their own answers (HTTP status, exit code).
 */
export type Refusal = { kind: 'error'; code: RefusalCode; message: string }
export type Ok<T> = { kind: 'ok'; value: T }
export type Result<T> = Ok<T> | Refusal

export type RefusalCode = 'invalid_input' | 'not_found' | 'conflict' | 'forbidden' | 'unavailable'

export const ok = <T>(value: T): Ok<T> => ({ kind: 'ok', value })
export const refuse = (code: RefusalCode, message: string): Refusal => ({ kind: 'error', code, message })
