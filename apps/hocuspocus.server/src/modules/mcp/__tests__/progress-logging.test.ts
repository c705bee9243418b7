/**
 * Progress and log messages with real SDK clients: over HTTP a call that carries a progress token gets a
 * stream with its stages before the answer (and the same answer as without one); over stdio (the module's
 * session path, in memory) logging/setLevel decides which log messages arrive. Failures caught: a client
 * asking for progress hears nothing (the route answers JSON, where notifications are dropped); the stream
 * is closed before the answer (the server closed as soon as the response started); setLevel ignored.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { connectInMemory, mcpUrlOf, useMcpClients } from '@collab/test-support/mcp'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  CallToolResultSchema,
  EmptyResultSchema,
  ErrorCode,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  McpError,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js'
import type { RunningServer } from '../../../server.ts'
import { documentUri } from '../resources/documents.ts'
import { LOGGER_NAME } from '../tools/report.ts'

let server: RunningServer
let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
const mcp = useMcpClients(() => server)
let client: Client
let token: string
let slug: string

beforeAll(async () => {
  const made = await mcp.user(handle('ada'))
  client = made.client
  token = made.token
  const created = await server.services.documents.create(made.user.id, {
    title: 'Plan',
    markdown: '## Goals\n\nShip it.\n\n## Risks\n\nNone yet.',
  })
  if (created.kind === 'error') throw new Error(created.message)
  slug = created.value.slug
})

/** The stages heard, without the once-a-second "still …" heartbeats a slow machine may add. */
const stagesOf = (heard: Progress[]) =>
  heard.map((p) => String(p.message)).filter((message) => !message.startsWith('still '))

/** Progress values must increase with every notification (the spec's rule). */
const increasing = (heard: Progress[]) =>
  heard.every((p, i) => i === 0 || p.progress > heard[i - 1]!.progress)

const textOf = (result: unknown) =>
  CallToolResultSchema.parse(result)
    .content.map((part) => (part.type === 'text' ? part.text : ''))
    .join('')

function recordLogs(target: Client): LoggingMessageNotification['params'][] {
  const logs: LoggingMessageNotification['params'][] = []
  target.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params)
  })
  return logs
}

describe('progress over HTTP', () => {
  test('a call with a progress token hears its stages, in order, then the same answer as without one', async () => {
    const plain = textOf(await client.callTool({ name: 'read_document', arguments: { slug } }))
    const heard: Progress[] = []
    const withProgress = textOf(
      await client.callTool({ name: 'read_document', arguments: { slug } }, undefined, {
        onprogress: (p) => heard.push(p),
      }),
    )
    expect(withProgress).toBe(plain)
    expect(stagesOf(heard)).toEqual([
      'opening the document',
      'rendering the document (at most 100000 characters)',
    ])
    expect(heard[0]?.progress).toBe(1)
    expect(increasing(heard)).toBe(true)
  })

  test('resources/read and prompts/get report progress too (the same read)', async () => {
    const heard: Progress[] = []
    const read = await client.readResource({ uri: documentUri(slug) }, { onprogress: (p) => heard.push(p) })
    expect(JSON.stringify(read.contents[0])).toContain('Ship it.')
    expect(stagesOf(heard).length).toBe(2)
    const prompted: Progress[] = []
    await client.getPrompt(
      { name: 'summarise_document', arguments: { slug } },
      { onprogress: (p) => prompted.push(p) },
    )
    expect(stagesOf(prompted)).toEqual(stagesOf(heard))
  })

  test('writes name their stage: create_document and append_to_document', async () => {
    const heard: Progress[] = []
    const onprogress = (p: Progress) => heard.push(p)
    const made = textOf(
      await client.callTool(
        { name: 'create_document', arguments: { title: 'Log', markdown: 'one' } },
        undefined,
        { onprogress },
      ),
    )
    const madeSlug = /slug: (\S+)/.exec(made)![1]!
    await client.callTool(
      { name: 'append_to_document', arguments: { slug: madeSlug, markdown: 'two' } },
      undefined,
      { onprogress },
    )
    expect(stagesOf(heard)).toEqual([
      'checking and storing 3 characters of Markdown',
      'adding and storing 3 characters of Markdown',
    ])
  })

  test('the route streams only when asked: JSON without a progress token, SSE with one', async () => {
    const post = (meta?: Record<string, unknown>) =>
      fetch(mcpUrlOf(server), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'read_document', arguments: { slug }, ...(meta ? { _meta: meta } : {}) },
        }),
      })
    const json = await post()
    expect(json.headers.get('content-type')).toStartWith('application/json')
    expect(((await json.json()) as { id: number }).id).toBe(7)
    const sse = await post({ progressToken: 'p-1' })
    expect(sse.headers.get('content-type')).toStartWith('text/event-stream')
    const events = (await sse.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { method?: string; id?: number; params?: unknown })
    // Progress notifications (two stages, and heartbeats if slow), then the answer, which ends the stream.
    const kinds = events.map((e) => e.method ?? `answer ${e.id}`)
    expect(kinds.at(-1)).toBe('answer 7')
    expect(kinds.slice(0, -1).every((k) => k === 'notifications/progress')).toBe(true)
    expect(kinds.length).toBeGreaterThanOrEqual(3)
    expect(events[0]!.params).toMatchObject({ progressToken: 'p-1', progress: 1 })
  })

  test('without setLevel a call sends no info messages (the default level is notice)', async () => {
    const logs = recordLogs(client)
    await client.callTool({ name: 'read_document', arguments: { slug } }, undefined, { onprogress: () => {} })
    expect(logs).toEqual([])
  })
})

