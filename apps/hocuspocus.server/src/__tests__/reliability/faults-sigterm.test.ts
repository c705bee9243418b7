/**
 * SIGTERM while 50 editors type: 50 real providers on a few documents type continuously into the real
 * server process; it gets SIGTERM mid-typing and must exit 0. Then the stored state (read from the
 * database after exit) must hold every update the server acknowledged to its editor: per editor, the
 * stored state vector's clock for that editor's client id is at least the clock of its last acknowledged
 * update.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { callText, connectRecording } from '@collab/test-support/mcp'
import type { ServerProcess } from '@collab/test-support/process'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import {
  type AckTracker,
  firstRunToken,
  linePerEditor,
  readStored,
  spawnOn,
  stopProcess,
  trackAcknowledgements,
  typeContinuously,
} from './faults-support.ts'
import { FULL, reportFigure } from './support.ts'

const EDITORS = 50
const DOCUMENTS = 5
/** Each editor types one character this often (ms), before and during the shutdown. */
const KEYSTROKE_MS = FULL ? 50 : 100
/** Typing before the signal. */
const TYPING_BEFORE_SIGNAL_MS = FULL ? 5_000 : 1_500

describe(`SIGTERM while ${EDITORS} editors type (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: ServerProcess | undefined
  const editors: TestProvider[] = []
  beforeAll(async () => {
    db = await createTestDatabase()
  }, 60_000)
  afterAll(async () => {
    for (const editor of editors) editor.destroy()
    await stopProcess(server)
    await db?.cleanup()
  }, 60_000)

  test('exits 0 and every acknowledged update is stored', async () => {
    server = await spawnOn(db, { STORE_DEBOUNCE_MS: '500', STORE_MAX_DEBOUNCE_MS: '2000' })
    const token = firstRunToken(db.dataDir)
    const mcp = await connectRecording(`${server.url}/mcp`, token)
    for (let d = 0; d < DOCUMENTS; d++) {
      const created = await callText(mcp.client, 'create_document', { title: `Typing room ${d}` })
      expect(created.isError).toBe(false)
    }
    await mcp.close()
    const listed = (await (
      await fetch(`${server.url}/api/documents`, { headers: { Authorization: `Bearer ${token}` } })
    ).json()) as { documents: Array<{ room: string; title: string }> }
    const rooms = listed.documents.filter((d) => d.title.startsWith('Typing room')).map((d) => d.room)
    expect(rooms.length).toBe(DOCUMENTS)

    for (let i = 0; i < EDITORS; i++) editors.push(connectProvider(server.url, rooms[i % DOCUMENTS]!, token))
    await Promise.all(editors.map((e) => e.ready))
    // Each editor types into a paragraph of its own; the baseline is once every paragraph is acknowledged.
    const lines = await linePerEditor(editors)
    const trackers: AckTracker[] = editors.map((e) => trackAcknowledgements(e))
    const typing = typeContinuously(editors, lines, KEYSTROKE_MS, (n) => String.fromCharCode(97 + (n % 26)))
    await Bun.sleep(TYPING_BEFORE_SIGNAL_MS)
    const running = server
    running.proc.kill('SIGTERM')
    const exitCode = await running.proc.exited // editors keep typing until the process is gone
    await typing.stop()
    server = undefined
    for (const t of trackers) t.stop()

    expect(exitCode).toBe(0)
    const stored = await readStored(db, rooms)
    const lost: string[] = []
    editors.forEach((_e, i) => {
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
