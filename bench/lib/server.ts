/**
 * Measurements 4 and 5 against the real server (real database, real Hocuspocus, MCP on the server's own
 * port as in production and in the tests): MCP over HTTP at 1/10/50 concurrent clients vs a bare
 * Bun.serve handler answering the same bytes, and edit_blocks → a connected provider seeing the change.
 */

import { FRAGMENT_NAME } from '@collab/doc-schema'
import { SEARCH_REFRESH_MS } from '@collab/hocuspocus.server/src/collab/store-policy.ts'
import type { RunningServer } from '@collab/hocuspocus.server/src/server.ts'
import { storeAsPersisted } from '@collab/test-support/documents'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { outlineIds } from '@collab/test-support/outline'
import { connectProvider } from '@collab/test-support/provider'
import { startFreshServer, userWithToken } from '@collab/test-support/server'
import { Y } from '../deps.ts'
import { machineNow } from './clock.ts'
import type { Fixture } from './fixtures.ts'
import { percentile, summarize } from './stats.ts'
import type { Row } from './types.ts'

/** A document of `ownerId` holding a fixture's Yjs state, stored as the server's own store step stores one. */
export async function createFixtureDocument(
  server: RunningServer,
  ownerId: string,
  title: string,
  state: Uint8Array,
  options: { totals?: boolean } = {},
): Promise<{ id: string; slug: string; room: string }> {
  const created = await server.services.documents.create(ownerId, { title })
  if (created.kind === 'error') throw new Error(created.message)
  const doc = new Y.Doc()
  Y.applyUpdate(doc, state)
  // With its outline, as the store step saves one: without it, the outline backfill at the next start
  // decoded every fixture (a 5 MiB one held ~200 MB more RSS for ~15 s, counted as "idle" by the peer rows).
  await storeAsPersisted(server, created.value.id, state, doc.getXmlFragment(FRAGMENT_NAME), options)
  doc.destroy()
  return created.value
}

