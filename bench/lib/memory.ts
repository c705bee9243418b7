/**
 * Measurement 6: memory of the real server, in a process of its own (`bun src/main.ts` on a fresh PGlite
 * data folder), so the bench's own allocations (editors, MCP clients) are not counted. RSS is VmRSS from
 * /proc/<pid>/status: the median of a few samples taken after a settle period.
 *
 * Small documents (~3 KB of Markdown with headings) are created through MCP create_document, and the
 * server is restarted on the seeded folder. Each document is then opened by a real editor (a Hocuspocus
 * provider, one WebSocket each) until all are live, and RSS is compared before and after. The editors
 * close, the documents unload (collab_documents_loaded on /metrics back to 0), and each document is read
 * once, cold, over MCP HTTP (read_document and get_outline alternate): RSS growth across the reads should
 * stay under 5% (reported, not enforced), and no read may leave a document loaded. Each RSS figure is read
 * after a full collection of the server's main thread (as the peer rows read theirs), the figure before it
 * reported beside it (`settledRss`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, connectClient } from '@collab/test-support/mcp'
import { type ServerProcess, spawnServer } from '@collab/test-support/process'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { COLLECT_ON_SIGNAL } from './peer-contenders.ts'
import { measureStart } from './start.ts'
import { between, pick, prng, type Rng, summarize } from './stats.ts'
import type { Row } from './types.ts'

const WORDS = (
  'the a of and to in for on with as by team plan review release notes design api server client editor ' +
  'document section heading draft change update schedule budget risk owner deadline meeting summary ' +
  'decision question answer issue fix test build deploy metric latency memory storage index query user ' +
  'access token share comment outline paragraph list item table link image version branch merge'
).split(' ')
const HEADINGS = [
  'Overview',
  'Goals',
  'Background',
  'Design',
  'Open questions',
  'Risks',
  'Timeline',
  'Decisions',
  'Next steps',
  'Notes',
]

function sentence(rng: Rng): string {
  const words = Array.from({ length: between(rng, 8, 18) }, () => pick(rng, WORDS))
  const first = words[0] ?? 'note'
  words[0] = first.charAt(0).toUpperCase() + first.slice(1)
  return `${words.join(' ')}.`
}

const paragraph = (rng: Rng) => Array.from({ length: between(rng, 2, 5) }, () => sentence(rng)).join(' ')

/** ~2–4 KB of Markdown: sections with ## and ### headings, paragraphs and the odd list. */
function smallMarkdown(rng: Rng): string {
  const out: string[] = []
  const sections = between(rng, 3, 5)
  for (let s = 0; s < sections; s++) {
    out.push(`## ${pick(rng, HEADINGS)} ${s + 1}`, '', paragraph(rng), '')
    if (rng() < 0.5) {
      for (let i = between(rng, 2, 4); i > 0; i--) out.push(`- ${sentence(rng)}`)
      out.push('')
    }
    if (rng() < 0.4) out.push(`### ${pick(rng, HEADINGS)} ${s + 1}.1`, '', paragraph(rng), '')
    out.push(paragraph(rng), '')
  }
  return out.join('\n')
}

/** VmRSS (and the peak, VmHWM) of a process, in KiB. */
function readRss(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') }
}

/** The median of five VmRSS samples 200 ms apart, in MiB. */
async function medianRss(pid: number): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < 5; i++) {
    samples.push(readRss(pid).rss / 1024)
    await Bun.sleep(200)
  }
  return summarize(samples).median
}

/**
 * After `settleMs` of quiet, the server's RSS as it is (`raw`) and after a full collection of its main
 * thread's heap (`collected`, COLLECT_ON_SIGNAL), in MiB. The cold reads' growth is judged on the
 * collected figure, as the peer rows judge every server's: read as it is, the same 1,000 reads grew the
 * process 20 MB in one run and 140 MB in the next, by when the collector last ran (in one process with a
 * full collection after each pass, its heap stayed flat over four passes: garbage, not what reads keep).
 */
async function settledRss(pid: number, settleMs: number): Promise<{ raw: number; collected: number }> {
  await Bun.sleep(settleMs)
  const raw = await medianRss(pid)
  process.kill(pid, 'SIGUSR2')
  await Bun.sleep(500)
  return { raw, collected: await medianRss(pid) }
}

async function gauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const value = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1]
  if (value === undefined) throw new Error(`/metrics has no ${name}`)
  return Number(value)
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++
        await fn(items[i]!, i)
      }
    }),
  )
}

const mib = (n: number) => Number(n.toFixed(1))

type Client = Awaited<ReturnType<typeof connectClient>>

