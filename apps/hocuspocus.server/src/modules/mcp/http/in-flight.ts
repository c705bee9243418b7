/**
 * The requests being answered over HTTP, so a `notifications/cancelled` can stop one. The endpoint is
 * stateless: the SDK client sends the cancellation in a POST of its own (its first POST stays open),
 * which reaches a fresh server that never saw the request. So each POST's requests are registered here
 * by caller (the token: API token id, or `oauth:<grant>`) and JSON-RPC id while they run, and a cancel
 * from the same caller naming that id aborts the signal of the POST that carries it.
 *
 * A cancel can overtake its request (the two POSTs travel on separate connections): a cancel naming no
 * running request is kept for CANCEL_MEMORY_MS (at most MAX_REMEMBERED_CANCELS, oldest dropped first),
 * and a request from that caller with that id arriving meanwhile starts cancelled.
 *
 * Known limits: two clients sharing one token and using the same id at once cannot be told apart (a
 * cancel from one stops the other's call: only calls of the same credential are ever touched); a cancel
 * that reaches another instance than its request does nothing there; one cancel stops every call of a
 * batch POST (one signal per POST). Entries live as long as their POST: at most the requests in flight.
 */

/**
 * How long a cancel that found no running request waits for it to arrive: overtaking takes milliseconds,
 * and the memory must not outlive them by much (a later request that reuses the id with the same token
 * would start cancelled).
 */
export const CANCEL_MEMORY_MS = 2_000
/** At most this many such cancels are kept (per instance), the oldest dropped first. */
export const MAX_REMEMBERED_CANCELS = 1_000

export class InFlightRequests {
  private readonly requests = new Map<string, AbortController>()
  /** Cancels that named no running request yet: key -> when the memory of it ends. */
  private readonly early = new Map<string, number>()

  constructor(private readonly now: () => number = Date.now) {}

  /** How many request ids are registered now (tests, and a bound the metrics could show). */
  get size(): number {
    return this.requests.size
  }

  /**
   * Applies the body's cancellations (from `caller`), then registers its requests under `controller`
   * (aborting it stops their calls). Returns the release to call once the POST is answered.
   */
  track(caller: string, body: unknown, controller: AbortController): () => void {
    const messages = Array.isArray(body) ? body : [body]
    for (const message of messages) {
      if (!isObject(message) || message.method !== 'notifications/cancelled') continue
      const requestId = isObject(message.params) ? message.params.requestId : undefined
      if (!isId(requestId)) continue
      const key = keyOf(caller, requestId)
      const running = this.requests.get(key)
      if (running) running.abort(new Error('notifications/cancelled'))
      else this.remember(key)
    }
    const keys: string[] = []
    for (const message of messages) {
      if (!isObject(message) || typeof message.method !== 'string' || !isId(message.id)) continue
      const key = keyOf(caller, message.id)
      // An id already running for this caller keeps its entry (a cancel names the first one).
      if (this.requests.has(key)) continue
      const cancelledUntil = this.early.get(key)
      if (cancelledUntil !== undefined) {
        this.early.delete(key)
        if (cancelledUntil > this.now()) controller.abort(new Error('notifications/cancelled'))
      }
      this.requests.set(key, controller)
      keys.push(key)
    }
    return () => {
      for (const key of keys.splice(0)) {
        if (this.requests.get(key) === controller) this.requests.delete(key)
      }
    }
  }

  private remember(key: string): void {
    const now = this.now()
    for (const [old, until] of this.early) {
      if (until > now && this.early.size < MAX_REMEMBERED_CANCELS) break
      this.early.delete(old)
    }
    this.early.delete(key)
    this.early.set(key, now + CANCEL_MEMORY_MS)
  }
}

const keyOf = (caller: string, id: string | number) => `${caller}\u0000${JSON.stringify(id)}`

const isId = (value: unknown): value is string | number =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
