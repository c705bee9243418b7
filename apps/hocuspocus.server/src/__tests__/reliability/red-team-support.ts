/**
 * What other clients feel while an attack runs, measured from a process of its own: a probe asking the
 * server's /health every 20 ms and reading its RSS from /proc, so the test process's own work (building an
 * attack's update, say) never shows up as the server's stall.
 */
import { afterAll, beforeAll } from 'bun:test'
import { join } from 'node:path'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { createTestDatabase, type TestDatabase } from '@collab/test-support/database'
import type { ServerProcess } from '@collab/test-support/process'
import { connectProvider } from '@collab/test-support/provider'
import * as Y from 'yjs'
import { varUint } from '../../documents/worker/frames.ts'
import { firstRunToken, spawnOn, stopProcess } from './faults-support.ts'

/**
 * What a server whose memory a test measures runs with: the allocator's default, as in production. `bun run
 * test` sets MIMALLOC_PURGE_DELAY=-1 for its processes (package.json): freed memory then stays with the
 * process instead of going back to the system page by page, which cost about a fifth of the suite's CPU
 * in this VM; RSS figures are measured without it.
 */
export const MEASURED_SERVER_ENV = {
  MIMALLOC_PURGE_DELAY: undefined,
  // SERVER_PROF=DIR: the server runs under Bun's CPU profiler and writes its profile there when it stops
  // (where the event loop was held during an attack; not set in CI).
  ...(process.env.SERVER_PROF ? { BUN_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.SERVER_PROF}` } : {}),
}

/**
 * Ordinary prose of about `bytes` characters of Markdown, in sections of two paragraphs (a large manual):
 * the large documents the red-team suites import (its Yjs state is ~1.1 times as large).
 */
export function prose(bytes: number): string {
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

/**
 * The real server process (MEASURED_SERVER_ENV, and `env`; under `wrap` when given, spawnServer) on a fresh
 * database, and its first-run token: started before the file's tests, stopped and removed after them. Read
 * both inside tests or later hooks.
 */
export function useMeasuredServer(options: { env?: Record<string, string>; wrap?: string[] } = {}): {
  readonly server: ServerProcess
  readonly token: string
} {
  let db: TestDatabase | undefined
  let server: ServerProcess | undefined
  let token = ''
  beforeAll(async () => {
    db = await createTestDatabase()
    server = await spawnOn(db, { ...MEASURED_SERVER_ENV, ...options.env }, { wrap: options.wrap })
    token = firstRunToken(db.dataDir)
  }, 60_000)
  afterAll(async () => {
    await stopProcess(server)
    await db?.cleanup()
  }, 60_000)
  return {
    get server() {
      if (!server) throw new Error('the server is not started (use it inside tests)')
      return server
    },
    get token() {
      return token
    },
  }
}

/** A new document of `token`'s user over REST (`markdown` its body, no title heading); its room. */
export async function newRoom(serverUrl: string, token: string, title: string): Promise<string> {
  const response = await fetch(`${serverUrl}/api/documents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title, markdown: 'first paragraph' }),
  })
  if (response.status !== 201)
    throw new Error(`creating "${title}": ${response.status} ${await response.text()}`)
  return ((await response.json()) as { room: string }).room
}

export type Probe = {
  /** Stops the probe and returns what it saw. */
  stop(): Promise<ProbeReport>
}

export type ProbeReport = {
  /** HTTP statuses /health answered (a failed request counts as 0). */
  statuses: number[]
  /** Requests made. */
  probes: number
  /** The 99th percentile of /health's answer time, in ms (a figure to report, never to assert). */
  p99Ms: number
  /** The server's largest RSS growth over its RSS when the probe started, in bytes. */
  rssGrowth: number
}

/**
 * The script the probe process runs: `bun -e SCRIPT URL PID`. It writes a line `probing` once its first
 * request is answered, stops at the first line on stdin and then writes its report (JSON) on one line.
 * With RELIABILITY_RSS_TRACE set to a file, it appends the server's RSS there about every 0.2 s (where a
 * run's peak came from).
 */
const SCRIPT = `
const [url, pid] = process.argv.slice(-2)
const trace = process.env.RELIABILITY_RSS_TRACE
const rss = () => { const m = /VmRSS:\\s+(\\d+) kB/.exec(require('fs').readFileSync('/proc/' + pid + '/status', 'utf8')); return Number(m?.[1] ?? 0) * 1024 }
const base = rss(); let peak = base; const latencies = []; const statuses = new Set(); let running = true
process.stdin.on('data', () => { running = false })
while (running) {
  const start = performance.now()
  try { const r = await fetch(url + '/health'); await r.arrayBuffer(); statuses.add(r.status) } catch { statuses.add(0) }
  latencies.push(performance.now() - start)
  if (latencies.length === 1) process.stdout.write('probing\\n')
  const now = rss()
  peak = Math.max(peak, now)
  if (trace && latencies.length % 10 === 0) require('fs').appendFileSync(trace, (performance.now() / 1000).toFixed(2) + ' s rss ' + (now >> 20) + ' MiB\\n')
  await Bun.sleep(20)
}
latencies.sort((a, b) => a - b)
const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0
process.stdout.write(JSON.stringify({ statuses: [...statuses], probes: latencies.length, p99Ms: Math.round(p99), rssGrowth: peak - base }))
process.exit(0)
`

