/**
 * Test harness: the real server (real database, real Hocuspocus), this module's router served on its own
 * port with Bun.serve, and real SDK clients over Streamable HTTP.
 */
import {
  appendMarkdown,
  createDocumentUpdate,
  FRAGMENT_NAME,
  readPlainText,
  readTitle,
} from '@collab/doc-schema'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import * as Y from 'yjs'
import { createTestDatabase, type TestDatabase } from '../../../__tests__/helpers/database.ts'
import { startTestServer } from '../../../__tests__/helpers/server.ts'
import { createLogger } from '../../../logger.ts'
import type { RunningServer } from '../../../server.ts'
import { init, type McpConfig } from '../index.ts'

export type Harness = {
  server: RunningServer
  router: ReturnType<typeof init>['router']
  module: ReturnType<typeof init>
  mcpUrl: string
  close(): Promise<void>
}

export async function startHarness(
  config: McpConfig = {},
  database: { postgresUrl?: string | null } = {},
): Promise<Harness & { db: TestDatabase }> {
  const db = await createTestDatabase(database)
  const server = await startTestServer(db)
  const module = init({
    services: server.services,
    hocuspocus: server.collab.hocuspocus,
    // As server.ts wires it: writes are confirmed by the persistence extension's store reports.
    confirmations: server.collab.persistence,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    config,
  })
  const { router } = module
  const http = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: router.fetch })
  return {
    db,
    server,
    router,
    module,
    mcpUrl: `http://127.0.0.1:${http.port}/mcp`,
    async close() {
      http.stop(true)
      await server.stop()
      await db.cleanup()
    },
  }
}

export async function connectClient(mcpUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  })
  await client.connect(transport)
  return client
}

/**
 * A client linked in memory to a server the module builds for this token (its stdio path with an
 * in-memory transport): the tools without HTTP, whose cost the bench measures on its own.
 */
export async function connectInMemory(h: Harness, token: string): Promise<Client> {
  const principal = await h.server.services.tokens.verify(token)
  if (!principal) throw new Error('connectInMemory: the token is not valid')
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await h.module.connectStdio(principal, serverSide)
  const client = new Client({ name: 'mcp-in-memory', version: '1.0.0' })
  await client.connect(clientSide)
  return client
}

/** Calls a tool and returns its single text part (and whether it is an error). */
export async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const part = result.content[0]
  return { text: part?.type === 'text' ? part.text : '', isError: result.isError === true, result }
}

/**
 * Creates a document and then grows it past the create-time Markdown ceiling by appending chunks,
 * storing the final state through the documents service (as the persistence step would).
 */
export async function createLargeDocument(
  server: RunningServer,
  ownerId: string,
  title: string,
  chunks: string[],
): Promise<{ slug: string; room: string }> {
  const created = await server.services.documents.create(ownerId, { title })
  if (created.kind === 'error') throw new Error(created.message)
  const doc = new Y.Doc()
  const base = createDocumentUpdate(title)
  if (base.kind === 'error') throw new Error(base.message)
  Y.applyUpdate(doc, base.value)
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  for (const chunk of chunks) {
    const appended = appendMarkdown(fragment, chunk)
    if (appended.kind === 'error') throw new Error(appended.message)
  }
  await server.services.documents.storeState(created.value.id, {
    state: Y.encodeStateAsUpdate(doc),
    title: readTitle(fragment),
    text: readPlainText(fragment),
  })
  doc.destroy()
  return { slug: created.value.slug, room: created.value.room }
}
