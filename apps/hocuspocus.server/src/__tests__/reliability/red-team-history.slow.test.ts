/**
 * A restore's or revert's work on a large document (issue 27), on the real server process over real HTTP:
 * what other clients feel while one user reverts an agent's change in a document whose state is near
 * MAX_HISTORY_STATE_BYTES (its size follows the limit; docs/history.md "Bounds"). The "before" version is
 * merged, described and encoded on the documents' worker and written in slices, the edit is worked out
 * there, and the document (not loaded when the revert starts) is read in slices and loaded in parts split
 * there; the event loop applies the edit (a large one in parts).
 * Asserted: the revert answers 200 and takes the agent's text out, /health answers 200 throughout; what
 * others felt is reported as figures (`bun run reliability`), next to a floor measured the same way in the
 * same run with nothing running, never asserted.
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { connectClient } from '@collab/test-support/mcp'
import type { ServerProcess } from '@collab/test-support/process'
import { eventually } from '@collab/test-support/server'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { RECENT_STATE_MS } from '../../documents/recent-states.ts'
import { MAX_HISTORY_STATE_BYTES } from '../../limits.ts'
import { firstRunToken, spawnOn, stopProcess } from './faults-support.ts'
import { MEASURED_SERVER_ENV, prose, startProbe, startTyping } from './red-team-support.ts'
import { reportFigure } from './support.ts'

let db: TestDatabase
let server: ServerProcess
let token: string
/** Another document, typed into while the revert runs (what a person elsewhere feels). */
let typingRoom = ''

async function api(path: string, init: RequestInit = {}) {
  const response = await fetch(`${server.url}/api${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, ...init.headers },
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

/**
 * CPU time (ms) the server's main thread (its event loop: the task whose id is the process's) and the whole
 * process have used, from /proc (Linux; 0 elsewhere): steadier than latencies on a loaded machine.
 */
function cpuMs(pid: number): { loop: number; all: number } {
  const ticks = (path: string) => {
    try {
      const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? []
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
    } catch {
      return 0
    }
  }
  return { loop: ticks(`/proc/${pid}/task/${pid}/stat`), all: ticks(`/proc/${pid}/stat`) }
}

/** While `work` runs, what another client sees (red-team-support.ts's probe, a process of its own). */
async function observed<T>(work: () => Promise<T>) {
  const typing = await startTyping(server.url, typingRoom, token)
  const probe = await startProbe(server.url, server.proc.pid)
  const started = performance.now()
  const cpuBefore = cpuMs(server.proc.pid)
  const result = await work()
  const cpuAfter = cpuMs(server.proc.pid)
  const ms = Math.round(performance.now() - started)
  const seen = await probe.stop()
  const typed = await typing.stop()
  const loopCpuMs = Math.round(cpuAfter.loop - cpuBefore.loop)
  return {
    result,
    ms,
    seen,
    keystrokeP99Ms: typed.p99Ms,
    loopCpuMs,
    cpuMs: Math.round(cpuAfter.all - cpuBefore.all),
  }
}

describe(`red team: reverting in a document near MAX_HISTORY_STATE_BYTES (${DATABASE_KIND})`, () => {
  beforeAll(async () => {
    db = await createTestDatabase()
    server = await spawnOn(db, {
      ...MEASURED_SERVER_ENV,
      VERSION_MIN_INTERVAL_MS: '0',
      VERSION_PAUSE_MS: '200',
    })
    token = firstRunToken(db.dataDir)
    const warm = await fetch(`${server.url}/api/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'content-type': 'text/markdown' },
      body: '# Warm up\n\nhello',
    })
    expect(warm.status).toBe(201)
    typingRoom = ((await warm.json()) as { room: string }).room
  }, 60_000)
  afterAll(async () => {
    await stopProcess(server)
    await db?.cleanup()
  }, 60_000)

  test("an agent's paragraph reverted while others type: their keystrokes wait for the apply, not the work", async () => {
    // A document whose state is just under the limit: ~7 MB of prose, imported.
    const imported = await fetch(`${server.url}/api/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'content-type': 'text/markdown' },
      body: prose(Math.floor((MAX_HISTORY_STATE_BYTES / 1.1) * 0.97)),
    })
    expect(imported.status).toBe(201)
    const { slug } = (await imported.json()) as { slug: string }
    // The agent writes; its version follows.
    const agent = await connectClient(`${server.url}/mcp`, token)
    try {
      // Set-up, not measured: on a loaded machine a write that loads 8 MiB takes longer than the SDK's
      // default 60 s request timeout.
      const written = (await agent.callTool(
        { name: 'append_to_document', arguments: { slug, markdown: 'The agent was here.' } },
        undefined,
        { timeout: 300_000 },
      )) as CallToolResult
      expect(written.isError, JSON.stringify(written.content)).toBeFalsy()
    } finally {
      await agent.close()
    }
    const version = await eventually(async () => {
      const listed = await api(`/documents/${slug}/versions`)
      const newest = listed.body.versions[0]
      expect(newest.reason).toBe('agent')
      return newest as { id: string; byteSize: number }
    }, 120_000)
    expect(version.byteSize).toBeGreaterThan(MAX_HISTORY_STATE_BYTES * 0.8)
    expect(version.byteSize).toBeLessThanOrEqual(MAX_HISTORY_STATE_BYTES)
    // The states the agent's version wrote are kept a while (documents/recent-states.ts): a revert right
    // after would not read them. Waited out, so the revert reads what one minutes later reads.
    await Bun.sleep(RECENT_STATE_MS)
    // The floor: the same probe and typing, nothing else running.
    const floor = await observed(() => Bun.sleep(3_000))
    const seen = await observed(() =>
      api(`/documents/${slug}/revert`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ versionId: version.id }),
      }),
    )
    const figures = {
      attack: `revert in a ${(version.byteSize / 1048576).toFixed(1)} MiB state`,
      revertMs: seen.ms,
      p99Ms: seen.seen.p99Ms,
      keystrokeP99Ms: seen.keystrokeP99Ms,
      growthMiB: seen.seen.rssGrowth >> 20,
      loopCpuMs: seen.loopCpuMs,
      processCpuMs: seen.cpuMs,
      floorP99Ms: floor.seen.p99Ms,
      floorKeystrokeP99Ms: floor.keystrokeP99Ms,
      statuses: seen.seen.statuses,
      probes: seen.seen.probes,
    }
    reportFigure('red-team-history', figures)
    console.error(`red-team-history: ${JSON.stringify(figures)}`)
    expect(seen.result.status, JSON.stringify(seen.result.body)).toBe(200)
    expect(seen.result.body.changed).toBe(true)
    // Served throughout: no request failed (PGlite's one session busy for longer than /health's grace
    // with the large state's reads and writes answers 503, reported above).
    expect(seen.seen.statuses).not.toContain(0)
    await eventually(async () => {
      const exported = await fetch(`${server.url}/api/documents/${slug}/markdown`, {
        headers: { Authorization: `Bearer ${token}` },
      })
      const text = await exported.text()
      expect(text).toContain('## Part 1\n')
      expect(text).not.toContain('The agent was here.')
    }, 30_000)
  }, 900_000)
})