/** Starts probing the server at `url` (process `pid`); resolves once the first answer is in. */
export async function startProbe(url: string, pid: number): Promise<Probe> {
  const proc = Bun.spawn(['bun', '-e', SCRIPT, url, String(pid)], {
    cwd: join(import.meta.dir),
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  // Its first answer is in (the line it writes then), so what follows is measured.
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let out = ''
  while (!out.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the probe ended before its first answer: ${out}`)
    out += decoder.decode(value, { stream: true })
  }
  return {
    async stop() {
      proc.stdin.write('stop\n')
      await proc.stdin.flush()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        out += decoder.decode(value, { stream: true })
      }
      await proc.exited
      return JSON.parse(out.slice(out.indexOf('\n') + 1)) as ProbeReport
    },
  }
}

export type Typing = {
  /**
   * Stops typing; returns how many keystrokes reached the other editor (`keystrokes`), how many had not 2 s
   * after the typing stopped (`unseen`), and the p99 of how long each took, an unseen one counted as at
   * least as long as it had waited (so a stalled delivery raises the figure instead of leaving it).
   */
  stop(): Promise<{ keystrokes: number; unseen: number; p99Ms: number }>
}

/** Typists started by this process (each marks its keystrokes with its own number). */
let typists = 0

/**
 * Two real providers on `room`: one types a character every 50 ms, the other receives it; the time from
 * one to the other is what a person in another document feels while an attack runs (both run in the test
 * process, which only waits meanwhile).
 */
export async function startTyping(serverUrl: string, room: string, token: string): Promise<Typing> {
  const typist = connectProvider(serverUrl, room, token)
  const reader = connectProvider(serverUrl, room, token)
  await Promise.all([typist.ready, reader.ready])
  const line = new Y.XmlText('typed: ')
  const paragraph = new Y.XmlElement('paragraph')
  paragraph.insert(0, [line])
  typist.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph])
  const sentAt = new Map<string, number>()
  const latencies: number[] = []
  let seen = ''
  reader.doc.on('update', () => {
    const text = reader.doc.getXmlFragment(FRAGMENT_NAME).toString()
    for (const [mark, at] of sentAt) {
      if (text.includes(mark) && !seen.includes(mark)) {
        latencies.push(performance.now() - at)
        sentAt.delete(mark)
      }
    }
    seen = text
  })
  let typing = true
  let n = 0
  // Marks unique to this typist: a room is typed into again by later rounds, and a mark already in its text
  // (an earlier round's `k0.`) was never seen arriving, so each round's first keystrokes were left out.
  const run = `t${++typists}-`
  const loop = (async () => {
    while (typing) {
      const mark = `${run}k${n++}.`
      sentAt.set(mark, performance.now())
      typist.doc.transact(() => line.insert(line.length, mark))
      await Bun.sleep(50)
    }
  })()
  return {
    async stop() {
      typing = false
      await loop
      // The last keystrokes arrive (each seen one leaves sentAt); one that has not come once 2 s have
      // passed is counted as unseen, with the time it waited as its least latency.
      const end = Date.now() + 2_000
      while (sentAt.size > 0 && Date.now() < end) await nextUpdate(reader.doc, end - Date.now())
      typist.destroy()
      reader.destroy()
      const keystrokes = latencies.length
      const now = performance.now()
      for (const at of sentAt.values()) latencies.push(now - at)
      latencies.sort((a, b) => a - b)
      const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0
      return { keystrokes, unseen: sentAt.size, p99Ms: Math.round(p99) }
    },
  }
}

/** Resolves at `doc`'s next update (its earlier listeners have run), or after `ms`. */
function nextUpdate(doc: Y.Doc, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      doc.off('update', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    doc.on('update', done)
  })
}

export { varUint }
export const varBytes = (bytes: Uint8Array) => [...varUint(bytes.length), ...bytes]
export const varString = (text: string) => varBytes(new TextEncoder().encode(text))

/** Reads a varint at `at`: its value and where the next field starts. */
export function readVarUint(data: Uint8Array, at: number): [number, number] {
  let n = 0
  let scale = 1
  let next = at
  for (;;) {
    const byte = data[next++]!
    n += (byte & 0x7f) * scale
    if (byte < 0x80) return [n, next]
    scale *= 128
  }
}
