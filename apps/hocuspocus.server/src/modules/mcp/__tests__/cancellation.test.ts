/**
 * Calls whose caller goes away stop (issue 24): the red team aborted 20 SSE calls and every one ran to
 * its end 11-13 s later, while others' /health waited. Through the real server and real HTTP requests,
 * a call is held at a named point (the server's fault seam, tools/context.ts HoldSeam) until the server
 * sees its caller go: the client's AbortController closing the request (a plain JSON call, a stream),
 * or an SDK client's notifications/cancelled sent in a POST of its own. Each must then stop at its next
 * check point: a held write is not applied (the document is read afterwards), a held read never renders
 * (its log line has no output), and the call is logged and counted as `cancelled`, not as an error.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { Writable } from 'node:stream'
import { DATABASE_KIND } from '@collab/test-support/database'
import { createLargeDocument } from '@collab/test-support/documents'
import { call, connectClient, connectInMemory, mcpUrlOf } from '@collab/test-support/mcp'
import { eventually, testConfig, userWithToken } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import pino from 'pino'
import { type RunningServer, startServer } from '../../../server.ts'
import type { HoldPoint } from '../tools/context.ts'
import { toolCallCount, useOwnServer } from './setup.ts'

type LogLine = { msg?: string; tool?: string; outcome?: string; outputChars?: number; err?: unknown }
const logLines: LogLine[] = []
const capture = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n')) if (line.trim()) logLines.push(JSON.parse(line))
    done()
  },
})

/** The next call reaching `point` is held there until its signal aborts; `armed` resolves when it arrives. */
const waiting = new Map<HoldPoint, (tool: string) => void>()
function arm(point: HoldPoint): Promise<string> {
  return new Promise((resolve) => waiting.set(point, resolve))
}

let server: RunningServer
let token: string
let slug: string
let largeSlug: string
const clients = useOwnServer(
  (db) =>
    startServer(testConfig(db), pino({ level: 'info', base: undefined }, capture), {
      mcpHold: async (point, { tool, signal }) => {
        const arrived = waiting.get(point)
        if (!arrived) return
        waiting.delete(point)
        arrived(tool)
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve()
          else signal.addEventListener('abort', () => resolve(), { once: true })
        })
      },
    }),
  (s) => {
    server = s
  },
)

beforeAll(async () => {
  const owner = await userWithToken(server, 'canceller')
  token = owner.token
  const created = await server.services.documents.create(owner.user.id, { title: 'Target' })
  if (created.kind === 'error') throw new Error(created.message)
  slug = created.value.slug
  // A large stored document (cold: not loaded in Hocuspocus), as the red team's slow whole reads.
  const chunk = Array.from({ length: 200 }, (_, i) => `Paragraph ${i} of a long document.`).join('\n\n')
  largeSlug = (await createLargeDocument(server, owner.user.id, 'Large', [chunk, chunk, chunk])).slug
}, 60_000)

async function client(): Promise<Client> {
  const made = await connectClient(mcpUrlOf(server), token)
  clients.push(made)
  return made
}

/** A tools/call POSTed as a raw request the test can abort; `progress` asks for a stream (SSE) answer. */
function post(name: string, args: Record<string, unknown>, signal: AbortSignal, progress = false) {
  return fetch(mcpUrlOf(server), {
    method: 'POST',
    signal,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name, arguments: args, ...(progress ? { _meta: { progressToken: 'p' } } : {}) },
    }),
  })
}

/** The log line of the one call of `tool` that ended `outcome` (waits for it). */
const lineOf = (tool: string, outcome: string) =>
  eventually(() => {
    const lines = logLines.filter(
      (l) => l.msg === 'mcp tool call' && l.tool === tool && l.outcome === outcome,
    )
    expect(lines).toHaveLength(1)
    return lines[0]!
  }, 20_000)

const metric = (tool: string, outcome: string) => toolCallCount(server, tool, outcome)

const documentText = async (reader: Client, which: string) =>
  (await call(reader, 'read_document', { slug: which })).text

