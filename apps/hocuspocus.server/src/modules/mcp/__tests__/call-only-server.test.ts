/**
 * A POST holding only tool calls is served by a server that registers just the called tools (once the
 * caller's tool list is known): its answers must be the ones the full server gives. Each request is
 * sent before any tools/list (full server) and after one (call-only server), and the bodies compared.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { RunningServer } from '../../../server.ts'
import { callOf, postTo } from './setup.ts'

let server: RunningServer
let writer: string
let reader: string
let slug: string

let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
beforeAll(async () => {
  const owner = await userWithToken(server, handle('caller'))
  writer = owner.token
  reader = (await userWithToken(server, handle('reader'), ['read'])).token
  const created = await server.services.documents.create(owner.user.id, { title: 'Call only' })
  if (created.kind === 'error') throw new Error(created.message)
  slug = created.value.slug
})

/** A POST to the server's /mcp, its status and body. */
async function post(token: string, body: unknown): Promise<{ status: number; body: string }> {
  const answer = await postTo(server.mcp.router, token, body)
  return { status: answer.status, body: answer.body }
}

describe('tool calls served by a call-only server', () => {
  test('the same answers as the full server: a read, an unknown tool, a tool outside the scopes, a batch', async () => {
    const requests: Array<[string, unknown]> = [
      [writer, callOf(1, 'get_outline', { slug })],
      [writer, callOf(2, 'no_such_tool', {})],
      [reader, callOf(3, 'append_to_document', { slug, markdown: 'x' })],
      [writer, [callOf(4, 'find_documents', {}), callOf(5, 'get_outline', { slug: 'missing-slug' })]],
    ]
    const before = []
    for (const [token, body] of requests) before.push(await post(token, body))
    // Both scope sets' tool lists become known: from now on calls get the call-only server.
    for (const token of [writer, reader])
      expect((await post(token, { jsonrpc: '2.0', id: 9, method: 'tools/list' })).status).toBe(200)
    const after = []
    for (const [token, body] of requests) after.push(await post(token, body))
    expect(after).toEqual(before)
    // Each answered something real (not an error page): the read, the SDK's unknown-tool and scope errors.
    expect(before[0]!.body).toContain('Call only')
    expect(before[1]!.body).toContain('no_such_tool')
    expect(before[2]!.body).toContain('append_to_document')
  })
})