/** One line on stderr per phase, with its duration: the memory run is mostly waiting, so say on what. */
function phase(label: string, since: number) {
  process.stderr.write(`memory: ${label} (${((performance.now() - since) / 1000).toFixed(1)} s)\n`)
}

async function stopServer(server: ServerProcess) {
  server.proc.kill('SIGTERM')
  await Promise.race([
    server.proc.exited,
    Bun.sleep(10_000).then(() => server.proc.exitCode === null && server.proc.kill('SIGKILL')),
  ])
}

export async function measureMemory(opts: { quick: boolean }): Promise<Row[]> {
  const liveCount = opts.quick ? 200 : 1_000
  const coldCount = opts.quick ? 200 : 1_000
  const settleMs = opts.quick ? 1_000 : 4_000
  const dataDir = mkdtempSync(join(tmpdir(), 'collab-bench-memory-'))
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    REDIS_URL: '',
    LOG_LEVEL: 'warn',
    // One user seeds a thousand documents as fast as it can: neither the per-minute limit nor the per-user
    // share of server time (which refuses such a burst on a loaded machine) is what this group measures.
    MCP_CALLS_PER_MINUTE: '0',
    MCP_SERVER_SHARE_PERCENT: '0',
  }
  // The measured servers collect on a signal (settledRss); the start times are taken without the preload.
  const serverEnv = { ...env, ...COLLECT_ON_SIGNAL }
  let server: ServerProcess | undefined
  const editors: TestProvider[] = []
  const rows: Row[] = []
  try {
    let t = performance.now()
    server = await spawnServer(serverEnv)
    const freshStartMs = performance.now() - t
    phase('server started on a fresh PGlite folder', t)
    // The first run created a user and a read+write token in the data folder, and a Welcome document.
    const token = readFileSync(join(dataDir, 'first-run-token'), 'utf8').trim()
    const tool = async (client: Client, name: string, args: Record<string, unknown>) => {
      const answer = await call(client, name, args)
      if (answer.isError) throw new Error(`${name} ${JSON.stringify(args)}: ${answer.text.slice(0, 300)}`)
      return answer.text
    }
    const rng = prng(6_000_006)
    const total = Math.max(liveCount, coldCount)
    const markdown = Array.from({ length: total }, () => smallMarkdown(rng))
    const avgBytes = markdown.reduce((s, m) => s + m.length, 0) / total
    const slugs: string[] = []
    t = performance.now()
    const seeder = await connectClient(`${server.url}/mcp`, token)
    await pool(markdown, 4, async (md, i) => {
      const text = await tool(seeder, 'create_document', { title: `Memory bench ${i}`, markdown: md })
      const slug = /slug: (\S+)/.exec(text)?.[1]
      if (!slug) throw new Error(`create_document answered without a slug: ${text.slice(0, 200)}`)
      slugs[i] = slug
    })
    await seeder.close()
    phase(`created ${total} documents with create_document`, t)
    // A fresh process for the measurements: the first start ran initdb inside PGlite, whose WebAssembly
    // memory never shrinks, so the seeding server's RSS says more about initdb than about documents.
    await stopServer(server)
    // Start time on the seeded folder, beside a bare Bun.serve (start.ts); the first start above (initdb,
    // migrations, the first run) is reported with it.
    t = performance.now()
    const start = await measureStart(env, { runs: opts.quick ? 3 : 7, documents: total + 1 })
    start.extra = { ...start.extra, 'fresh folder: spawn to listening ms': Math.round(freshStartMs) }
    rows.push(start)
    phase('start times measured', t)
    t = performance.now()
    server = await spawnServer(serverEnv)
    const pid = server.proc.pid
    const url = server.url
    phase('server restarted on the seeded folder', t)

    // Editors join by room; the REST API lists each document's room, 200 at a time.
    const rooms = new Map<string, string>()
    let welcome: string | undefined
    for (let offset: number | null = 0; offset !== null; ) {
      const res = await fetch(`${url}/api/documents?offset=${offset}`, {
        headers: { authorization: `Bearer ${token}` },
      })
      const page = (await res.json()) as {
        documents: Array<{ slug: string; room: string; title: string }>
        nextOffset: number | null
      }
      for (const d of page.documents) {
        rooms.set(d.slug, d.room)
        if (d.title === 'Welcome') welcome = d.slug
      }
      offset = page.nextOffset
    }
    if (!welcome) throw new Error('/api/documents did not list the first-run Welcome document')
    const docs = slugs.map((slug) => ({ slug, room: rooms.get(slug) ?? '' }))
    if (docs.some((d) => !d.room)) throw new Error('/api/documents did not list every created document')

    // Warm the read paths on the Welcome document (never opened by an editor), so the cold-read growth
    // below is not the first call's code and caches.
    const client = await connectClient(`${url}/mcp`, token)
    for (let i = 0; i < 25; i++) {
      await tool(client, 'read_document', { slug: welcome })
      await tool(client, 'get_outline', { slug: welcome })
    }

    // 1. Live: every document open in a real editor.
    const idleRss = await settledRss(pid, settleMs)
    const idle = idleRss.collected
    t = performance.now()
    await pool(docs.slice(0, liveCount), 10, async (doc) => {
      const editor = connectProvider(url, doc.room, token)
      editors.push(editor)
      await editor.ready
    })
    const loaded = await gauge(url, 'collab_documents_loaded')
    if (loaded < liveCount) throw new Error(`only ${loaded} of ${liveCount} documents are loaded`)
    phase(`${liveCount} editors synced`, t)
    const liveRss = await settledRss(pid, settleMs)
    const live = liveRss.collected

    // Close the editors and wait for every document to unload.
    t = performance.now()
    for (const editor of editors.splice(0)) editor.destroy()
    const deadline = Date.now() + 60_000
    while ((await gauge(url, 'collab_documents_loaded')) > 0) {
      if (Date.now() > deadline) throw new Error('documents still loaded 60 s after their editors closed')
      await Bun.sleep(100)
    }
    phase('editors closed, every document unloaded', t)
    const unloadedRss = await settledRss(pid, settleMs)
    const unloaded = unloadedRss.collected

    // 2. Cold reads: one per distinct document, none loaded; read_document and get_outline alternate.
    const coldPass = async () => {
      const started = performance.now()
      for (const [i, doc] of docs.slice(0, coldCount).entries())
        await tool(client, i % 2 === 0 ? 'read_document' : 'get_outline', { slug: doc.slug })
      const ms = performance.now() - started
      phase(`${coldCount} cold reads`, started)
      const rss = await settledRss(pid, settleMs)
      return { ms, rss: rss.collected, raw: rss.raw, loaded: await gauge(url, 'collab_documents_loaded') }
    }
    const first = await coldPass()
    // The full run reads the same documents again: growth that is a one-off (allocator pages, PGlite's
    // buffer cache, JIT) does not come back; a leak grows again by about as much.
    const second = opts.quick ? undefined : await coldPass()
    await client.close()

    const growth = (first.rss - unloaded) / unloaded
    const peak = readRss(pid).hwm / 1024
    const extra: Record<string, number | string> = {
      'RSS before MB': mib(unloaded),
      'RSS after MB': mib(first.rss),
      'growth %': Number((growth * 100).toFixed(2)),
      'KB per cold read': Number((((first.rss - unloaded) * 1024) / coldCount).toFixed(1)),
      'documents loaded after the reads': first.loaded,
      'ms per read': Number((first.ms / coldCount).toFixed(1)),
      'peak RSS MB (VmHWM, since restart)': mib(peak),
      'uncollected: RSS before / after MB': `${mib(unloadedRss.raw)} / ${mib(first.raw)}`,
    }
    if (second) {
      extra['second pass: RSS after MB'] = mib(second.rss)
      extra['second pass growth %'] = Number((((second.rss - first.rss) / first.rss) * 100).toFixed(2))
      extra['second pass uncollected: RSS after MB'] = mib(second.raw)
    }
    return [
      ...rows,
      {
        measure: 'memory: documents loaded live (server RSS)',
        size: `${liveCount} docs, ~${(avgBytes / 1024).toFixed(1)} KB Markdown`,
        variants: {},
        ratios: { 'live RSS / idle RSS': live / idle },
        extra: {
          'idle RSS MB': mib(idle),
          'live RSS MB': mib(live),
          'KB per live document': Number((((live - idle) * 1024) / liveCount).toFixed(1)),
          'RSS after unload MB': mib(unloaded),
          'uncollected: idle / live / after unload MB': `${mib(idleRss.raw)} / ${mib(liveRss.raw)} / ${mib(unloadedRss.raw)}`,
        },
      },
      {
        measure: 'memory: cold reads (read_document / get_outline over HTTP, server RSS)',
        size: `${coldCount} distinct docs`,
        variants: {},
        ratios: { 'RSS after / before': first.rss / unloaded },
        extra,
        target: {
          text: 'RSS growth < 5% across the cold reads, none left loaded',
          met: growth < 0.05 && first.loaded === 0 && (second?.loaded ?? 0) === 0,
        },
      },
    ]
  } finally {
    for (const editor of editors) editor.destroy()
    if (server) await stopServer(server)
    rmSync(dataDir, { recursive: true, force: true })
  }
}
