/**
 * An ordinary 20 MiB Markdown file over REST while others are served (issue 24): before, a 21 MB file was
 * built on the event loop for 23 s and stalled others' keystrokes up to 11.2 s; now it is built on the
 * documents' worker and exported there too. Asserted: 201 and 200, /health answering 200 throughout and
 * asked while the file was built, and the server's RSS growing less than issue 24's 200 MB (memory, not
 * time); the stall others felt is a figure (`bun run reliability`), not asserted.
 * The slow tier (`bun run test:slow`): the import and export are ~20 s of CPU, and the size is what is
 * tested (a build long enough for others to feel it, a state written in slices); the bombs are
 * red-team-imports.test.ts.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { useImportTarget } from './red-team-imports-support.ts'
import { prose } from './red-team-support.ts'
import { reportFigure } from './support.ts'

/**
 * Issue 24's 200 MB. The import grew the server +224-238 MiB on PGlite (2026-12-06), ~93 MB of it PGlite's
 * WebAssembly heap growing for good while the database joined the 22 MB state's slices for its INSERT;
 * with the state stored in parts (documents/store.ts, writeStateRow) +169-171 MiB, the export +142-148.
 */
const MAX_RSS_GROWTH_BYTES = 200 * 1024 * 1024

describe(`red team: a 20 MiB Markdown file over REST (${DATABASE_KIND})`, () => {
  const target = useImportTarget()
  /** The 20 MiB document the prose test imports (exported by the test after it). */
  let slugOfLarge = ''

  test('a 20 MiB file of prose is imported while others are served', async () => {
    const markdown = prose(20 * 1024 * 1024)
    const seen = await target.observed(async () => {
      const answer = await target.importFile(markdown)
      return { status: answer.status, slug: ((await answer.json()) as { slug: string }).slug }
    })
    expect(seen.result.status).toBe(201)
    slugOfLarge = seen.result.slug
    expect(seen.statuses).toEqual([200])
    expect(seen.probes).toBeGreaterThan(5) // /health was asked while the file was built, not only after
    expect(seen.growth).toBeLessThan(MAX_RSS_GROWTH_BYTES)
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
      fetch(`${target.server.url}/api/documents/${slugOfLarge}/markdown`, {
        headers: { Authorization: `Bearer ${target.token}` },
      })
    const seen = await target.observed(async () => {
      const answer = await exportIt()
      return { status: answer.status, length: (await answer.text()).length }
    })
    expect(seen.result.status).toBe(200)
    expect(seen.result.length).toBeGreaterThan(20_000_000)
    expect(seen.statuses).toEqual([200])
    expect(seen.growth).toBeLessThan(MAX_RSS_GROWTH_BYTES)
    reportFigure('red-team-imports', {
      attack: 'export 20 MiB',
      p99Ms: seen.p99Ms,
      keystrokeP99Ms: seen.keystrokeP99Ms,
      growthMiB: seen.growth >> 20,
    })
  }, 120_000)
})
