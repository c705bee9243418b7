/**
 * Retries of a failed store. The database being away: retried with backoff until it is back (the
 * updates stay queued in memory, and Hocuspocus keeps the document). A fault (faults.ts): retried
 * STORE_FAULT_MAX_RETRIES times with the same backoff, then not until the document changes again, so no
 * store is retried forever.
 */
import type { Document } from '@hocuspocus/server'
import type { Logger } from '../../logger.ts'
import type { StoreFaults } from './faults.ts'
import type { LoadedDocuments } from './loaded.ts'

/** First retry after a failed store; doubles per failure up to the cap. */
export const STORE_RETRY_BASE_MS = 500
export const STORE_RETRY_MAX_MS = 15_000
/**
 * Retries (with the same backoff) of a store that failed for a reason other than the database being away,
 * even as the state alone; then none until the document changes again, so no store is retried forever.
 */
export const STORE_FAULT_MAX_RETRIES = 3

export class StoreRetries {
  private readonly retries = new Map<
    string,
    { attempt: number; timer: ReturnType<typeof setTimeout> | null }
  >()

  constructor(
    private readonly loaded: LoadedDocuments,
    private readonly faults: StoreFaults,
    private readonly logger: Logger,
  ) {}

  /** A retry of the document's store is set to run. */
  isScheduled(name: string): boolean {
    return Boolean(this.retries.get(name)?.timer)
  }

  /** The store through Hocuspocus's own hooks again, after the backoff (the database being away). */
  schedule(document: Document): void {
    const name = document.name
    const entry = this.retries.get(name) ?? { attempt: 0, timer: null }
    if (entry.timer) clearTimeout(entry.timer)
    const delay = Math.min(STORE_RETRY_BASE_MS * 2 ** entry.attempt, STORE_RETRY_MAX_MS)
    entry.attempt++
    entry.timer = setTimeout(() => {
      entry.timer = null
      const instance = this.loaded.instance
      if (!instance?.documents.has(name)) return
      void instance.storeDocumentHooks(
        document,
        {
          instance,
          document,
          documentName: name,
          clientsCount: 0,
          lastContext: {},
          lastTransactionOrigin: undefined,
        },
        true,
      )
    }, delay)
    this.retries.set(name, entry)
  }

  /** After a fault: a few retries with backoff, then none until the document changes (`onChange`). */
  scheduleAfterFault(document: Document): void {
    const name = document.name
    const fault = this.faults.get(name)
    if (!fault || fault.retries < STORE_FAULT_MAX_RETRIES) {
      if (fault) fault.retries++
      this.schedule(document)
      return
    }
    if (fault.stalled) return
    fault.stalled = true
    this.clear(name)
    this.logger.error(
      { documentId: this.loaded.get(name)?.documentId, code: fault.code, reason: fault.reason },
      'document store: no more retries until the document changes; its changes stay in memory',
    )
  }

  /** The store succeeded, or the document unloaded: no retry, and the backoff starts over. */
  clear(name: string): void {
    const entry = this.retries.get(name)
    if (entry?.timer) clearTimeout(entry.timer)
    this.retries.delete(name)
  }

  /** Shutdown: no retry runs by its timer any more (flush stores what is pending itself). */
  stopTimers(): void {
    for (const entry of this.retries.values()) if (entry.timer) clearTimeout(entry.timer)
  }
}