describe('logging/setLevel over HTTP (stateless: one server per request)', () => {
  test('the level a token set holds for its later requests, and for no other token', async () => {
    const lin = await mcp.user(handle('lin'))
    const made = await server.services.documents.create(lin.user.id, { title: 'Lin', markdown: 'x' })
    if (made.kind === 'error') throw new Error(made.message)
    const linLogs = recordLogs(lin.client)
    const adaLogs = recordLogs(client)
    await lin.client.setLoggingLevel('info') // its own POST; each call below is another
    const asked = { onprogress: () => {} }
    await lin.client.callTool(
      { name: 'read_document', arguments: { slug: made.value.slug } },
      undefined,
      asked,
    )
    await client.callTool({ name: 'read_document', arguments: { slug } }, undefined, asked)
    expect(linLogs.map((l) => `${l.level} ${l.data}`)).toEqual([
      'info read_document: opening the document',
      'info read_document: rendering the document (at most 100000 characters)',
    ])
    expect(adaLogs).toEqual([])
  })
})

describe('logging/setLevel over stdio (one session)', () => {
  test('info shows each stage as a log message; warning hides them again', async () => {
    const session = await connectInMemory(server, token)
    try {
      const logs = recordLogs(session)
      await session.setLoggingLevel('info')
      await session.callTool({ name: 'read_document', arguments: { slug } })
      expect(logs).toEqual([
        { level: 'info', logger: LOGGER_NAME, data: 'read_document: opening the document' },
        {
          level: 'info',
          logger: LOGGER_NAME,
          data: 'read_document: rendering the document (at most 100000 characters)',
        },
      ])
      logs.length = 0
      await session.setLoggingLevel('warning')
      await session.callTool({ name: 'read_document', arguments: { slug } })
      expect(logs).toEqual([])
    } finally {
      await session.close()
    }
  })
})

describe('logging/setLevel with a level that does not exist', () => {
  // Caught: the SDK's schema refused it as -32603 (Internal error) with a raw zod dump, which tells the
  // caller neither that its input was wrong nor what it may send.
  const badLevel = (target: Client) =>
    target
      .request({ method: 'logging/setLevel', params: { level: 'loud' } }, EmptyResultSchema)
      .then(() => null)
      .catch((error: McpError) => error)

  for (const [transport, connect] of [
    ['HTTP', async () => (await mcp.user(handle('kai'))).client],
    ['stdio', () => connectInMemory(server, token)],
  ] as const) {
    test(`over ${transport}: -32602 Invalid params naming the valid levels`, async () => {
      const target = await connect()
      const error = await badLevel(target)
      expect(error).toBeInstanceOf(McpError)
      expect(error!.code).toBe(ErrorCode.InvalidParams)
      expect(error!.message).toContain(
        'level: "loud" is not a log level; use one of debug, info, notice, warning, error, critical, alert, emergency',
      )
      expect(error!.message).not.toContain('invalid_value') // no zod issue list
      if (transport === 'stdio') await target.close()
    })
  }
})
