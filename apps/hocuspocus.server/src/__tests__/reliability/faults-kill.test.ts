/**
 * kill -9 the moment an MCP write is acknowledged: the real server process answers a write over real
 * HTTP, is SIGKILLed as soon as the answer arrives (no shutdown, no flush), and is started again on the
 * same data. Every write it answered as done must be there: acknowledged means stored.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { callText, connectRecording } from '@collab/test-support/mcp'
import type { ServerProcess } from '@collab/test-support/process'
import { firstRunToken, readStored, spawnOn, stopProcess } from './faults-support.ts'
import { FULL, reportFigure } from './support.ts'

/**
 * Write-and-kill cycles, alternating create_document and append_to_document; each answer is a SIGKILL.
 * Quick runs kill twice, once after each tool, each followed by a start on the killed data (every cycle
 * is a server process opening the database, ~4 s of CPU); `bun run reliability` kills 10 times.
 */
const KILLS = FULL ? 10 : 2

describe(`kill -9 after an acknowledged MCP write (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: ServerProcess | undefined
  beforeAll(async () => {
    db = await createTestDatabase()
  }, 60_000)
  afterAll(async () => {
    await stopProcess(server)
    await db?.cleanup()
  }, 60_000)

  test(`every acknowledged write survives SIGKILL, ${KILLS} kills`, async () => {
    const acknowledged: Array<{ slug: string; marker: string; tool: string }> = []
    const slugs: string[] = []
    let kills = 0
    for (let cycle = 0; cycle < KILLS; cycle++) {
      // Started on the data the previous kill left behind; one write; kill -9 the instant its answer is in.
      const running = await spawnOn(db)
      server = running
      const mcp = await connectRecording(`${running.url}/mcp`, firstRunToken(db.dataDir))
      const marker = `cycle-${cycle}-marker`
      const previous = slugs.at(-1)
      const tool = cycle % 2 === 0 || !previous ? 'create_document' : 'append_to_document'
      const answer =
        tool === 'create_document'
          ? await callText(mcp.client, tool, {
              title: `Kill cycle ${cycle}`,
              markdown: `## Start\n\n${marker}`,
            })
          : await callText(mcp.client, tool, { slug: previous, markdown: marker })
      running.proc.kill('SIGKILL')
      await running.proc.exited
      server = undefined
      kills++
      expect(running.proc.signalCode).toBe('SIGKILL') // it died by the signal, not by a shutdown of its own
      await mcp.close().catch(() => {})
      expect(answer.text).not.toContain('not confirmed') // an unconfirmed write counts as a failure here
      expect(answer.isError).toBe(false)
      const slug = tool === 'create_document' ? /slug: (\S+)/.exec(answer.text)?.[1] : previous
      if (!slug) throw new Error(`${tool} answered without a slug: ${answer.text}`)
      if (tool === 'create_document') slugs.push(slug)
      acknowledged.push({ slug, marker, tool })
    }

    // Through the server (started once more on the same data) and in the database itself.
    server = await spawnOn(db)
    const mcp = await connectRecording(`${server.url}/mcp`, firstRunToken(db.dataDir))
    const lostViaServer: string[] = []
    for (const write of acknowledged) {
      const read = await callText(mcp.client, 'read_document', { slug: write.slug })
      if (read.isError || !read.text.includes(write.marker))
        lostViaServer.push(`${write.tool} ${write.marker}`)
    }
    const listed = (await (
      await fetch(`${server.url}/api/documents`, {
        headers: { Authorization: `Bearer ${firstRunToken(db.dataDir)}` },
      })
    ).json()) as { documents: Array<{ room: string; slug: string }> }
    await mcp.close()
    expect(await stopProcess(server)).toBe(0)
    server = undefined
    const rooms = new Map(listed.documents.map((d) => [d.slug, d.room]))
    const stored = await readStored(db, [...rooms.values()])
    const lostInDatabase = acknowledged
      .filter((w) => !stored.get(rooms.get(w.slug) ?? '')?.text.includes(w.marker))
      .map((w) => `${w.tool} ${w.marker}`)

    reportFigure('faults-kill', { kills, acknowledged: acknowledged.length, lost: lostInDatabase.length })
    expect(lostViaServer).toEqual([])
    expect(lostInDatabase).toEqual([])
    expect(slugs.every((s) => rooms.has(s))).toBe(true)
  }, 120_000)
})
