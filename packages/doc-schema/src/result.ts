/** Every fallible function in this package returns a Result: refusals are data, not exceptions. */
export type Result<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'error'; code: string; field?: string; message: string }

export function ok<T>(value: T): Result<T> {
  return { kind: 'ok', value }
}

/**
 * `message` starts with what is wrong (the field or the input) and says what to do instead; `field` names
 * that input when it is one the caller sent (omit it otherwise).
 */
export function refuse<T = never>(code: string, message: string, field?: string): Result<T> {
  return field === undefined ? { kind: 'error', code, message } : { kind: 'error', code, field, message }
}
