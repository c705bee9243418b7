/**
 * Every MCP request that does work is rate-limited per user (issue 24: completion requests were not).
 * Through the running server and real SDK clients over HTTP, with MCP_CALLS_PER_MINUTE = 3:
 * - completion/complete has its own count of 3 a minute: the fourth is refused with JSON-RPC error -32000
 *   saying when to retry (data.retryAfterSeconds), and neither count uses up the other (a person typing
 *   in a picker does not stop the agent's tool calls);
 * - resources/read and prompts/get share the tool calls' count, and over it are refused with -32000 and
 *   the tool calls' wording (they were -32602 "Invalid params", which tells a client its request was wrong);
 *   resources/list (a page of find_documents' query) was not limited at all and now counts as a call.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { call, refusalOf, useMcpClients } from '@collab/test-support/mcp'
import { useTestServer } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { RATE_LIMITED_ERROR_CODE, WINDOW_MS } from '../infra/rate-limit.ts'
import { DOCUMENT_TEMPLATE, documentUri } from '../resources/uris.ts'
import { toolCallCount } from './setup.ts'

const LIMIT = 3

let server: RunningServer
useTestServer(
  (s) => {
    server = s
  },
  { mcpCallsPerMinute: LIMIT },
)
const clients = useMcpClients(() => server)

/** Each test needs its counts to stay in one wall-clock minute: do not start just before it turns. */
async function awayFromMinuteEnd() {
  const msLeft = WINDOW_MS - (Date.now() % WINDOW_MS)
  if (msLeft < 8_000) await Bun.sleep(msLeft + 50)
}

const completeSlug = (client: Client, value: string) =>
  client.complete({
    ref: { type: 'ref/resource', uri: DOCUMENT_TEMPLATE },
    argument: { name: 'slug', value },
  })

const metric = (tool: string, outcome: string) => toolCallCount(server, tool, outcome)

async function userWithDocument(handle: string) {
  const made = await clients.user(handle)
  const created = await server.services.documents.create(made.user.id, { title: `${handle} notes` })
  if (created.kind === 'error') throw new Error(created.message)
  return { ...made, slug: created.value.slug }
}

describe(`requests that do work are rate-limited per user (${DATABASE_KIND})`, () => {
  test('completion/complete has its own count; over it, -32000 says when to retry', async () => {
    const { client, slug } = await userWithDocument('picker')
    await awayFromMinuteEnd()
    for (let i = 0; i < LIMIT; i++) {
      expect((await completeSlug(client, slug.slice(0, 2))).completion.values).toContain(slug)
    }
    let refused: unknown
    try {
      await completeSlug(client, slug.slice(0, 2))
    } catch (error) {
      refused = error
    }
    const error = refused as { code?: number; message?: string; data?: { retryAfterSeconds?: number } }
    expect(error?.code).toBe(RATE_LIMITED_ERROR_CODE)
    expect(error.message).toMatch(
      new RegExp(`rate limit: ${LIMIT} completion requests per minute; try again in \\d+ s\\.$`),
    )
    const wait = error.data?.retryAfterSeconds ?? 0
    expect(wait).toBeGreaterThanOrEqual(1)
    expect(wait).toBeLessThanOrEqual(60)
    // A section_id completion is counted the same (both completers count before any work).
    const section = await refusalOf(
      client.complete({
        ref: { type: 'ref/prompt', name: 'review_section' },
        argument: { name: 'section_id', value: '' },
        context: { arguments: { slug } },
      }),
    )
    expect(section.code).toBe(RATE_LIMITED_ERROR_CODE)
    expect(await metric('completion/complete', 'rate_limited')).toBe(2)

    // The person's typing did not use up the agent's tool calls.
    expect((await call(client, 'find_documents', {})).isError).toBe(false)
  })

  test("tool calls used up leave completions alone, and completions use none of the tools' count", async () => {
    const { client, slug } = await userWithDocument('agent')
    await awayFromMinuteEnd()
    for (let i = 0; i < LIMIT; i++) expect((await call(client, 'find_documents', {})).isError).toBe(false)
    expect((await call(client, 'find_documents', {})).text).toMatch(/^rate limit: 3 tool calls per minute/)
    expect((await completeSlug(client, slug.slice(0, 2))).completion.values).toContain(slug)
  })

  test('resources/read and prompts/get share the tool calls’ count; over it they get -32000, not -32602', async () => {
    const { client, slug } = await userWithDocument('reader')
    await awayFromMinuteEnd()
    expect((await client.readResource({ uri: documentUri(slug) })).contents).toHaveLength(1)
    expect(
      (await client.getPrompt({ name: 'summarise_document', arguments: { slug } })).messages,
    ).toHaveLength(2)
    expect((await call(client, 'find_documents', {})).isError).toBe(false)

    const read = await refusalOf(client.readResource({ uri: documentUri(slug) }))
    expect(read.code).toBe(RATE_LIMITED_ERROR_CODE)
    expect(read.message).toMatch(/rate limit: 3 tool calls per minute; try again in \d+ s\.$/)
    const prompt = await refusalOf(client.getPrompt({ name: 'summarise_document', arguments: { slug } }))
    expect(prompt.code).toBe(RATE_LIMITED_ERROR_CODE)
    expect(prompt.message).toMatch(/rate limit: 3 tool calls per minute; try again in \d+ s\.$/)
    expect(await metric('resources/read', 'rate_limited')).toBe(2)
  })

  test('resources/list (a page of the find query) counts as a call too', async () => {
    const { client } = await userWithDocument('lister')
    await awayFromMinuteEnd()
    for (let i = 0; i < LIMIT; i++) expect((await client.listResources()).resources).toHaveLength(1)
    const listed = await refusalOf(client.listResources())
    expect(listed.code).toBe(RATE_LIMITED_ERROR_CODE)
    expect(listed.message).toMatch(/rate limit: 3 tool calls per minute; try again in \d+ s\.$/)
    expect(await metric('resources/list', 'rate_limited')).toBe(1)
  })
})
