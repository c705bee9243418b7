/**
 * SIGTERM while 50 editors type: 50 real providers on a few documents type continuously into the real
 * server process; it gets SIGTERM mid-typing and must exit 0. Then the stored state (read from the
 * database after exit) must hold every update the server acknowledged to its editor: per editor, the
 * stored state vector's clock for that editor's client id is at least the clock of its last acknowledged
 * update.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { readStored, spawnOn, typeTracked, useProcessRun } from './faults-support.ts'
import { FULL, reportFigure } from './support.ts'

const EDITORS = 50
const DOCUMENTS = 5
/** Each editor types one character this often (ms), before and during the shutdown. */
const KEYSTROKE_MS = FULL ? 50 : 100
/** Typing before the signal. */
const TYPING_BEFORE_SIGNAL_MS = FULL ? 5_000 : 1_500

describe(`SIGTERM while ${EDITORS} editors type (${DATABASE_KIND})`, () => {
  const run = useProcessRun()

  test('exits 0 and every acknowledged update is stored', async () => {
    run.server = await spawnOn(run.db, { STORE_DEBOUNCE_MS: '500', STORE_MAX_DEBOUNCE_MS: '2000' })
    // Each editor types into a paragraph of its own; the baseline is once every paragraph is acknowledged.
    const titles = Array.from({ length: DOCUMENTS }, (_, d) => `Typing room ${d}`)
    const typing = await typeTracked(run, titles, EDITORS, KEYSTROKE_MS, (n) =>
      String.fromCharCode(97 + (n % 26)),
    )
    const { rooms, trackers } = typing
    expect(rooms.length).toBe(DOCUMENTS)
    await Bun.sleep(TYPING_BEFORE_SIGNAL_MS)
    const running = run.server
    running.proc.kill('SIGTERM')
    const exitCode = await running.proc.exited // editors keep typing until the process is gone
    await typing.stop()
    run.server = undefined

    expect(exitCode).toBe(0)
    const stored = await readStored(run.db, rooms)
    const lost: string[] = []
    run.editors.forEach((_e, i) => {
      const room = rooms[i % DOCUMENTS]!
      const tracker = trackers[i]!
      const storedClock = stored.get(room)?.vector.get(tracker.clientId) ?? 0
      if (storedClock < tracker.acknowledgedClock())
        lost.push(
          `editor ${i}: acknowledged up to clock ${tracker.acknowledgedClock()}, stored ${storedClock}`,
        )
    })
    const sent = trackers.reduce((n, t) => n + t.sent, 0)
    const acknowledged = trackers.reduce((n, t) => n + t.acknowledged, 0)
    reportFigure('faults-sigterm', {
      editors: EDITORS,
      documents: DOCUMENTS,
      sent,
      acknowledged,
      lost: lost.length,
    })
    // The test means something only if editors were acknowledged updates typed into the running server.
    expect(trackers.every((t) => t.acknowledged > 0)).toBe(true)
    expect(lost).toEqual([])
  }, 90_000)
})
