/**
 * Faults: writes that failed for a reason other than the database being away (content the database
 * refuses, a bug). Each is counted, and logged once per document and reason with the error's code and
 * the first line of its message, never the document's text, which a query's parameters or an error's
 * detail can hold. A fault is cleared by the store that succeeds where it failed.
 */
import type { Logger } from '../../logger.ts'
import type { Metrics } from '../../metrics.ts'

/** Longest failure message kept in the log (its first line; the code says the rest). */
const FAULT_REASON_MAX_CHARS = 200

/** What failed: storing the content (the update or a compaction), or only its title and search text. */
export type FaultPart = 'content' | 'derived'

/** A document whose last store failed for a reason other than the database being away. */
export type Fault = {
  part: FaultPart
  /** Error code (SQLSTATE, Prisma code or error name) and the first line of its message, never text. */
  code: string
  reason: string
  /** Retries spent since the last change; `stalled` once they reach STORE_FAULT_MAX_RETRIES. */
  retries: number
  stalled: boolean
}

export class StoreFaults {
  /** Documents whose last write failed for content or a bug (cleared by a whole store). */
  private readonly faults = new Map<string, Fault>()

  constructor(private readonly deps: { logger: Logger; metrics: Metrics }) {}

  get(name: string): Fault | undefined {
    return this.faults.get(name)
  }

  has(name: string): boolean {
    return this.faults.has(name)
  }

  /** A store succeeded: its document's fault goes, or only a fault of `part` when one is named. */
  clear(name: string, part?: FaultPart): void {
    if (part === undefined || this.faults.get(name)?.part === part) this.faults.delete(name)
  }

  /** A new change earns a stalled document new attempts (Hocuspocus stores after the change). */
  changed(name: string): void {
    const fault = this.faults.get(name)
    if (fault?.stalled) {
      fault.stalled = false
      fault.retries = 0
    }
  }

  /** Rooms whose last store failed for content or a bug, with the code and reason (never text). */
  byRoom(): Map<string, { code: string; reason: string; stalled: boolean }> {
    return new Map(
      [...this.faults].map(([room, f]) => [room, { code: f.code, reason: f.reason, stalled: f.stalled }]),
    )
  }

  /** Counts a fault and logs it at error level once per document and reason (until a full store succeeds). */
  report(name: string, documentId: string, error: unknown, what: string, part: FaultPart = 'content'): void {
    this.deps.metrics.storeFaults.inc()
    this.log(name, documentId, error, what, part)
  }

  /** Records the fault's reason and logs it, once per document and reason (see `report`). */
  log(name: string, documentId: string, error: unknown, what: string, part: FaultPart = 'content'): void {
    const { code, reason } = faultReason(error)
    const fault = this.faults.get(name)
    if (fault && fault.code === code && fault.reason === reason && fault.part === part) return
    if (fault) {
      fault.code = code
      fault.reason = reason
      fault.part = part
    } else this.faults.set(name, { part, code, reason, retries: 0, stalled: false })
    this.deps.logger.error({ documentId, code, reason }, `${what} (${code})`)
  }
}

/** An error's code (SQLSTATE, Prisma code or name) and the first line of its message, cut short. */
function faultReason(error: unknown): { code: string; reason: string } {
  const e = (error ?? {}) as {
    name?: unknown
    code?: unknown
    message?: unknown
    meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; originalMessage?: unknown } } }
  }
  const cause = e.meta?.driverAdapterError?.cause
  const code = [cause?.originalCode, e.code, e.name].find((c) => typeof c === 'string' && c !== '')
  const message = [cause?.originalMessage, e.message].find((m) => typeof m === 'string' && m.trim() !== '')
  const firstLine = typeof message === 'string' ? (message.trim().split('\n')[0] ?? '') : String(error)
  return {
    code: (code as string | undefined) ?? 'unknown',
    reason: firstLine.slice(0, FAULT_REASON_MAX_CHARS),
  }
}