describe(`aborted MCP calls stop their work (${DATABASE_KIND})`, () => {
  test('a write whose plain HTTP request the client aborts before it is applied is not applied', async () => {
    const held = arm('write')
    const abort = new AbortController()
    const request = post(
      'append_to_document',
      { slug, markdown: 'Written after the caller left.' },
      abort.signal,
    )
    request.catch(() => {})
    expect(await held).toBe('append_to_document')
    abort.abort()
    await expect(request).rejects.toThrow()

    const line = await lineOf('append_to_document', 'cancelled')
    expect(line.err).toBeUndefined() // stopped at the check point, not failed on the way
    expect(await metric('append_to_document', 'cancelled')).toBe(1)
    expect(await metric('append_to_document', 'error')).toBe(0)
    const reader = await client()
    expect(await documentText(reader, slug)).not.toContain('Written after the caller left.')
    // The same call with its caller still there is applied: the path itself writes.
    expect(
      (await call(reader, 'append_to_document', { slug, markdown: 'Written while waited for.' })).isError,
    ).toBe(false)
    expect(await documentText(reader, slug)).toContain('Written while waited for.')
  })

  test('a whole read of a large document whose SSE stream the client closes never renders', async () => {
    const readsBefore = await metric('read_document', 'ok')
    const held = arm('call')
    const abort = new AbortController()
    const request = post('read_document', { slug: largeSlug }, abort.signal, true)
    request.catch(() => {})
    expect(await held).toBe('read_document')
    abort.abort()
    await request.catch(() => {})

    const line = await lineOf('read_document', 'cancelled')
    // A read that ran to its end would have its output size in the line (outcome cancelled or not).
    expect(line.outputChars).toBeUndefined()
    expect(await metric('read_document', 'cancelled')).toBe(1)
    expect(await metric('read_document', 'ok')).toBe(readsBefore)
  })

  test('a cold whole read aborted while its large stored state loads is never decoded nor rendered', async () => {
    const before = await metric('read_document', 'cancelled')
    const held = arm('decode')
    const abort = new AbortController()
    const request = post('read_document', { slug: largeSlug }, abort.signal)
    request.catch(() => {})
    // Held with the stored state loaded (the document is not live): the call got past the rate limit.
    expect(await held).toBe('read_document')
    abort.abort()
    await request.catch(() => {})

    await eventually(async () => expect(await metric('read_document', 'cancelled')).toBe(before + 1), 20_000)
    const lines = logLines.filter((l) => l.tool === 'read_document' && l.outcome === 'cancelled')
    expect(lines.at(-1)?.outputChars).toBeUndefined()
    expect(lines.at(-1)?.err).toBeUndefined()
  })

  test("an SDK client's cancel (notifications/cancelled in its own POST) stops its held write", async () => {
    const sdk = await client()
    const held = arm('write')
    const abort = new AbortController()
    const pending = sdk.callTool(
      { name: 'append_to_document', arguments: { slug, markdown: 'Cancelled by the SDK client.' } },
      CallToolResultSchema,
      { signal: abort.signal },
    )
    pending.catch(() => {})
    expect(await held).toBe('append_to_document')
    abort.abort('the person pressed stop')
    await expect(pending).rejects.toThrow()

    await eventually(async () => expect(await metric('append_to_document', 'cancelled')).toBe(2), 20_000)
    expect(await metric('append_to_document', 'error')).toBe(0)
    expect(await documentText(sdk, slug)).not.toContain('Cancelled by the SDK client.')
  })

  test('over the stdio session, notifications/cancelled (the SDK signal) stops a held write', async () => {
    const before = await metric('append_to_document', 'cancelled')
    const session = await connectInMemory(server, token)
    clients.push(session)
    const held = arm('write')
    const abort = new AbortController()
    const pending = session.callTool(
      { name: 'append_to_document', arguments: { slug, markdown: 'Cancelled over stdio.' } },
      CallToolResultSchema,
      { signal: abort.signal },
    )
    pending.catch(() => {})
    expect(await held).toBe('append_to_document')
    abort.abort('stop')
    await expect(pending).rejects.toThrow()
    await eventually(
      async () => expect(await metric('append_to_document', 'cancelled')).toBe(before + 1),
      20_000,
    )
    expect(await documentText(session, slug)).not.toContain('Cancelled over stdio.')
  })

  test("a cancel names only its own caller's request: another token's call with the same id runs", async () => {
    const other = await userWithToken(server, 'bystander')
    const held = arm('call')
    const abort = new AbortController()
    const request = post('find_documents', {}, abort.signal)
    request.catch(() => {})
    await held
    // Another token cancels id 7 (the held request's id): nothing of the first caller stops.
    const cancel = await fetch(mcpUrlOf(server), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${other.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }),
    })
    expect(cancel.status).toBe(202)
    // The held call is still held (its signal not aborted); the client's own abort then stops it.
    expect(await metric('find_documents', 'cancelled')).toBe(0)
    abort.abort()
    await request.catch(() => {})
    await eventually(async () => expect(await metric('find_documents', 'cancelled')).toBe(1), 20_000)
  })
})
