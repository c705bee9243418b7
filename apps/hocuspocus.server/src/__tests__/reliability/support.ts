/**
 * Shared pieces of the reliability suites: one real server per file (real port, real database, MCP
 * mounted on the same port as in production), SDK clients over Streamable HTTP whose every HTTP answer is
 * recorded, the fast-check run parameters, and the figures each suite reports to docs/reliability.md.
 */
import { appendFileSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { RunningServer } from '../../server.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts'
import { startTestServer } from '../helpers/server.ts'

/** Full counts when RELIABILITY_FULL=1 (the `reliability` script); the quick ones in every `bun test`. */
export const FULL = process.env.RELIABILITY_FULL === '1'

/** Under CI the seed is fixed (a red CI always means a change, not luck); locally each run explores. */
export const CI_SEED = 20_261_129
export function runs(numRuns: number): { numRuns: number; seed?: number } {
  return process.env.CI ? { numRuns, seed: CI_SEED } : { numRuns }
}

export type ReliabilityServer = {
  server: RunningServer
  db: TestDatabase
  mcpUrl: string
  close(): Promise<void>
}

export async function startReliabilityServer(): Promise<ReliabilityServer> {
  const db = await createTestDatabase()
  const server = await startTestServer(db)
  return {
    server,
    db,
    mcpUrl: `${server.url}/mcp`,
    async close() {
      await server.stop()
      await db.cleanup()
    },
  }
}

/** One HTTP exchange as the client saw it. */
export type Exchange = { status: number; requestBytes: number }

export type RecordingClient = {
  client: Client
  /** Every HTTP answer this client received, in order. */
  exchanges: Exchange[]
  close(): Promise<void>
}

/** An SDK client over Streamable HTTP whose fetch records each answer's status and the request size. */
export async function connectRecording(mcpUrl: string, token: string): Promise<RecordingClient> {
  const exchanges: Exchange[] = []
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit) => {
    const body = init?.body
    const requestBytes = typeof body === 'string' ? Buffer.byteLength(body) : 0
    const response = await fetch(input, init)
    exchanges.push({ status: response.status, requestBytes })
    return response
  }
  const client = new Client({ name: 'reliability', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: recordingFetch as typeof fetch,
  })
  await client.connect(transport)
  return { client, exchanges, close: () => client.close() }
}

export async function callText(client: Client, name: string, args: unknown) {
  const result = (await client.callTool({
    name,
    arguments: args as Record<string, unknown>,
  })) as CallToolResult
  const text = result.content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .filter(Boolean)
    .join('\n')
  return { text, isError: result.isError === true, result }
}

/** Rejects after `ms` with a recognisable error, so a hang is a failure, not a stuck test. */
export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`HANG: ${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

/** GET /health on the real port. */
export async function healthStatus(server: RunningServer): Promise<number> {
  const response = await fetch(`${server.url}/health`)
  await response.arrayBuffer()
  return response.status
}

/**
 * Figures for docs/reliability.md: when RELIABILITY_FIGURES names a file, each suite appends one JSON
 * line per figure; scripts/reliability-report.ts runs the suites and rewrites the figures section.
 */
export function reportFigure(suite: string, figures: Record<string, unknown>): void {
  const target = process.env.RELIABILITY_FIGURES
  if (!target) return
  appendFileSync(target, `${JSON.stringify({ suite, ...figures, at: new Date().toISOString() })}\n`)
}
