/**
 * The title and search text of a loaded document, refreshed from the live document at most every
 * `searchRefreshMs` while it changes: the first store after a quiet period refreshes them at once, and a
 * timer catches the last change, so search lags the content by at most that long (longer for a very
 * large document: see SEARCH_REFRESH_DUTY). Compaction writes them too when they are behind.
 */
import { FRAGMENT_NAME, livePlainText, type PlainTextMemo } from '@collab/doc-schema'
import type { Document } from '@hocuspocus/server'
import { isDatabaseUnavailable } from '../../db/errors.ts'
import type { DocumentsService } from '../../documents/service.ts'
import { MAX_FIND_TEXT_CHARS } from '../../limits.ts'
import type { Metrics } from '../../metrics.ts'
import { runInSlices } from '../../turns.ts'
import { SEARCH_REFRESH_DB_DUTY, SEARCH_REFRESH_DUTY } from '../store-policy.ts'
import type { StoreFaults } from './faults.ts'
import type { LoadedDocuments, Stored } from './loaded.ts'

/**
 * The live document's search text (its first MAX_FIND_TEXT_CHARS characters) through its plain-text memo,
 * which reads again only the blocks changed since the last refresh (a large document's whole walk, every
 * refresh, was CPU in proportion to its size); what it reads, in slices of the event loop's turns
 * (turns.ts). `walkMs`: the time spent reading, not waiting (what the refresh's duty counts). A change
 * typed meanwhile is stored, which marks the derived text stale again, so a later refresh reads it.
 */
async function walkInSlices(memo: PlainTextMemo): Promise<{ text: string; walkMs: number }> {
  const walked = (await runInSlices(memo.walk(MAX_FIND_TEXT_CHARS)))!
  return { text: walked.value, walkMs: walked.busyMs }
}

export class TitleSearchRefresh {
  constructor(
    private readonly loaded: LoadedDocuments,
    private readonly faults: StoreFaults,
    private readonly documents: Pick<DocumentsService, 'refreshDerived'>,
    /** 0 refreshes the title and search text at every store. */
    private readonly searchRefreshMs: number,
    private readonly metrics: Pick<Metrics, 'searchRefreshLatency'>,
  ) {}

  /**
   * Due once `searchRefreshMs` has passed since the last refresh, SEARCH_REFRESH_DUTY times as long as
   * the last one's walk of the document took, and SEARCH_REFRESH_DB_DUTY times as long as its database
   * write took: refreshing a large document (a million characters to index) then takes a bounded share of
   * this thread and of the database while it is typed into.
   */
  private wait(entry: Stored): number {
    if (this.searchRefreshMs === 0) return 0
    const interval = Math.max(
      this.searchRefreshMs,
      entry.derivedCostMs.walk * SEARCH_REFRESH_DUTY,
      entry.derivedCostMs.database * SEARCH_REFRESH_DB_DUTY,
    )
    return Math.max(0, entry.derivedAt + interval - Date.now())
  }

  due(entry: Stored): boolean {
    return this.wait(entry) === 0
  }

  /**
   * After a store. With no interval (tests), at once: search finds what a write wrote when it is answered.
   * Otherwise by the timer, also when already due, so the write is answered without waiting for it.
   */
  async afterStore(document: Document, entry: Stored): Promise<void> {
    if (this.searchRefreshMs === 0) await this.refresh(document, entry)
    else this.schedule(document, entry)
  }

  /**
   * Writes the title and search text of the live document. A failure is a fault of the derived data
   * only (reported once; the content is stored): they stay as they were until a later refresh succeeds.
   */
  async refresh(document: Document, entry: Stored): Promise<void> {
    this.cancel(entry)
    entry.derivedAt = Date.now()
    entry.derivedStale = false
    const memo = livePlainText(document.getXmlFragment(FRAGMENT_NAME))
    const started = performance.now()
    const title = memo.title()
    const titleMs = performance.now() - started
    const { text, walkMs } = await walkInSlices(memo)
    const walked = performance.now()
    try {
      await this.documents.refreshDerived(entry.documentId, { title, text, changedAt: entry.changedAt })
      entry.derivedCostMs = { walk: titleMs + walkMs, database: performance.now() - walked }
      this.metrics.searchRefreshLatency.observe({}, (performance.now() - started) / 1000)
      this.faults.clear(document.name, 'derived')
    } catch (error) {
      entry.derivedStale = true
      if (isDatabaseUnavailable(error)) return // refreshed by the next store once it is back
      this.faults.report(
        document.name,
        entry.documentId,
        error,
        'title and search text not stored',
        'derived',
      )
    }
  }

  /** A refresh when the interval since the last one has passed (a store with nothing queued does it). */
  private schedule(document: Document, entry: Stored): void {
    if (entry.derivedTimer || this.loaded.closing) return
    const wait = this.wait(entry)
    entry.derivedTimer = setTimeout(() => {
      entry.derivedTimer = null
      if (!this.loaded.isOpen(document.name) || this.loaded.get(document.name) !== entry) return
      void document.saveMutex
        .runExclusive(async () => {
          if (entry.derivedStale) await this.refresh(document, entry)
        })
        .catch(() => {})
        .finally(() => this.loaded.unloadIfIdle(document))
    }, wait)
  }

  /** No timed refresh of this document (it unloads, or shutdown writes what is behind itself). */
  cancel(entry: Stored): void {
    if (entry.derivedTimer) clearTimeout(entry.derivedTimer)
    entry.derivedTimer = null
  }
}
