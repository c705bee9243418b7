/**
 * What the MCP tool tests share: the process's shared test server with one user of the file's connected to it over MCP
 * (or a server of the file's own, with its user), documents made through the service, and the lines of a framed answer.
 */
import { afterAll, beforeAll } from 'bun:test'
import { createTestDatabase, type TestDatabase } from '@collab/test-support/database'
import { connectClient, mcpUrlOf, useMcpClients } from '@collab/test-support/mcp'
import { readCounter, seriesValue } from '@collab/test-support/metrics'
import { userWithToken, useTestServer } from '@collab/test-support/server'
import { type ServerShare, useSharedServer } from '@collab/test-support/shared-server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { FRAME_END } from '../render/frame.ts'

export type McpUser = {
  server: RunningServer
  user: { id: string; handle: string }
  token: string
  client: Client
  /** `base` made this file's own on the shared server (`viewer` -> `viewer-f3`): for the file's other users. */
  handle(base: string): string
}

/**
 * Connects a new user to this process's shared server (test-support's `useSharedServer`) over MCP before
 * the file's tests; `ready` gets both. The user's handle is `handle` made the file's own (`alice` ->
 * `alice-f3`), and so is every handle given to the returned clients' `user`: files share the server, so a
 * file that uses this must not count server-wide things or expect to see only its own public documents.
 * Returns the file's MCP clients, for more users.
 */
export function useMcpUser(handle: string, ready: (made: McpUser) => void) {
  let share: ServerShare
  useSharedServer((s) => {
    share = s
  })
  const mcp = useMcpClients(() => share.server)
  beforeAll(async () => {
    const made = await mcp.user(share.handle(handle))
    ready({
      server: share.server,
      user: made.user,
      token: made.token,
      client: made.client,
      handle: share.handle,
    })
  })
  return {
    connect: mcp.connect,
    user: (base: string, scopes?: Array<'read' | 'write' | 'suggest'>) =>
      mcp.user(share.handle(base), scopes),
  }
}

/**
 * A server the file starts itself (`start`: the production wiring with its own logger or test seams) on a
 * fresh database before its tests; `ready` gets it. After them the clients pushed to the returned list are
 * closed, the server stops and its database is removed.
 */
export function useOwnServer(
  start: (db: TestDatabase) => Promise<RunningServer>,
  ready: (server: RunningServer) => void,
): Client[] {
  let db: TestDatabase | undefined
  let server: RunningServer | undefined
  const clients: Client[] = []
  beforeAll(async () => {
    db = await createTestDatabase()
    server = await start(db)
    ready(server)
  }, 60_000)
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {})
    await server?.stop()
    await db?.cleanup()
  }, 60_000)
  return clients
}

/**
 * A server of the file's own (`useTestServer`: a fresh database, for a file that counts server-wide things
 * such as the server's metrics) with one user `handle` connected to it over MCP before the file's tests;
 * `ready` gets both. Stopped, with its connections, after them.
 */
export function useOwnServerUser(handle: string, ready: (made: Omit<McpUser, 'handle'>) => void): void {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })
  beforeAll(async () => {
    const { user, token } = await userWithToken(server, handle)
    ready({ server, user, token, client: await connectClient(mcpUrlOf(server), token) })
  }, 60_000)
}

/** A new document of `ownerId`'s, made through the service (a refusal throws). */
export async function createDocument(
  server: RunningServer,
  ownerId: string,
  input: { title: string; markdown?: string; isPrivate?: boolean },
) {
  const created = await server.services.documents.create(ownerId, input)
  if (created.kind === 'error') throw new Error(created.message)
  return created.value
}

/** A framed answer's lines: before its opening line, the opening line, the body inside, and after its end line. */
export function frameLines(text: string) {
  const lines = text.split('\n')
  const open = lines.findIndex((l) => l.startsWith('⟦data: '))
  const end = lines.indexOf(FRAME_END)
  return {
    before: lines.slice(0, open),
    open: lines[open]!,
    body: lines.slice(open + 1, end),
    after: lines.slice(end + 1),
  }
}

/** A tools/call request's JSON-RPC body (without `arguments` when `args` is not given). */
export const callOf = (id: number | string, name: string, args?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: args === undefined ? { name } : { name, arguments: args },
})

/** What a POST to /mcp answered: its status, content type and body. */
export type McpAnswer = { status: number; type: string | null; body: string }

/**
 * A POST of `body` (JSON, or a string as it is) straight into an MCP router (no socket), with the headers
 * every POST must carry; `headers` adds or replaces some.
 */
export async function postTo(
  router: RunningServer['mcp']['router'],
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<McpAnswer> {
  const res = await router.request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() }
}

/** How many calls of `tool` ended `outcome`, as the server's /metrics counts them (0 before the first). */
export async function toolCallCount(server: RunningServer, tool: string, outcome: string): Promise<number> {
  return readCounter(server.url, `mcp_tool_calls_total{tool="${tool}",outcome="${outcome}"}`)
}

/** Where a read was made, as the read metrics label it. */
export type ReadWhere = 'inline' | 'worker' | 'kept'

/**
 * The server's count of reads by where they were made, from one of its `{where}` read metrics on /metrics
 * (mcp_whole_reads_total, mcp_section_reads_total); 0 before the first.
 */
export async function readsByWhere(
  server: RunningServer,
  metric: string,
): Promise<Record<ReadWhere, number>> {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  const count = (where: ReadWhere) => seriesValue(text, `${metric}{where="${where}"}`) ?? 0
  return { inline: count('inline'), worker: count('worker'), kept: count('kept') }
}
