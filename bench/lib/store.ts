/**
 * Issue 14's storage measurements against the real server (real database, real Hocuspocus, MCP over HTTP):
 * - an agent's write answered (durable) on warm documents of growing size, interleaved, against the same
 *   write to a 10 KiB document (a store appends the change, so the size should not show);
 * - the server's event-loop delay while an editor in another process types continuously into the big
 *   document (stores every STORE_MAX_DEBOUNCE_MS or sooner), against the same sampling with nobody typing;
 * - one compaction of the big document (the whole state written, as every store did before the log):
 *   its time and the longest event-loop stall it caused.
 */

import { FRAGMENT_NAME, readPlainText, readTitle } from '@collab/doc-schema'
import { SEARCH_REFRESH_MS } from '@collab/hocuspocus.server/src/collab/store-policy.ts'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { connectProvider } from '@collab/test-support/provider'
import { startFreshServer, userWithToken } from '@collab/test-support/server'
import { Y } from '../deps.ts'
import { buildFixture } from './fixtures.ts'
import { createFixtureDocument } from './server.ts'
import { percentile, summarize } from './stats.ts'
import type { Row } from './types.ts'

/** Event-loop delay sampler: a 5 ms interval timer, recording how late each tick fires. */
function sampleLoop(): { stop(): number[] } {
  const INTERVAL = 5
  const delays: number[] = []
  let expected = performance.now() + INTERVAL
  const timer = setInterval(() => {
    const now = performance.now()
    delays.push(Math.max(0, now - expected))
    expected = now + INTERVAL
  }, INTERVAL)
  return {
    stop() {
      clearInterval(timer)
      return delays.sort((a, b) => a - b)
    },
  }
}

