/**
 * One load process of the capacity group (bench/lib/capacity.ts): real Hocuspocus providers (one WebSocket
 * each, as a browser tab has), a real MCP SDK client over HTTP, or a /health prober, driven by the
 * orchestrator with one JSON command a line on stdin, each answered by one JSON line on stdout carrying the
 * command's `id`. Several of these run at once, so the load is not limited by one process's event loop,
 * and none runs in the server's process.
 *
 *   bun bench/lib/capacity-load.ts <server url> <token>
 *
 * Keystroke timing: every editor notes, for each of its own typed keystrokes, its Yjs clock after the
 * keystroke and the time on the machine's monotonic clock (clock.ts: one clock for every process on
 * the machine); and for every remote transaction, each other client's clock and when it arrived. The
 * orchestrator pairs them: a keystroke reached an editor when that editor first held its author's clock.
 */

import { FRAGMENT_NAME } from '@collab/doc-schema'
import { call, connectClient } from '@collab/test-support/mcp'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { Y } from '../deps.ts'
import { machineNow } from './clock.ts'
import { eachLine } from './lines.ts'

const [url, token] = process.argv.slice(2)
if (!url || !token) {
  console.error('usage: bun bench/lib/capacity-load.ts <server url> <token>')
  process.exit(2)
}

const now = machineNow

type Editor = {
  group: string
  room: string
  provider: TestProvider
  timer?: ReturnType<typeof setInterval>
  /** [own clock after the keystroke, when] */
  sent: Array<[number, number]>
  /** other client id → [its clock, when it arrived] */
  recv: Map<number, Array<[number, number]>>
}

const editors: Editor[] = []
let recording = false

/** Connects one editor; `keysPerSecond` > 0 makes it type a character that often, from a random phase. */
async function addEditor(group: string, room: string, keysPerSecond: number): Promise<void> {
  const provider = connectProvider(url!, room, token!)
  const editor: Editor = { group, room, provider, sent: [], recv: new Map() }
  editors.push(editor)
  const { doc } = provider
  doc.on('afterTransaction', (tr: Y.Transaction) => {
    if (!recording) return
    const at = now()
    if (tr.local) {
      const clock = tr.afterState.get(doc.clientID)
      if (clock !== undefined && clock !== tr.beforeState.get(doc.clientID)) editor.sent.push([clock, at])
      return
    }
    for (const [client, clock] of tr.afterState) {
      if (client === doc.clientID || clock === (tr.beforeState.get(client) ?? 0)) continue
      const list = editor.recv.get(client) ?? []
      if (list.length === 0) editor.recv.set(client, list)
      list.push([clock, at])
    }
  })
  await provider.ready
  if (keysPerSecond <= 0) return
  // Its own paragraph at the end, as remote-typist.ts types: one character a keystroke.
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const line = new Y.XmlElement('paragraph')
  const text = new Y.XmlText('')
  line.insert(0, [text])
  fragment.push([line])
  const every = 1000 / keysPerSecond
  let typed = 0
  await Bun.sleep(Math.random() * every)
  editor.timer = setInterval(() => {
    text.insert(text.length, 'abcdefghij '[typed++ % 11] as string)
  }, every)
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!)
    }),
  )
}

/** How long calls may run on after a step's schedule ends before they count as unanswered. */
const STRAGGLER_MS = 5_000

type Mcp = Awaited<ReturnType<typeof connectClient>>
let mcp: Mcp | undefined

/**
 * MCP calls at `rate` a second for `ms`, open loop (a call starts on schedule whether or not the earlier
 * ones answered, as independent agents do), at most `maxInFlight` at once: past that the schedule slips
 * and the step counts as not carried. 70% reads (get_outline, read_document), 30% append_to_document.
 */