/** bench/lib/remote-editor.ts as a child process; `seen(n)` resolves with the epoch ms it printed for n. */
export async function startRemoteEditor(url: string, room: string, token: string) {
  const proc = Bun.spawn(['bun', `${import.meta.dir}/remote-editor.ts`, url, room, token], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const times = new Map<number, number>()
  const waiters = new Map<number, (at: number) => void>()
  let ready!: () => void
  const isReady = new Promise<void>((resolve) => {
    ready = resolve
  })
  void (async () => {
    let buffered = ''
    const reader = proc.stdout.getReader()
    const decoder = new TextDecoder()
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      buffered += decoder.decode(value, { stream: true })
      let newline = buffered.indexOf('\n')
      while (newline >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        newline = buffered.indexOf('\n')
        if (line === 'ready') ready()
        const match = /^seen (-?\d+) ([\d.]+)$/.exec(line)
        if (!match) continue
        const n = Number(match[1])
        times.set(n, Number(match[2]))
        waiters.get(n)?.(Number(match[2]))
      }
    }
  })()
  await Promise.race([
    isReady,
    Bun.sleep(30_000).then(() => {
      throw new Error('the remote editor did not sync within 30 s')
    }),
  ])
  return {
    seen(n: number, timeoutMs: number): Promise<number> {
      const known = times.get(n)
      if (known !== undefined) return Promise.resolve(known)
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the remote editor never saw edit ${n}`)), timeoutMs)
        waiters.set(n, (at) => {
          clearTimeout(timer)
          resolve(at)
        })
      })
    },
    async stop() {
      proc.stdin.end()
      await Promise.race([proc.exited, Bun.sleep(3000).then(() => proc.kill())])
    },
  }
}

type Load = { rps: number; p50: number; p99: number; latencies: number[] }

/** `clients` loops issuing `total` requests in all; each request is a fresh fetch of the same body. */
async function load(url: string, init: RequestInit, clients: number, total: number): Promise<Load> {
  const latencies: number[] = []
  let issued = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (issued < total) {
        issued++
        const t = performance.now()
        const res = await fetch(url, init)
        const body = await res.arrayBuffer()
        if (!res.ok || body.byteLength === 0) throw new Error(`HTTP ${res.status}`)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - start) / 1000
  latencies.sort((a, b) => a - b)
  return { rps: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), latencies }
}

export async function measureServer(fixture: Fixture, opts: { quick: boolean }): Promise<Row[]> {
  const rows: Row[] = []
  // The production search refresh (tests rewrite title and search text at every store).
  const h = await startFreshServer({}, { searchRefreshMs: SEARCH_REFRESH_MS })
  const mcpUrl = mcpUrlOf(h.server)
  const bare = { server: undefined as ReturnType<typeof Bun.serve> | undefined }
  const cleanups: Array<() => unknown> = []
  try {
    const { user, token } = await userWithToken(h.server, 'bench')
    const { slug, room } = await createFixtureDocument(h.server, user.id, 'Bench', fixture.state)
    // A connected editor keeps the document live (warm) for the whole measurement.
    const editor = connectProvider(h.server.url, room, token)
    cleanups.push(() => editor.destroy())
    await editor.ready

    const client = await connectClient(mcpUrl, token)
    cleanups.push(() => client.close())
    const sessionId = (client.transport as { sessionId?: string } | undefined)?.sessionId
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': client.getServerVersion() ? '2025-06-18' : '2025-06-18',
    }
    if (sessionId) headers['mcp-session-id'] = sessionId

    const requests = {
      'tools/list': { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      'get_outline 1 MiB warm': {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'get_outline', arguments: { slug } },
      },
      // A section in the middle of the document, by its whole id (issue 30: reads at the floor).
      'read_document section 1 MiB warm': {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'read_document', arguments: { slug, section_id: fixture.middleSectionId } },
      },
    }
    // Capture each answer once: the bare handler serves exactly these bytes with the same content type.
    const answers = new Map<string, { body: Uint8Array; type: string }>()
    for (const [name, body] of Object.entries(requests)) {
      const res = await fetch(mcpUrl, { method: 'POST', headers, body: JSON.stringify(body) })
      const bytes = new Uint8Array(await res.arrayBuffer())
      if (!res.ok)
        throw new Error(`${name}: HTTP ${res.status} ${new TextDecoder().decode(bytes).slice(0, 300)}`)
      answers.set(name, { body: bytes, type: res.headers.get('content-type') ?? 'application/json' })
    }
    let current = answers.get('tools/list')!
    bare.server = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (req) => {
        await req.arrayBuffer()
        return new Response(current.body as Uint8Array<ArrayBuffer>, {
          headers: { 'content-type': current.type },
        })
      },
    })
    const bareUrl = `http://127.0.0.1:${bare.server.port}/mcp`

    const levels = opts.quick ? [1, 10] : [1, 10, 50]
    for (const [name, body] of Object.entries(requests)) {
      current = answers.get(name)!
      const heavy = name !== 'tools/list'
      // Enough requests per round that 50 clients run many each (60 was one burst: noise, not throughput),
      // and that a round lasts long enough to be a rate: 600 took the bare handler ~15 ms, where one
      // collection or compile in either moved the 50-client ratio from 0.20 to 0.38 run to run.
      const total = opts.quick ? (heavy ? 30 : 100) : heavy ? 4000 : 6000
      const init = { method: 'POST', headers, body: JSON.stringify(body) }
      for (const clients of levels) {
        // Interleave: bare, ours, bare, ours (three rounds each) so both see the same machine state.
        const ours: Load[] = []
        const floor: Load[] = []
        await load(mcpUrl, init, clients, Math.min(total, 5)) // warm-up
        for (let round = 0; round < (opts.quick ? 2 : 3); round++) {
          floor.push(await load(bareUrl, init, clients, total))
          ours.push(await load(mcpUrl, init, clients, total))
        }
        const merge = (ls: Load[]) => summarize(ls.flatMap((l) => l.latencies))
        const rps = (ls: Load[]) => ls.reduce((s, l) => s + l.rps, 0) / ls.length
        const oursAll = ours.flatMap((l) => l.latencies).sort((a, b) => a - b)
        const floorAll = floor.flatMap((l) => l.latencies).sort((a, b) => a - b)
        const share = rps(ours) / rps(floor)
        rows.push({
          measure: `MCP HTTP ${name}`,
          size: `${clients} client${clients > 1 ? 's' : ''}`,
          variants: { bare: merge(floor), ours: merge(ours) },
          ratios: {
            'ours rps / bare rps': share,
            'ours p99 / bare p99': percentile(oursAll, 99) / percentile(floorAll, 99),
          },
          extra: {
            'ours req/s': rps(ours).toFixed(0),
            'bare req/s': rps(floor).toFixed(0),
            'ours p50 ms': percentile(oursAll, 50),
            'ours p99 ms': percentile(oursAll, 99),
            'bare p99 ms': percentile(floorAll, 99),
          },
          target:
            clients === 50
              ? { text: `${name} at 50 clients ≥ 25% of bare req/s`, met: share >= 0.25 }
              : undefined,
        })
      }
    }

    // 5. Edit propagation: edit_blocks called → an editor in another process (as a browser is) has the
    // text. The in-process editor above keeps the document live; timing it would charge the server's
    // database work to the editor, which shares this process's event loop.
    const remote = await startRemoteEditor(h.server.url, room, token)
    cleanups.push(() => remote.stop())
    const outline = await call(client, 'get_outline', { slug })
    const printed = outlineIds(outline.text).at(-1) // the start of its id the outline prints
    if (!printed) throw new Error(`no section in outline: ${outline.text.slice(0, 200)}`)
    // The outline prints no revs: a read of the section does, and its whole id, which the timed edits
    // pass (a start of an id costs an outline lookup per call, which this row does not measure).
    const read = await call(client, 'read_document', { slug, section_id: printed, max_chars: 200 })
    const sectionId = /^section_id: ([\w-]+)$/m.exec(read.text)?.[1] ?? printed
    let rev = /^rev: ([0-9a-f]+)$/m.exec(read.text)?.[1] ?? ''
    const seen: number[] = []
    const answered: number[] = []
    // 200 in a full run: with 60, the nearest-rank p99 was the largest of them, one edit's wait (the
    // first after the warm-up, behind the search refresh that edit's store set going: a 1 MiB text's
    // indexing holds PGlite's one session ~0.3 s). The largest is reported beside it.
    const edits = opts.quick ? 5 : 200
    for (let i = -1; i < edits; i++) {
      // edit -1 warms the path up and is not counted
      const marker = `bench edit ${i} marker`
      const t = machineNow()
      const edited = await call(client, 'edit_blocks', { slug, section_id: sectionId, rev, markdown: marker })
      const answeredMs = machineNow() - t
      if (edited.isError) throw new Error(`edit_blocks: ${edited.text}`)
      rev = /rev: ([0-9a-f]+)/.exec(edited.text)?.[1] ?? rev
      const at = await remote.seen(i, 5000)
      if (i < 0) continue
      answered.push(answeredMs)
      seen.push(at - t)
    }
    seen.sort((a, b) => a - b)
    answered.sort((a, b) => a - b)
    const p99 = percentile(seen, 99)
    rows.push({
      measure: 'edit propagation (edit_blocks called → editor in another process has it)',
      size: `${fixture.name}, loopback`,
      variants: { 'editor sees it': summarize(seen), 'edit_blocks answered (stored)': summarize(answered) },
      ratios: {},
      extra: {
        'p50 ms': percentile(seen, 50),
        'p99 ms': p99,
        'max ms': seen.at(-1) ?? Number.NaN,
        'answered p50 ms': percentile(answered, 50),
        'answered p99 ms': percentile(answered, 99),
      },
      target: { text: 'p99 < 50 ms on loopback', met: p99 < 50 },
    })
  } finally {
    for (const c of cleanups.reverse()) await c()
    bare.server?.stop(true)
    await h.close()
  }
  return rows
}
