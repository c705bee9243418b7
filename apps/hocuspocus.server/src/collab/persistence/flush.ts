/**
 * The shutdown path: stores every loaded document with unstored changes and waits, within a deadline.
 * Documents with a fault are tried after the others, once: one that fails again for a reason other than
 * the database being away is listed unstored at once (and logged), so it never spends the deadline of the
 * others. Titles and search text still behind the content are written last, within the same deadline.
 */
import { isDatabaseUnavailable } from '../../db/errors.ts'
import type { Logger } from '../../logger.ts'
import type { StoreFaults } from './faults.ts'
import { type LoadedDocuments, unstored } from './loaded.ts'
import type { LogAppend } from './log-append.ts'
import { STORE_RETRY_BASE_MS, STORE_RETRY_MAX_MS, type StoreRetries } from './retry.ts'
import type { TitleSearchRefresh } from './title-search.ts'

/** Returns the rooms still unstored (empty on success). */
export async function flushLoaded(
  loaded: LoadedDocuments,
  parts: {
    faults: StoreFaults
    retries: StoreRetries
    titleSearch: TitleSearchRefresh
    append: LogAppend
    logger: Logger
  },
  deadlineMs: number,
): Promise<string[]> {
  const { faults, retries, titleSearch, append, logger } = parts
  const instance = loaded.instance
  if (!instance) return []
  loaded.closing = true
  retries.stopTimers()
  for (const entry of loaded.entries.values()) titleSearch.cancel(entry)
  const end = Date.now() + deadlineMs
  const givenUp = new Set<string>()
  /** Why each store tried here failed last (logged with a document left unstored). */
  const lastErrors = new Map<string, unknown>()
  const unstoredNames = () =>
    [...loaded.entries]
      .filter(([name, entry]) => instance.documents.has(name) && unstored(entry))
      .map(([name]) => name)
  let delay = STORE_RETRY_BASE_MS
  /** Stores until nothing is left but what was given up (true), or the deadline comes (false). */
  const storeRound = async (): Promise<boolean> => {
    for (;;) {
      const pending = unstoredNames().filter((name) => !givenUp.has(name))
      if (pending.length === 0) return true
      const store = async (name: string) => {
        const document = instance.documents.get(name)
        if (!document) return
        await document.saveMutex
          .runExclusive(() => append.write(document))
          .then(
            () => lastErrors.delete(name),
            (error: unknown) => {
              lastErrors.set(name, error)
              if (!isDatabaseUnavailable(error)) givenUp.add(name)
            },
          )
      }
      await Promise.all(pending.filter((name) => !faults.has(name)).map(store))
      await Promise.all(pending.filter((name) => faults.has(name)).map(store))
      if (unstoredNames().every((name) => givenUp.has(name))) return true
      if (Date.now() + delay > end) return false
      await Bun.sleep(delay)
      delay = Math.min(delay * 2, STORE_RETRY_MAX_MS)
    }
  }
  // Stores, then titles and search text still behind the content, once each, within the same deadline;
  // stores again if a change arrived meanwhile (none should: the stop closes what could bring one first).
  for (;;) {
    const settled = await storeRound()
    for (const [name, entry] of loaded.entries) {
      const document = instance.documents.get(name)
      if (!document || !entry.derivedStale || unstored(entry) || Date.now() >= end) continue
      await document.saveMutex.runExclusive(() => titleSearch.refresh(document, entry)).catch(() => {})
    }
    if (!settled || Date.now() >= end || unstoredNames().every((name) => givenUp.has(name))) break
  }
  const stillUnstored = unstoredNames()
  for (const name of stillUnstored) {
    const fault = faults.get(name)
    const error = lastErrors.get(name)
    logger.error(
      {
        documentId: loaded.get(name)?.documentId,
        code: fault?.code,
        reason: fault?.reason,
        // What still held it: updates queued, or a write that never ended (no error above: the store ran).
        pendingUpdates: loaded.get(name)?.pending.length,
        writing: loaded.get(name)?.writing,
        msPastDeadline: Date.now() - end,
        ...(error === undefined ? {} : { error: error instanceof Error ? error.message : String(error) }),
      },
      'shutdown: document not stored; its changes since the last store are lost',
    )
  }
  return stillUnstored
}
