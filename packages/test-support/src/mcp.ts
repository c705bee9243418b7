/**
 * Real MCP SDK clients against a test server's production wiring: Streamable HTTP on the server's own
 * port (`${server.url}/mcp`), or in memory through the module's stdio path.
 */
import { afterAll, beforeAll } from 'bun:test'
import type { RunningServer } from '@collab/hocuspocus.server/src/server.ts'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { type CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js'
import { userWithToken, useTestServer } from './server.ts'
import { useSharedServer } from './shared-server.ts'

/** Where a server serves MCP over HTTP: the same port as everything else, as in production. */
export const mcpUrlOf = (server: Pick<RunningServer, 'url'>) => `${server.url}/mcp`

export async function connectClient(mcpUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  })
  await client.connect(transport)
  return client
}

/**
 * MCP clients over HTTP for one test file, all closed after its tests: `connect(token)`, or `user(handle)`
 * for a new user with a token (read and write unless `scopes` says otherwise) and a client of theirs;
 * `userOnce(handle)` the same user and client for every test of the file that names that handle.
 */
export function useMcpClients(server: () => RunningServer) {
  const clients: Client[] = []
  afterAll(async () => {
    for (const client of clients.splice(0)) await client.close()
  }, 60_000)
  const connect = async (token: string): Promise<Client> => {
    const client = await connectClient(mcpUrlOf(server()), token)
    clients.push(client)
    return client
  }
  const user = async (handle: string, scopes?: Array<'read' | 'write' | 'suggest'>) => {
    const made = await userWithToken(server(), handle, scopes)
    return { ...made, client: await connect(made.token) }
  }
  const once = new Map<string, ReturnType<typeof user>>()
  return {
    connect,
    user,
    userOnce(handle: string) {
      if (!once.has(handle)) once.set(handle, user(handle))
      return once.get(handle)!
    },
  }
}

/**
 * A client linked in memory to a server the module builds for this token (its stdio path with an
 * in-memory transport): the tools without HTTP, whose cost the bench measures on its own.
 */
export async function connectInMemory(server: RunningServer, token: string): Promise<Client> {
  const principal = await server.services.tokens.verify(token)
  if (!principal) throw new Error('connectInMemory: the token is not valid')
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.mcp.connectStdio(principal, serverSide)
  const client = new Client({ name: 'mcp-in-memory', version: '1.0.0' })
  await client.connect(clientSide)
  return client
}

/** The JSON-RPC error a request is refused with (fails when it is answered, or fails otherwise). */
export async function refusalOf(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message }
    throw error
  }
  throw new Error('expected a refusal')
}

/** Calls a tool and returns its single text part (and whether it is an error). */
export async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const part = result.content[0]
  return { text: part?.type === 'text' ? part.text : '', isError: result.isError === true, result }
}

/** Calls a tool and returns every text part joined by newlines (and whether it is an error). */
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

export type RecordedUser = { server: RunningServer; user: { id: string }; rc: RecordingClient }

/**
 * The file's test server and one new user `handle` on it over MCP with a recording client: `ready` gets
 * them before the file's own hooks and tests; the client closes after them. `shared`: on the process's
 * shared server (shared-server.ts; the handle made the file's own) instead of a server of the file's own.
 */
export function useRecordingUser(
  handle: string,
  ready: (made: RecordedUser) => void,
  options: { shared?: boolean } = {},
): void {
  let server: RunningServer
  let rc: RecordingClient | undefined
  let own = handle
  if (options.shared)
    useSharedServer((share) => {
      server = share.server
      own = share.handle(handle)
    })
  else
    useTestServer((s) => {
      server = s
    })
  beforeAll(async () => {
    const made = await userWithToken(server, own)
    rc = await connectRecording(mcpUrlOf(server), made.token)
    ready({ server, user: made.user, rc })
  }, 60_000)
  afterAll(async () => {
    await rc?.close()
  }, 60_000)
}
