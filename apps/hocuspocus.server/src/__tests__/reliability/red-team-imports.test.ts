/**
 * Import bombs (issue 24), on the real server process over real HTTP: what one user's Markdown costs the
 * others. Before: a 0.6 MB table answered 201 after 47.7 s with RSS 316 → 3,539 MB and every other client's
 * /health waiting 34 s; 30 KB of one reused reference built 40 MB; an ordinary 21 MB file stalled others'
 * keystrokes up to 11.2 s. Now the bombs are refused while markdown-it reads them (work ceilings) and every
 * import is built on a worker thread (its share per user: worker-pool.test.ts). Asserted: the refusal and its
 * reason, the server's memory growth while it refused (bounded), /health answering 200 throughout; the
 * stall others felt is reported as a figure (`bun run reliability`), not asserted. The 21 MB file's case, a
 * 20 MiB file in and out while others are served, is red-team-imports-large.slow.test.ts (the slow tier).
 */
import { describe, expect, test } from 'bun:test'
import { MAX_TABLE_CELLS } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { useImportTarget } from './red-team-imports-support.ts'
import { reportFigure } from './support.ts'

/** The server's growth in memory a refused bomb may cost (issue 24's bound for any attack). */
const MAX_RSS_GROWTH_BYTES = 200 * 1024 * 1024

function table(rows: number, columns: number): string {
  const row = (cell: string) => `|${Array(columns).fill(cell).join('|')}|\n`
  return `# Table bomb\n\n${row('a')}${row('-')}${row('b').repeat(rows)}`
}

describe(`red team: Markdown import bombs over REST (${DATABASE_KIND})`, () => {
  const target = useImportTarget()

  /** A bomb must be refused with `reason` while others are served and the server's memory stays bounded. */
  async function refusedBomb(attack: string, markdown: string, reason: string) {
    const seen = await target.observed(async () => {
      const response = await target.importFile(markdown)
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
})
