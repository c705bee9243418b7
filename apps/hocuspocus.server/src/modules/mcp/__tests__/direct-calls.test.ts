/**
 * A single plain tool call over HTTP is run by the route without an McpServer and transport
 * (http/mcp-route.ts, tools/register.ts callToolDirectly). Its answers must be the SDK's, byte for byte:
 * each request goes to the server's module (direct calls on) and to a second module over the same
 * services with direct calls off (every call through the SDK), and the answers are compared.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import { createLogger } from '../../../logger.ts'
import type { RunningServer } from '../../../server.ts'
import { init } from '../module.ts'
import { callOf, type McpAnswer, postTo } from './setup.ts'

let server: RunningServer
/** What the file's tests share, made before them. */
const the = {} as {
  sdkOnly: ReturnType<typeof init>
  /** Tokens: the owner's (read and write), a reader's, and one of a user the document is not shared with. */
  writer: string
  reader: string
  stranger: string
  slug: string
  privateSlug: string
  sectionId: string
  editor: TestProvider
}

let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})

beforeAll(async () => {
  the.sdkOnly = init({
    services: server.services,
    chatPosting: server.chatPosting,
    hocuspocus: server.collab.hocuspocus,
    logger: createLogger('silent'),
    config: { directToolCalls: false },
  })
  const owner = await userWithToken(server, handle('direct-owner'))
  the.writer = owner.token
  the.reader = (await userWithToken(server, handle('direct-reader'), ['read'])).token
  the.stranger = (await userWithToken(server, handle('direct-stranger'))).token
  const headings = Array.from({ length: 40 }, (_, i) => `## Part ${i}\n\nText of part ${i} with lighthouse.`)
  const created = await server.services.documents.create(owner.user.id, {
    title: 'Direct calls',
    markdown: headings.join('\n\n'),
    isPrivate: false,
  })
  if (created.kind === 'error') throw new Error(created.message)
  the.slug = created.value.slug
  const hidden = await server.services.documents.create(owner.user.id, { title: 'Hidden', isPrivate: true })
  if (hidden.kind === 'error') throw new Error(hidden.message)
  the.privateSlug = hidden.value.slug
  // An editor keeps the document live: its outline comes from the memo and its answer is kept.
  the.editor = connectProvider(server.url, created.value.room, the.writer)
  await the.editor.ready
  const outline = await post(the.writer, callOf(1, 'get_outline', { slug: the.slug }))
  const id = / \[([\w-]+) ~[\d.]+[kM]?\]/.exec(outline.body)?.[1] // the first heading's printed id
  if (!id) throw new Error(`no section in ${outline.body.slice(0, 300)}`)
  the.sectionId = id
})
afterAll(() => the.editor?.destroy())

const post = (
  token: string,
  body: unknown,
  router = server.mcp.router,
  headers: Record<string, string> = {},
) => postTo(router, token, body, headers)

/** The same request to both modules: the answers must be equal in every byte and header that matters. */
async function same(token: string, body: unknown, headers?: Record<string, string>): Promise<McpAnswer> {
  const direct = await post(token, body, server.mcp.router, headers)
  const sdk = await post(token, body, the.sdkOnly.router, headers)
  expect(direct).toEqual(sdk)
  return direct
}

describe('tool calls answered by the route itself', () => {
  test('reads, refusals and searches: the same bytes as the SDK gives', async () => {
    // A warm outline twice (the second is the kept answer and its kept JSON), with two ids.
    const outline = await same(the.writer, callOf(2, 'get_outline', { slug: the.slug }))
    expect(outline.body).toContain('Part 39')
    expect((await same(the.writer, callOf('two', 'get_outline', { slug: the.slug }))).body).toContain(
      '"id":"two"',
    )
    await same(the.writer, callOf(3, 'get_outline', { slug: the.slug }))
    await same(the.reader, callOf(4, 'get_outline', { slug: the.slug, start: 20 }))
    await same(the.writer, callOf(5, 'read_document', { slug: the.slug, section_id: the.sectionId }))
    await same(the.writer, callOf(6, 'read_document', { slug: the.slug, max_chars: 300 }))
    await same(the.writer, callOf(7, 'find_documents', {}))
    await same(the.writer, callOf(8, 'find_sections', { query: 'lighthouse', slug: the.slug }))
    await same(the.writer, callOf(9, 'list_chat_rooms', { slug: the.slug }))
    await same(the.writer, callOf(10, 'read_chat_thread', { slug: the.slug, section_id: the.sectionId }))
    // Refusals the tools give (an answer with isError): the same words.
    const gone = await same(the.writer, callOf(11, 'get_outline', { slug: 'no-such-document' }))
    expect(gone.body).toContain('"isError":true')
    await same(the.stranger, callOf(12, 'get_outline', { slug: the.privateSlug }))
    await same(the.writer, callOf(13, 'read_document', { slug: the.slug, section_id: 'nosuchsection000' }))
    await same(
      the.writer,
      callOf(14, 'edit_blocks', { slug: the.slug, section_id: the.sectionId, rev: 'stale', markdown: 'x' }),
    )
  })

  test('what the route leaves to the SDK is answered as the SDK answers it', async () => {
    // Arguments the schema refuses, a missing argument, an unknown tool, a tool outside the scopes.
    const refused = await same(the.writer, callOf(20, 'get_outline', { slug: 42 }))
    expect(refused.body).toContain('slug')
    await same(the.writer, callOf(21, 'get_outline'))
    await same(the.writer, callOf(22, 'no_such_tool', {}))
    await same(the.reader, callOf(23, 'append_to_document', { slug: the.slug, markdown: 'no' }))
    // A request with more than name and arguments, a batch, an id the route does not echo itself.
    await same(the.writer, {
      ...callOf(24, 'get_outline', { slug: the.slug }),
      params: { name: 'get_outline', arguments: { slug: the.slug }, _meta: {} },
    })
    await same(the.writer, [callOf(25, 'get_outline', { slug: the.slug }), callOf(26, 'find_documents', {})])
    await same(the.writer, callOf(1.5, 'get_outline', { slug: the.slug }))
    // Headers the route's rules refuse (http/post-contract.ts) are refused alike on both paths.
    expect(
      (await same(the.writer, callOf(27, 'get_outline', { slug: the.slug }), { accept: 'application/json' }))
        .status,
    ).toBe(406)
    expect(
      (
        await same(the.writer, callOf(28, 'get_outline', { slug: the.slug }), {
          'mcp-protocol-version': '1999-01-01',
        })
      ).status,
    ).toBe(400)
  })

  test('a write answered directly lands once, as through the SDK', async () => {
    const appended = await post(
      the.writer,
      callOf(31, 'append_to_document', { slug: the.slug, markdown: 'Direct line' }),
    )
    expect(appended.status).toBe(200)
    expect(JSON.parse(appended.body).result.isError).toBeUndefined()
    await eventually(async () => {
      const read = await post(the.writer, callOf(32, 'read_document', { slug: the.slug, max_chars: 100_000 }))
      expect(read.body.match(/Direct line/g)).toHaveLength(1)
    })
    // The outline after the write (a new kept answer) is the SDK's too.
    await same(the.writer, callOf(33, 'get_outline', { slug: the.slug }))
  })
})
