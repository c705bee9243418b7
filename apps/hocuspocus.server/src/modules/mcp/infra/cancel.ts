/**
 * Cancellation of a running call: its caller went away (the HTTP stream closed, or notifications/cancelled).
 * The long steps (reading, decoding, writing) check the call's signal at their check points; the tool layer
 * (tools/instrument.ts) logs a stopped call as `cancelled`.
 */

/**
 * Thrown at a check point once the call's signal is aborted (cancelled): the work stops there and
 * instrument() logs the call as `cancelled`. Nothing is answered (the caller is gone).
 */
export class CallCancelled extends Error {
  /** True when the call's write was already applied (it stays): only what followed it was skipped. */
  readonly applied: boolean

  constructor(applied = false) {
    super('the caller cancelled the call')
    this.name = 'CallCancelled'
    this.applied = applied
  }
}

/**
 * A check point of a long call: stops it (CallCancelled) when its caller has gone away. `applied`: the
 * call's write already landed (logged as such).
 */
export function stopIfCancelled(signal: AbortSignal | undefined, applied = false): void {
  if (signal?.aborted) throw new CallCancelled(applied)
}
