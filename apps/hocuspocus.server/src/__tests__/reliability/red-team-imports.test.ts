/**
 * Import bombs (issue 24), on the real server process over real HTTP: what one user's Markdown costs the
 * others. Before: a 0.6 MB table answered 201 after 47.7 s with RSS 316 → 3,539 MB and every other client's
 * /health waiting 34 s; 30 KB of one reused reference built 40 MB; an ordinary 21 MB file stalled others'
 * keystrokes up to 11.2 s. Now the bombs are refused while markdown-it reads them (work ceilings) and every
 * import is built on a worker thread (its share per user: worker-pool.test.ts). Asserted: the refusal and its
 * reason, the server's memory growth while it refused (bounded), /health answering 200 throughout; the
 * stall others felt is reported as a figure (`bun run reliability`), not asserted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_TABLE_CELLS } from '@collab/doc-schema'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import type { ServerProcess } from '@collab/test-support/process'
import { firstRunToken, spawnOn, stopProcess } from './faults-support.ts'
import { MEASURED_SERVER_ENV, startProbe, startTyping } from './red-team-support.ts'
import { reportFigure } from './support.ts'

/** The server's growth in memory a refused bomb may cost (issue 24's bound for any attack). */
const MAX_RSS_GROWTH_BYTES = 200 * 1024 * 1024

/** While `work` runs, what another client sees (red-team-support.ts's probe, a process of its own). */
async function observed<T>(server: ServerProcess, work: () => Promise<T>) {
  const typing = await startTyping(server.url, typingRoom, token)
  const probe = await startProbe(server.url, server.proc.pid)
  const result = await work()
  const seen = await probe.stop()
  const typed = await typing.stop()
  return {
    result,
    statuses: seen.statuses,
    probes: seen.probes,
    p99Ms: seen.p99Ms,
    growth: seen.rssGrowth,
    keystrokeP99Ms: typed.p99Ms,
  }
}

function table(rows: number, columns: number): string {
  const row = (cell: string) => `|${Array(columns).fill(cell).join('|')}|\n`
  return `# Table bomb\n\n${row('a')}${row('-')}${row('b').repeat(rows)}`
}

function prose(bytes: number): string {
  const sentence = 'The quick brown fox jumps over the lazy dog while the server keeps every edit. '
  const parts = ['# Big manual\n']
  let size = 0
  for (let i = 0; size < bytes; i++) {
    const part = `\n## Part ${i}\n\n${sentence.repeat(12)}\n\n${sentence.repeat(10)}\n`
    parts.push(part)
    size += part.length
  }
  return parts.join('')
}

let db: TestDatabase
let server: ServerProcess
let token: string
/** Another document, typed into while each attack runs (what a person elsewhere feels). */
let typingRoom = ''

describe(`red team: Markdown import bombs over REST (${DATABASE_KIND})`, () => {
  /** The 20 MiB document the prose test imports (exported by the test after it). */
  let slugOfLarge = ''
  const importFile = (markdown: string) =>
    fetch(`${server.url}/api/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'content-type': 'text/markdown' },
      body: markdown,
    })

  beforeAll(async () => {
    db = await createTestDatabase()
    server = await spawnOn(db, MEASURED_SERVER_ENV)
    token = firstRunToken(db.dataDir)
    // Warm the import worker and the route, so the first bomb's figures are the bomb's.
    const warm = await importFile('# Warm up\n\nhello')
    expect(warm.status).toBe(201)
    typingRoom = ((await warm.json()) as { room: string }).room
  }, 60_000)
  afterAll(async () => {
    await stopProcess(server)
    await db?.cleanup()
  }, 60_000)

  /** A bomb must be refused with `reason` while others are served and the server's memory stays bounded. */
  async function refusedBomb(attack: string, markdown: string, reason: string) {
    const seen = await observed(server, async () => {
      const response = await importFile(markdown)
      return { status: response.status, body: (await response.json()) as { message: string } }
    })
    expect(seen.result.status).toBe(400)
    expect(seen.result.body.message).toContain(reason)
    expect(seen.statuses).toEqual([200])
    expect(seen.growth).toBeLessThan(MAX_RSS_GROWTH_BYTES)
    reportFigure('red-team-imports', {
      attack,
      p99Ms: seen.p99Ms,
      keystrokeP99Ms: seen.keystrokeP99Ms,
      growthMiB: seen.growth >> 20,
    })
  }

  test(
    'a 0.6 MB table of 300,000 cells is refused naming the cell limit, within bounded memory',
    () =>
      refusedBomb(
        'table 300x1000',
        table(300, 1_000),
        `more than ${MAX_TABLE_CELLS.toLocaleString('en-US')} cells`,
      ),
    60_000,
  )

  test(
    '30 KB of one reference used 4,000 times is refused, nothing built',
    () =>
      refusedBomb(
        'reference x4000',
        `# Reference bomb\n\n[r]: https://example.com/${'x'.repeat(4_000)}\n\n${'[a][r] '.repeat(4_000)}`,
        'reference definition used many times',
      ),
    60_000,
  )

  test('a 20 MiB file of prose is imported while others are served', async () => {
    const markdown = prose(20 * 1024 * 1024)
    const seen = await observed(server, async () => {
      const answer = await importFile(markdown)
      return { status: answer.status, slug: ((await answer.json()) as { slug: string }).slug }
    })
    expect(seen.result.status).toBe(201)
    slugOfLarge = seen.result.slug
    expect(seen.statuses).toEqual([200])
    expect(seen.probes).toBeGreaterThan(5) // /health was asked while the file was built, not only after
    reportFigure('red-team-imports', {
      attack: 'prose 20 MiB',
      p99Ms: seen.p99Ms,
      keystrokeP99Ms: seen.keystrokeP99Ms,
      growthMiB: seen.growth >> 20,
    })
  }, 120_000)

  test('exporting the 20 MiB document renders it on the worker while /health keeps answering', async () => {
    expect(slugOfLarge).not.toBe('')
    const exportIt = () =>
      fetch(`${server.url}/api/documents/${slugOfLarge}/markdown`, {
        headers: { Authorization: `Bearer ${token}` },
      })
    const seen = await observed(server, async () => {
      const answer = await exportIt()
      return { status: answer.status, length: (await answer.text()).length }
    })
    expect(seen.result.status).toBe(200)
    expect(seen.result.length).toBeGreaterThan(20_000_000)
    expect(seen.statuses).toEqual([200])
    reportFigure('red-team-imports', {
      attack: 'export 20 MiB',
      p99Ms: seen.p99Ms,
      keystrokeP99Ms: seen.keystrokeP99Ms,
      growthMiB: seen.growth >> 20,
    })
  }, 120_000)
})
