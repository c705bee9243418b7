/**
 * Resources, prompts, completion and subscriptions follow read_document's access, cell by cell: every
 * role {owner, editor, viewer, stranger} × document {public, private, read-only, deleted}, with a read
 * token, through real SDK clients (HTTP, and a session for subscriptions). Where read_document answers,
 * resources/read and prompts/get answer with the same text (the prompt embeds it) and a subscription is
 * accepted; where it refuses, they refuse with -32002 and read_document's own words (so "no access" reads
 * like "not found"); completion never offers a slug read_document would refuse. Failures caught: any
 * second road to a document that skips documents/access.ts.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, connectInMemory, refusalOf, useMcpClients } from '@collab/test-support/mcp'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { DOCUMENT_TEMPLATE, documentUri } from '../resources/uris.ts'

const ROLES = ['owner', 'editor', 'viewer', 'stranger'] as const
const DOCS = ['public', 'private', 'read-only', 'deleted'] as const
type Role = (typeof ROLES)[number]
type DocKind = (typeof DOCS)[number]

let server: RunningServer
let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
const mcp = useMcpClients(() => server)
const clients = new Map<Role, Client>()
const tokens = new Map<Role, string>()
const slugs = new Map<DocKind, string>()

beforeAll(async () => {
  const ids = new Map<Role, string>()
  for (const role of ROLES) {
    const made = await userWithToken(server, handle(`res-${role}`), ['read'])
    ids.set(role, made.user.id)
    tokens.set(role, made.token)
    clients.set(role, await mcp.connect(made.token))
  }
  const { documents } = server.services
  for (const doc of DOCS) {
    const created = await documents.create(ids.get('owner')!, {
      title: `Access ${doc}`,
      markdown: '## Section\n\nsome text',
      isPrivate: doc !== 'public',
      readOnly: doc === 'read-only',
    })
    if (created.kind === 'error') throw new Error(created.message)
    slugs.set(doc, created.value.slug)
    await documents.share(created.value.slug, ids.get('editor')!, 'editor')
    await documents.share(created.value.slug, ids.get('viewer')!, 'viewer')
  }
  await documents.softDelete(slugs.get('deleted')!)
}, 60_000)

describe('every road to a document takes read_document’s access', () => {
  for (const role of ROLES) {
    test(`${role}: resources/read, prompts/get, completion and subscribe agree with read_document`, async () => {
      const client = clients.get(role)!
      const session = await connectInMemory(server, tokens.get(role)!)
      try {
        for (const doc of DOCS) {
          const slug = slugs.get(doc)!
          const uri = documentUri(slug)
          const direct = await call(client, 'read_document', { slug })
          const offered = await client.complete({
            ref: { type: 'ref/resource', uri: DOCUMENT_TEMPLATE },
            argument: { name: 'slug', value: slug },
          })
          const prompt = () => client.getPrompt({ name: 'summarise_document', arguments: { slug } })
          if (!direct.isError) {
            const read = await client.readResource({ uri })
            expect(JSON.stringify(read.contents[0])).toBe(
              JSON.stringify({ uri, mimeType: 'text/markdown', text: direct.text }),
            )
            expect(JSON.stringify((await prompt()).messages[1]?.content)).toContain(
              JSON.stringify(direct.text),
            )
            expect(await session.subscribeResource({ uri })).toEqual({})
          } else {
            for (const refused of [
              await refusalOf(client.readResource({ uri })),
              await refusalOf(prompt()),
              await refusalOf(session.subscribeResource({ uri })),
            ]) {
              expect(refused.code).toBe(-32002)
              // The SDK client prefixes "MCP error <code>: " once; the server's message is the tool's text.
              expect(refused.message).toBe(`MCP error -32002: ${direct.text}`)
            }
            expect(offered.completion.values).not.toContain(slug)
          }
        }
      } finally {
        await session.close()
      }
    })
  }

  test('the matrix has both outcomes (it tests something)', async () => {
    const stranger = clients.get('stranger')!
    expect((await call(stranger, 'read_document', { slug: slugs.get('public')! })).isError).toBe(false)
    expect((await call(stranger, 'read_document', { slug: slugs.get('private')! })).isError).toBe(true)
  })
})
