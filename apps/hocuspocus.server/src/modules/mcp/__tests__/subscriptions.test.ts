/**
 * resources/subscribe over a session (the stdio path, in memory) with real SDK clients: a subscriber is
 * told when another user's write to the document is stored; unsubscribing stops it; a stranger cannot
 * subscribe to a private document (the answer equals a missing one), so subscriptions leak no activity;
 * stateless HTTP does not offer them. Failures caught: no notification after a change; one after
 * unsubscribe; a subscription accepted without the read access a resources/read needs.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { call, connectInMemory, refusalOf, useMcpClients } from '@collab/test-support/mcp'
import { outlineIds } from '@collab/test-support/outline'
import { eventually } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import type { RunningServer } from '../../../server.ts'
import { documentUri, sectionUri } from '../resources/uris.ts'

let server: RunningServer
let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
const mcp = useMcpClients(() => server)
let ownerToken: string
let writer: Client
let strangerToken: string
let shared: string
let secret: string

beforeAll(async () => {
  const owner = await mcp.user(handle('owner'))
  ownerToken = owner.token
  const editor = await mcp.user(handle('editor'))
  writer = editor.client
  strangerToken = (await mcp.user(handle('stranger'), ['read'])).token
  const make = async (title: string) => {
    const created = await server.services.documents.create(owner.user.id, {
      title,
      markdown: '## Notes\n\nfirst',
    })
    if (created.kind === 'error') throw new Error(created.message)
    return created.value.slug
  }
  shared = await make('Shared plan')
  secret = await make('Secret plan')
  const sharing = await server.services.documents.share(shared, editor.user.id, 'editor')
  if (sharing.kind === 'error') throw new Error(sharing.message)
}, 60_000)

function recordUpdates(client: Client): string[] {
  const uris: string[] = []
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    uris.push(n.params.uri)
  })
  return uris
}

describe('subscriptions over a session', () => {
  test('a subscriber to a document and to a section hears of a change another user stored', async () => {
    const session = await connectInMemory(server, ownerToken)
    try {
      expect(session.getServerCapabilities()?.resources?.subscribe).toBe(true)
      const updates = recordUpdates(session)
      const uri = documentUri(shared)
      const [notes] = outlineIds((await call(session, 'get_outline', { slug: shared })).text).slice(1)
      await session.subscribeResource({ uri })
      await session.subscribeResource({ uri: sectionUri(shared, notes!) })
      const appended = await call(writer, 'append_to_document', { slug: shared, markdown: 'second' })
      expect(appended.isError).toBe(false)
      await eventually(() => expect(updates).toContain(uri))
      await eventually(() => expect(updates).toContain(sectionUri(shared, notes!)))
    } finally {
      await session.close()
    }
  })

  test('after unsubscribing, a change is not told (a later subscription to another document is)', async () => {
    const session = await connectInMemory(server, ownerToken)
    try {
      const updates = recordUpdates(session)
      const make = async (title: string) =>
        /slug: (\S+)/.exec((await call(session, 'create_document', { title, markdown: 'x' })).text)![1]!
      const left = await make('Left')
      const kept = await make('Kept')
      await session.subscribeResource({ uri: documentUri(left) })
      await session.unsubscribeResource({ uri: documentUri(left) })
      await call(session, 'append_to_document', { slug: left, markdown: 'changed after unsubscribe' })
      await session.subscribeResource({ uri: documentUri(kept) })
      await call(session, 'append_to_document', { slug: kept, markdown: 'changed while subscribed' })
      await eventually(() => expect(updates).toContain(documentUri(kept)))
      expect(updates).not.toContain(documentUri(left))
    } finally {
      await session.close()
    }
  })

  test('a stranger cannot subscribe to a private document: the same answer as a missing one', async () => {
    const session = await connectInMemory(server, strangerToken)
    try {
      const hidden = await refusalOf(session.subscribeResource({ uri: documentUri(secret) }))
      const missing = await refusalOf(session.subscribeResource({ uri: documentUri('no-such-doc') }))
      expect(hidden.code).toBe(-32002)
      expect(hidden.message.replace(secret, 'X')).toBe(missing.message.replace('no-such-doc', 'X'))
      const foreign = await refusalOf(session.subscribeResource({ uri: 'file:///etc/passwd' }))
      expect(foreign.message).toContain('uri:')
    } finally {
      await session.close()
    }
  })

  test('stateless HTTP does not offer subscriptions', async () => {
    const { client } = await mcp.user(handle('http-user'))
    expect(client.getServerCapabilities()?.resources?.subscribe).toBeUndefined()
  })
})