export async function measureStore(
  database: { name: string; postgresUrl: string | null },
  opts: { quick: boolean },
): Promise<Row[]> {
  const rows: Row[] = []
  const sizes = opts.quick
    ? [
        { name: '10 KiB', bytes: 10 * 1024 },
        { name: '1 MiB', bytes: 1024 * 1024 },
      ]
    : [
        { name: '10 KiB', bytes: 10 * 1024 },
        { name: '1 MiB', bytes: 1024 * 1024 },
        { name: '5 MiB', bytes: 5 * 1024 * 1024 },
      ]
  // Production timings for search; a short store debounce so continuous typing stores every second.
  const h = await startFreshServer(
    { postgresUrl: database.postgresUrl },
    { storeDebounceMs: 500, storeMaxDebounceMs: 1_000, searchRefreshMs: SEARCH_REFRESH_MS },
  )
  const cleanups: Array<() => unknown> = []
  try {
    const { user, token } = await userWithToken(h.server, 'storebench')
    const docs: Array<{ name: string; slug: string; room: string; id: string; bytes: number }> = []
    for (const size of sizes) {
      const fixture = buildFixture(size.name, size.bytes)
      const created = await createFixtureDocument(h.server, user.id, `Store ${size.name}`, fixture.state)
      docs.push({ name: size.name, ...created, bytes: fixture.state.length })
      // Warm: a connected editor keeps it loaded for the whole measurement.
      const editor = connectProvider(h.server.url, created.room, token)
      cleanups.push(() => editor.destroy())
      await editor.ready
    }
    const client = await connectClient(mcpUrlOf(h.server), token)
    cleanups.push(() => client.close())

    // 1. Writes answered, interleaved across sizes so every size sees the same machine state.
    const runs = opts.quick ? 7 : 21
    const answered = new Map<string, number[]>(docs.map((d) => [d.name, []]))
    for (let i = -1; i < runs; i++) {
      for (const doc of docs) {
        const started = performance.now()
        const result = await call(client, 'append_to_document', {
          slug: doc.slug,
          markdown: `Store bench paragraph ${i}.`,
        })
        const ms = performance.now() - started
        if (result.isError) throw new Error(`append_to_document: ${result.text.slice(0, 300)}`)
        if (i >= 0) answered.get(doc.name)!.push(ms)
      }
    }
    const small = percentile(
      answered.get('10 KiB')!.sort((a, b) => a - b),
      50,
    )
    for (const doc of docs.slice(1)) {
      const ours = answered.get(doc.name)!.sort((a, b) => a - b)
      const ratio = percentile(ours, 50) / small
      rows.push({
        measure: `agent write answered (durable), ${database.name}`,
        size: doc.name,
        stateBytes: doc.bytes,
        variants: { [doc.name]: summarize(ours), '10 KiB': summarize(answered.get('10 KiB')!) },
        ratios: { [`p50 ${doc.name} / p50 10 KiB`]: ratio },
        target: { text: 'p50 ≤ 2× the same write to a 10 KiB document', met: ratio <= 2 },
      })
    }

    // 2. Event-loop delay while the biggest document is typed into from another process.
    const big = docs.at(-1)!
    const seconds = opts.quick ? 6 : 20
    const idle = sampleLoop()
    await Bun.sleep(seconds * 250)
    const idleDelays = idle.stop()
    const typist = Bun.spawn(
      ['bun', `${import.meta.dir}/remote-typist.ts`, h.server.url, big.room, token, '50'],
      { stdout: 'pipe', stderr: 'inherit', stdin: 'pipe' },
    )
    cleanups.push(async () => {
      typist.stdin.end()
      await Promise.race([typist.exited, Bun.sleep(3000).then(() => typist.kill())])
    })
    await Bun.sleep(1_000) // connected and typing
    const storesBefore = h.server.metrics.stores.get()
    const busy = sampleLoop()
    await Bun.sleep(seconds * 1000)
    const busyDelays = busy.stop()
    const stores = h.server.metrics.stores.get() - storesBefore
    const p99 = percentile(busyDelays, 99)
    rows.push({
      measure: `event-loop delay while a ${big.name} document is typed into, ${database.name}`,
      size: big.name,
      stateBytes: big.bytes,
      variants: { typing: summarize(busyDelays), idle: summarize(idleDelays) },
      ratios: { 'p99 typing / p99 idle': p99 / Math.max(0.01, percentile(idleDelays, 99)) },
      extra: {
        'p99 ms': p99,
        'max ms': busyDelays.at(-1) ?? 0,
        'idle p99 ms': percentile(idleDelays, 99),
        'stores during the run': stores,
      },
      target: { text: 'p99 ≤ 20 ms with the document stored continuously', met: p99 <= 20 && stores > 0 },
    })
    typist.stdin.end()
    await Promise.race([typist.exited, Bun.sleep(3000).then(() => typist.kill())])

    // 3. One compaction of the big document: what every store cost before the log.
    const live = h.server.collab.hocuspocus.documents.get(big.room)
    if (!live) throw new Error('the big document is not loaded')
    const stalls = sampleLoop()
    const started = performance.now()
    await live.saveMutex.runExclusive(() =>
      h.server.services.documents.storeState(
        big.id,
        {
          state: Y.encodeStateAsUpdate(live),
          title: readTitle(live.getXmlFragment(FRAGMENT_NAME)),
          text: readPlainText(live.getXmlFragment(FRAGMENT_NAME), 200_000),
        },
        { compact: true },
      ),
    )
    const compactMs = performance.now() - started
    await Bun.sleep(20)
    const stallDelays = stalls.stop()
    rows.push({
      measure: `one compaction (whole state written), ${database.name}`,
      size: big.name,
      stateBytes: big.bytes,
      variants: { compaction: summarize([compactMs]) },
      ratios: {},
      extra: { ms: compactMs, 'longest event-loop stall ms': stallDelays.at(-1) ?? 0 },
    })
  } finally {
    for (const c of cleanups.reverse()) await c()
    await h.close()
  }
  return rows
}
