/**
 * What the import red-team files share (red-team-imports.test.ts: the bombs; red-team-imports-large.slow.test.ts:
 * a 20 MiB file in and out): the real server process on a fresh database, its first-run token, a warmed
 * import route, and `observed`, which runs one request while another client types and a probe process asks
 * /health.
 */
import { beforeAll, expect } from 'bun:test'
import type { ServerProcess } from '@collab/test-support/process'
import { startProbe, startTyping, useMeasuredServer } from './red-team-support.ts'

export type ImportTarget = {
  readonly server: ServerProcess
  readonly token: string
  /** POST /api/documents of a Markdown body as the first-run user. */
  importFile(markdown: string): Promise<Response>
  /** While `work` runs, what another client sees (red-team-support.ts's probe, a process of its own). */
  observed<T>(work: () => Promise<T>): Promise<{
    result: T
    statuses: number[]
    probes: number
    p99Ms: number
    growth: number
    keystrokeP99Ms: number
  }>
}

/** Before the file's tests: the server process and a warmed import; after them, both gone. */
export function useImportTarget(): ImportTarget {
  const measured = useMeasuredServer()
  /** Another document, typed into while each attack runs (what a person elsewhere feels). */
  let typingRoom = ''
  const target: ImportTarget = {
    get server() {
      return measured.server
    },
    get token() {
      return measured.token
    },
    importFile: (markdown) =>
      fetch(`${target.server.url}/api/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${target.token}`, 'content-type': 'text/markdown' },
        body: markdown,
      }),
    async observed(work) {
      const typing = await startTyping(target.server.url, typingRoom, target.token)
      const probe = await startProbe(target.server.url, target.server.proc.pid)
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
    },
  }
  beforeAll(async () => {
    // Warm the import worker and the route, so the first request's figures are its own.
    const warm = await target.importFile('# Warm up\n\nhello')
    expect(warm.status).toBe(201)
    typingRoom = ((await warm.json()) as { room: string }).room
  }, 60_000)
  return target
}
