/**
 * A document built of as many Yjs items as bytes allow, as one user would build it (issue 24): two
 * connections each insert 9,999 characters a second, each before the last (an item apiece, ~11 bytes of
 * state), within every per-connection and per-user share. Before MAX_DOCUMENT_STRUCTS nothing stopped
 * them short of the 64 MiB state limit (~6 million items, ~1.3 GB of heap in the live document); now the
 * update that would pass MAX_DOCUMENT_STRUCTS (400,000) items is refused with the reason. On the real server process, the
 * attacker in a process of its own (structs-attacker.ts), another client typing elsewhere and a probe
 * asking /health. Asserted: the refusal and its reason, the document at most at its ceiling as an editor
 * opening it afterwards sees it, /health answering throughout, RSS growth under issue 24's 200 MB
 * (MAX_RSS_GROWTH_BYTES), through the compaction after the document unloads; the stall others
 * felt is reported (`bun run reliability`). The slow tier: the build takes ~25 s at the user's share.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { documentStructs, MAX_DOCUMENT_STRUCTS } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { readMetric as metric } from '@collab/test-support/metrics'
import { connectProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import { newRoom, startProbe, startTyping, useMeasuredServer } from './red-team-support.ts'
import { reportFigure } from './support.ts'

/**
 * Issue 24's 200 MB. At the ceiling the live document holds ~115 MB of heap (130-180 MB with its
 * garbage). While each compaction decoded a copy on the documents' worker this test measured +393 MiB up
 * to the attacker's exit (308-332 before that on other machines); since a large live document's
 * compactions merge its bytes alone (collab/persistence/compaction.ts), +207-220 MiB on PGlite and +195 on
 * PostgreSQL up to the exit, and +245-265 through the full compaction after the unload (2026-12-05); since
 * that compaction waits for the live copy's pages and the merges while loaded copy bytes, +195-217 on
 * PGlite and +184 on PostgreSQL, its peak the worker's decoding after the unload; since the worker reads
 * the stored bytes flat for that compaction (documents/worker/compact.ts `compactFlat`, 2026-12-06),
 * +154-162 on PGlite and +144 on PostgreSQL. Without the ceiling the same attack goes on to several GB.
 */
const MAX_RSS_GROWTH_BYTES = 200 * 1024 * 1024
/** The attacker stops here if nothing refuses it: past the ceiling by a quarter. */
const ATTACK_STRUCTS = MAX_DOCUMENT_STRUCTS + 100_000

describe(`red team: a document of as many items as bytes allow (${DATABASE_KIND})`, () => {
  const measured = useMeasuredServer()
  const roomNamed = (title: string) => newRoom(measured.server.url, measured.token, title)

  test('one user typing a character before the last at their share is refused at the item limit', async () => {
    const target = await roomNamed('Bomb')
    const typing = await startTyping(measured.server.url, await roomNamed('Elsewhere'), measured.token)
    const probe = await startProbe(measured.server.url, measured.server.proc.pid)
    const attacker = Bun.spawn(
      [
        'bun',
        join(import.meta.dir, 'structs-attacker.ts'),
        measured.server.url,
        target,
        measured.token,
        '2',
        String(ATTACK_STRUCTS),
      ],
      { stdout: 'pipe', stderr: 'inherit' },
    )
    const outcome = JSON.parse(await new Response(attacker.stdout).text()) as {
      sent: number
      closes: string[]
    }
    await attacker.exited
    // Measured through the full compaction after the document unloads too (it decodes a copy on the
    // documents' worker once the live one is collected): the peak may come then.
    await eventually(
      async () => expect(await metric(measured.server.url, 'collab_documents_loaded')).toBe(1),
      // Usually within 10 s of the attacker's exit; once in five runs (2026-12-06) still loaded after 30.
      60_000,
      'the attacked document to unload',
    )
    const compactions = await metric(measured.server.url, 'collab_document_compactions_total')
    await eventually(
      async () =>
        expect(await metric(measured.server.url, 'collab_document_compactions_total')).toBeGreaterThan(
          compactions,
        ),
      60_000,
      'the compaction after the unload',
    )
    const seen = await probe.stop()
    const typed = await typing.stop()
    expect(outcome.closes.length).toBeGreaterThan(0)
    expect(outcome.closes[0]).toContain(`limit of ${MAX_DOCUMENT_STRUCTS.toLocaleString('en-US')} items`)
    expect(outcome.sent).toBeLessThan(ATTACK_STRUCTS)
    expect(seen.statuses).toEqual([200])
    expect(seen.rssGrowth).toBeLessThan(MAX_RSS_GROWTH_BYTES)
    // What an editor opening the document now gets: at most its ceiling (this one's first update too).
    const opener = connectProvider(measured.server.url, target, measured.token)
    try {
      await opener.ready
      expect(documentStructs(opener.doc)).toBeLessThanOrEqual(MAX_DOCUMENT_STRUCTS + 10)
    } finally {
      opener.destroy()
    }
    reportFigure('red-team-structs', {
      attack: 'items to the ceiling',
      sent: outcome.sent,
      p99Ms: seen.p99Ms,
      keystrokeP99Ms: typed.p99Ms,
      growthMiB: seen.rssGrowth >> 20,
    })
  }, 180_000)
})
