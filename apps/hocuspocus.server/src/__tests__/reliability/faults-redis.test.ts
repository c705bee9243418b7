/**
 * Redis stopped while two instances share documents. A private redis-server (its own port, no
 * persistence) links two real server processes on one PostgreSQL database; each of two documents has an
 * editor on each instance. Redis is killed while they type (in the second document only the editor on
 * instance A): each instance keeps serving its own editors (their updates are acknowledged). Typing stops,
 * Redis is started again on the same port, and with no further edit the editors of each document must
 * converge: identical text holding every word typed, also in the database after both instances stop.
 * Needs TEST_DATABASE_URL (two instances need a shared database) and redis-server.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '@collab/test-support/database'
import { callText, connectRecording } from '@collab/test-support/mcp'
import type { ServerProcess } from '@collab/test-support/process'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import {
  addParagraph,
  firstRunToken,
  HAS_REDIS_SERVER,
  type PrivateRedis,
  plainText,
  readStored,
  spawnOn,
  startPrivateRedis,
  stopProcess,
} from './faults-support.ts'
import { FULL, reportFigure } from './support.ts'

const OUTAGE_MS = FULL ? 15_000 : 3_000

describe.skipIf(!TEST_DATABASE_URL || !HAS_REDIS_SERVER)(
  'Redis stopped while two instances share documents (needs TEST_DATABASE_URL and redis-server)',
  () => {
    let db: TestDatabase
    let redis: PrivateRedis | undefined
    let a: ServerProcess | undefined
    let b: ServerProcess | undefined
    const editors: TestProvider[] = []
    beforeAll(async () => {
      db = await createTestDatabase()
      redis = await startPrivateRedis()
    }, 60_000)
    afterAll(async () => {
      for (const editor of editors) editor.destroy()
      await redis?.start().catch(() => {}) // a failed test may leave it stopped
      await Promise.all([stopProcess(a), stopProcess(b)])
      await redis?.kill()
      await db?.cleanup()
    }, 60_000)

    test('each instance keeps serving its editors, and the documents converge once Redis is back', async () => {
      const r = redis!
      const env = { REDIS_URL: r.url, STORE_DEBOUNCE_MS: '200', STORE_MAX_DEBOUNCE_MS: '1000' }
      const instanceA = await spawnOn(db, env)
      a = instanceA
      const instanceB = await spawnOn(db, { ...env, MIGRATE_ON_START: 'false' })
      b = instanceB
      const token = firstRunToken(db.dataDir)
      const mcp = await connectRecording(`${instanceA.url}/mcp`, token)
      const slugs: string[] = []
      for (const title of ['Both sides edit', 'One side edits']) {
        const created = await callText(mcp.client, 'create_document', { title, markdown: '## Log' })
        expect(created.isError).toBe(false)
        slugs.push(/slug: (\S+)/.exec(created.text)?.[1] ?? '')
      }
      await mcp.close()
      const listed = (await (
        await fetch(`${instanceA.url}/api/documents`, { headers: { Authorization: `Bearer ${token}` } })
      ).json()) as { documents: Array<{ room: string; slug: string }> }
      const rooms = slugs.map((slug) => listed.documents.find((d) => d.slug === slug)?.room ?? '')
      expect(rooms.every(Boolean)).toBe(true)

      // Per document, an editor on A and one on B. In the first both type during the outage; in the
      // second only the editor on A does (so B has nothing of its own to announce when Redis returns).
      const pairs = rooms.map((room) => ({
        room,
        onA: connectProvider(instanceA.url, room, token),
        onB: connectProvider(instanceB.url, room, token),
      }))
      for (const pair of pairs) editors.push(pair.onA, pair.onB)
      await Promise.all(editors.map((e) => e.ready))
      for (const [i, { onA, onB }] of pairs.entries()) {
        addParagraph(onA.doc, `a${i}-before`)
        addParagraph(onB.doc, `b${i}-before`)
      }
      await eventually(
        () => {
          for (const [i, { onA, onB }] of pairs.entries()) {
            expect(plainText(onA.doc)).toContain(`b${i}-before`)
            expect(plainText(onB.doc)).toContain(`a${i}-before`)
          }
        },
        10_000,
        'the instances to share edits through Redis',
      )

      await r.kill()
      const typists = [
        { editor: pairs[0]!.onA, who: 'a0' },
        { editor: pairs[0]!.onB, who: 'b0' },
        { editor: pairs[1]!.onA, who: 'a1' },
      ]
      const words: string[] = []
      const end = Date.now() + OUTAGE_MS
      for (let n = 0; Date.now() < end; n++) {
        for (const { editor, who } of typists) {
          const word = `${who}-outage-${n}`
          words.push(word)
          addParagraph(editor.doc, word)
        }
        await Bun.sleep(100)
      }
      // Each instance still serves its own editors: every update is acknowledged while Redis is away.
      await eventually(
        () => expect(editors.reduce((n, e) => n + e.provider.unsyncedChanges, 0)).toBe(0),
        10_000,
        'each instance to acknowledge its editors during the outage',
      )
      const apartDuringOutage = pairs.every(({ onA, onB }) => plainText(onA.doc) !== plainText(onB.doc))
      expect(instanceA.proc.exitCode).toBe(null)
      expect(instanceB.proc.exitCode).toBe(null)

      // Redis back on the same port; nobody types: the instances must resync by themselves.
      const restarted = Date.now()
      await r.start()
      await eventually(
        () => {
          for (const [i, { onA, onB }] of pairs.entries()) {
            const textA = plainText(onA.doc)
            expect(textA).toBe(plainText(onB.doc))
            for (const word of words.filter((w) => w.slice(1).startsWith(`${i}-`)))
              expect(textA).toContain(word)
          }
        },
        20_000,
        'the editors of each document to converge after Redis returned',
      )
      const convergedMs = Date.now() - restarted
      // And Redis carries new edits again.
      for (const [i, { onA, onB }] of pairs.entries()) {
        addParagraph(onA.doc, `a${i}-after`)
        addParagraph(onB.doc, `b${i}-after`)
        words.push(`a${i}-after`, `b${i}-after`)
      }
      await eventually(
        () => {
          for (const [i, { onA, onB }] of pairs.entries()) {
            expect(plainText(onA.doc)).toContain(`b${i}-after`)
            expect(plainText(onB.doc)).toContain(`a${i}-after`)
          }
        },
        10_000,
        'edits to flow again',
      )
      await eventually(
        () => expect(editors.reduce((n, e) => n + e.provider.unsyncedChanges, 0)).toBe(0),
        10_000,
        'acknowledged',
      )
      for (const editor of editors) editor.destroy()
      editors.length = 0
      expect(await stopProcess(instanceA)).toBe(0)
      expect(await stopProcess(instanceB)).toBe(0)
      a = undefined
      b = undefined
      const stored = await readStored(db, rooms)
      const missing = words.filter((w) => !stored.get(rooms[Number(w[1])]!)?.text.includes(w))
      reportFigure('faults-redis', {
        outageSeconds: OUTAGE_MS / 1000,
        edits: words.length,
        apartDuringOutage,
        convergedMs,
        lost: missing.length,
      })
      expect(missing).toEqual([])
    }, 120_000)
  },
)
