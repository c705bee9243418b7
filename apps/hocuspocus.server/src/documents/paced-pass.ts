/**
 * The loop the start-up backfills share (search-backfill.ts, outline-backfill.ts): rows to work on are
 * asked for in batches in id order (keyset: a row that could not be handled is not asked for again), each
 * is handled with a pause after it so the server answers its editors and agents in between, and `stop()`
 * ends the pass at the next row and waits for it. A failure outside a row's own handling (the batch query)
 * ends the pass with a warning; the next start runs it again.
 */
import type { Logger } from '../logger.ts'

export type PacedPass = {
  /** Resolves with the number of rows handled once none is left (or the pass was stopped or failed). */
  done: Promise<number>
  stop(): Promise<void>
}

/** Below every uuid: where a keyset walk starts. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000'

export function startPacedPass<Row extends { id: string }>(pass: {
  /** As logs name it, e.g. 'search backfill'. */
  name: string
  logger: Logger
  /** Started once this settles. */
  after?: Promise<unknown>
  /** At most `batch` rows to work on with ids above `afterId`, in id order. */
  next(afterId: string, batch: number): Promise<Row[]>
  batch: number
  /** Pause after each row (ms). */
  pauseMs: number
  /** Handles one row: true when it was done, false when it was skipped (it logs why). */
  handle(row: Row): Promise<boolean>
  /** Called once at the end of a pass that was not ended by a failure. */
  report(counts: { done: number; skipped: number }): void
}): PacedPass {
  let stopped = false
  const run = async (): Promise<number> => {
    await pass.after
    const counts = { done: 0, skipped: 0 }
    let afterId = FIRST_ID
    while (!stopped) {
      const rows = await pass.next(afterId, pass.batch)
      for (const row of rows) {
        if (stopped) break
        afterId = row.id
        if (await pass.handle(row)) counts.done++
        else counts.skipped++
        await Bun.sleep(pass.pauseMs)
      }
      if (rows.length < pass.batch) break
    }
    pass.report(counts)
    return counts.done
  }
  const done = run().catch((error: Error) => {
    pass.logger.warn(
      { err: error.message },
      `${pass.name} stopped by a failure; it runs again at the next start`,
    )
    return 0
  })
  return {
    done,
    async stop() {
      stopped = true
      await done
    },
  }
}
