/**
 * What one user's attack costs everyone else, measured the same way each time, for before/after
 * comparisons of the fair-server limits (issue 24; docs/reliability.md). A fresh in-process server
 * (PGlite, or PostgreSQL with TEST_DATABASE_URL), a floor window of `/health` asked every 20 ms from the
 * server's own process (so an answer waits for whatever holds its event loop), then the attack, run by
 * scripts in processes of their own (bench/attacks/), with the same probe. Prints one line of JSON per
 * run: /health p50, p99 and longest in the floor and during the attack, the process's CPU over the attack
 * window (the server's; the attackers' is their own), its RSS growth, and what the attacker reported.
 *
 *   bun bench/attacks.ts <reconnect|presence|dense|items|idle> [--seconds=8] [--runs=1] [--sockets=5000]
 *     [--trace]   (the server's RSS, heap and buffers on stderr every 250 ms, with the attack's phase)
 *
 * - reconnect: 16 loops of one user opening a socket, authenticating a document and closing it.
 * - presence: 16 sockets of one user, each 70 awareness messages a second of four ~7 KB states, to a
 *   document 40 real providers have open (in a process of their own).
 * - dense: 4 typists (one process) in a paragraph of 10,000 alternating bold and italic runs.
 * - items: one user's two connections typing characters each before the last, 9,999 a second each, until
 *   the document's item limit refuses them (reliability/structs-attacker.ts); measured on until the
 *   document has unloaded and been compacted after.
 * - idle: `--sockets` editor sockets opened by one client that never authenticates them, held `--seconds`
 *   (collab/socket-gate.ts).
 *
 * Figures, not assertions: compare runs of old and new code interleaved on the same machine, several each
 * (the old code checked out with `git checkout <old> -- apps packages`, then back).
 */
import { join } from 'node:path'
import type { RunningServer } from '@collab/hocuspocus.server/src/server.ts'
import { alternatingMarkRuns, buildDocument, paragraph } from '@collab/test-support/documents'
import { startFreshServer, userWithToken } from '@collab/test-support/server'
import type * as Y from 'yjs'
import { percentile } from './lib/stats.ts'

const ATTACKS = ['reconnect', 'presence', 'dense', 'items', 'idle'] as const
type Attack = (typeof ATTACKS)[number]

const args = new Map(
  process.argv.slice(3).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=') as [string, string | undefined]
    return [key, value ?? '']
  }),
)
const attack = process.argv[2] as Attack
if (!ATTACKS.includes(attack)) {
  console.error(
    `usage: bun bench/attacks.ts <${ATTACKS.join('|')}> [--seconds=8] [--runs=1] [--sockets=5000]`,
  )
  process.exit(2)
}
const seconds = Number(args.get('seconds') ?? 8)
const runs = Number(args.get('runs') ?? 1)
const here = join(import.meta.dir, 'attacks')
/** `--trace`: the server's RSS, heap and buffers on stderr every 250 ms of a probe, with the phase. */
const trace = args.has('trace')
let phase = 'floor'

/** The attacker's report: its JSON line parsed, or its text. */
function asJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

type Window = { p50: number; p99: number; max: number; n: number }

/** /health asked every 20 ms for `ms` (or until `until` resolves), from this process. */
async function probe(
  url: string,
  ms: number,
  until?: Promise<unknown>,
): Promise<Window & { peakRss: number }> {
  const latencies: number[] = []
  let peakRss = process.memoryUsage().rss
  let done = false
  void until?.then(() => {
    done = true
  })
  const end = performance.now() + ms
  const started = performance.now()
  let traced = 0
  while (until ? !done : performance.now() < end) {
    const start = performance.now()
    await (await fetch(`${url}/health`)).arrayBuffer()
    latencies.push(performance.now() - start)
    const rss = process.memoryUsage().rss
    peakRss = Math.max(peakRss, rss)
    if (trace && performance.now() - traced >= 250) {
      traced = performance.now()
      const m = process.memoryUsage()
      console.error(
        `trace ${((traced - started) / 1000).toFixed(2)} s rss ${rss >> 20} heap ${m.heapTotal >> 20}/${m.heapUsed >> 20} buffers ${m.arrayBuffers >> 20} MiB ${phase}`,
      )
    }
    await Bun.sleep(20)
  }
  latencies.sort((a, b) => a - b)
  const at = (p: number) => Number(percentile(latencies, p).toFixed(1))
  return { p50: at(50), p99: at(99), max: at(100), n: latencies.length, peakRss }
}