async function mcpLoad(rate: number, ms: number, slugs: string[], maxInFlight: number) {
  mcp ??= await connectClient(`${url}/mcp`, token!)
  const client = mcp
  const calls: Array<[string, number, boolean]> = []
  const errors: string[] = []
  let inFlight = 0
  let skipped = 0
  const running: Promise<void>[] = []
  const start = performance.now()
  for (let i = 0; ; i++) {
    const due = start + (i * 1000) / rate
    if (due - start >= ms) break
    const wait = due - performance.now()
    if (wait > 0) await Bun.sleep(wait)
    if (inFlight >= maxInFlight) {
      skipped++
      continue
    }
    const slug = slugs[i % slugs.length]!
    const pick = i % 10
    const [name, args] =
      pick < 3
        ? [
            'append_to_document',
            { slug, markdown: `Agent note ${i}: the plan holds, next review on Friday.` },
          ]
        : pick < 7
          ? ['get_outline', { slug }]
          : ['read_document', { slug, max_chars: 2_000 }]
    inFlight++
    const t = performance.now()
    running.push(
      call(client, name as string, args as Record<string, unknown>)
        .then(
          (answer) => {
            calls.push([name as string, performance.now() - t, !answer.isError])
            if (answer.isError && errors.length < 5) errors.push(`${name}: ${answer.text.slice(0, 200)}`)
          },
          (error: Error) => {
            calls.push([name as string, performance.now() - t, false])
            if (errors.length < 5) errors.push(`${name}: ${error.message.slice(0, 200)}`)
          },
        )
        .finally(() => inFlight--),
    )
  }
  // Calls still running STRAGGLER_MS after the schedule ended are counted as unanswered, not waited for.
  const unanswered = await Promise.race([
    Promise.all(running).then(() => 0),
    Bun.sleep(STRAGGLER_MS).then(() => inFlight),
  ])
  return { calls, errors, skipped, unanswered }
}

/** /health every `everyMs` for `ms`, one request at a time (as a balancer's check does). */
async function healthProbe(ms: number, everyMs: number) {
  const latencies: number[] = []
  const statuses: Record<string, number> = {}
  const end = performance.now() + ms
  while (performance.now() < end) {
    const t = performance.now()
    let status = 0
    try {
      const res = await fetch(`${url}/health`)
      await res.arrayBuffer()
      status = res.status
    } catch {}
    latencies.push(performance.now() - t)
    statuses[status] = (statuses[status] ?? 0) + 1
    await Bun.sleep(everyMs)
  }
  return { latencies, statuses }
}

type Command =
  | { id: number; cmd: 'editors'; group: string; rooms: string[]; keysPerSecond: number }
  | { id: number; cmd: 'record' }
  | { id: number; cmd: 'report' }
  | { id: number; cmd: 'drop'; group: string }
  | { id: number; cmd: 'mcp'; rate: number; ms: number; slugs: string[]; maxInFlight: number }
  | { id: number; cmd: 'health'; ms: number; everyMs: number }

async function handle(command: Command): Promise<Record<string, unknown>> {
  switch (command.cmd) {
    case 'editors': {
      const failed: string[] = []
      await pool(command.rooms, 16, (room) =>
        Promise.race([
          addEditor(command.group, room, command.keysPerSecond),
          Bun.sleep(30_000).then(() => {
            throw new Error('not synced within 30 s')
          }),
        ]).catch((error: Error) => {
          failed.push(`${room}: ${error.message}`)
        }),
      )
      return { connected: command.rooms.length - failed.length, failed: failed.slice(0, 5) }
    }
    case 'record':
      for (const e of editors) {
        e.sent = []
        e.recv = new Map()
      }
      recording = true
      return {}
    case 'report':
      recording = false
      return {
        editors: editors.map((e) => ({
          room: e.room,
          client: e.provider.doc.clientID,
          sent: e.sent,
          recv: Object.fromEntries(e.recv),
        })),
      }
    case 'drop': {
      for (const e of editors.filter((x) => x.group === command.group)) {
        clearInterval(e.timer)
        e.provider.destroy()
      }
      const kept = editors.filter((x) => x.group !== command.group)
      editors.length = 0
      editors.push(...kept)
      return {}
    }
    case 'mcp':
      return await mcpLoad(command.rate, command.ms, command.slugs, command.maxInFlight)
    case 'health':
      return await healthProbe(command.ms, command.everyMs)
  }
}

await eachLine(Bun.stdin.stream(), (line) => {
  if (!line.trim()) return
  const command = JSON.parse(line) as Command
  void handle(command).then(
    (answer) => process.stdout.write(`${JSON.stringify({ id: command.id, ...answer })}\n`),
    (error: Error) =>
      process.stdout.write(`${JSON.stringify({ id: command.id, error: error.stack ?? String(error) })}\n`),
  )
})
for (const e of editors) {
  clearInterval(e.timer)
  e.provider.destroy()
}
await mcp?.close()
process.exit(0)