/** A child's stdout: `ready()` waits for its line `ready`, `output()` reads the rest to its end. */
function child(argv: string[], stdin?: 'pipe') {
  const proc = Bun.spawn(['bun', ...argv], {
    cwd: here,
    stdout: 'pipe',
    stderr: 'inherit',
    stdin: stdin ?? 'ignore',
  })
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let out = ''
  /** Reads until `mark` is in the output, or to its end without one. */
  const readUntil = async (mark?: string) => {
    while (mark === undefined || !out.includes(mark)) {
      const { value, done } = await reader.read()
      if (done) return
      out += decoder.decode(value, { stream: true })
    }
  }
  return {
    proc,
    ready: () => readUntil('ready'),
    async output(): Promise<string> {
      await readUntil()
      await proc.exited
      return out.replace(/^ready\n/, '').trim()
    },
  }
}

/**
 * Items: once the attacked document has unloaded and the full compaction after its unload (collab/
 * persistence/compaction.ts `compactUnloaded`, which decodes a copy on the documents' worker) is done, so
 * the RSS peak of that copy is in the window; at most 60 s.
 */
async function unloadedAndCompacted(server: RunningServer, room: string): Promise<void> {
  const end = performance.now() + 60_000
  phase = 'attacker done'
  while (server.collab.hocuspocus.documents.has(room) && performance.now() < end) await Bun.sleep(50)
  phase = 'unloaded'
  const compactions = server.metrics.compactions.get()
  while (server.metrics.compactions.get() === compactions && performance.now() < end) await Bun.sleep(50)
}

for (let run = 0; run < runs; run++) {
  const fresh = await startFreshServer({})
  const { server } = fresh
  try {
    const owner = await userWithToken(server, 'owner')
    const made =
      attack === 'dense'
        ? await buildDocument(server, owner.user.id, { title: 'Dense' }, (fragment) => {
            const dense = paragraph('')
            fragment.push([dense])
            ;(dense.get(0) as Y.XmlText).applyDelta(alternatingMarkRuns(10_000))
          })
        : await (async () => {
            const created = await server.services.documents.create(owner.user.id, {
              title: 'Attacked',
              markdown: 'first paragraph',
            })
            if (created.kind === 'error') throw new Error(created.message)
            return created.value
          })()
    const { room } = made
    let listeners: ReturnType<typeof child> | undefined
    if (attack === 'presence') {
      const tokens: string[] = []
      for (const name of ['l1', 'l2', 'l3', 'l4']) {
        const listener = await userWithToken(server, name)
        const shared = await server.services.documents.share(made.slug, listener.user.id, 'editor')
        if (shared.kind === 'error') throw new Error(shared.message)
        tokens.push(listener.token)
      }
      listeners = child(['listeners.ts', server.url, room, tokens.join(','), '40'], 'pipe')
      await listeners.ready()
    }
    await probe(server.url, 1_000) // warm
    const floor = await probe(server.url, 3_000)
    const rss = process.memoryUsage().rss
    const argv: Record<Attack, string[]> = {
      reconnect: ['reconnect.ts', server.url, room, owner.token, '16', String(seconds)],
      presence: ['presence.ts', server.url, room, owner.token, '16', '70', String(seconds)],
      dense: ['dense-typists.ts', server.url, room, owner.token, '4', String(seconds), '5'],
      idle: ['idle-sockets.ts', server.url, String(args.get('sockets') ?? 5000), String(seconds)],
      items: [
        join(import.meta.dir, '../apps/hocuspocus.server/src/__tests__/reliability/structs-attacker.ts'),
        server.url,
        room,
        owner.token,
        '2',
        '10000000',
      ],
    }
    phase = 'attack'
    const attacker = child(argv[attack])
    if (attack === 'dense') await attacker.ready()
    const cpu = process.cpuUsage()
    const reported = attacker.output()
    const during = await probe(
      server.url,
      seconds * 1000,
      attack === 'items'
        ? reported.then(() => unloadedAndCompacted(server, room))
        : attack === 'idle'
          ? reported
          : undefined,
    )
    const used = process.cpuUsage(cpu)
    const { peakRss, ...window } = during
    const { peakRss: _floorRss, ...floorWindow } = floor
    console.log(
      JSON.stringify({
        attack,
        run: run + 1,
        database: fresh.db.databaseUrl ? 'postgresql' : 'pglite',
        floor: floorWindow,
        during: window,
        cpuSeconds: Number(((used.user + used.system) / 1e6).toFixed(2)),
        rssGrowthMiB: (peakRss - rss) >> 20,
        attacker: asJson(await reported),
      }),
    )
    listeners?.proc.stdin?.end()
    await listeners?.proc.exited
  } finally {
    await fresh.close()
  }
}
process.exit(0)
