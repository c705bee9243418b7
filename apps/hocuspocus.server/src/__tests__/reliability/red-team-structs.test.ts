/**
 * A document's Yjs items are what holding, loading and reading it cost, and its bytes do not bound them
 * (issue 24, "limit work, not bytes"): one character typed before the last, again and again, is an item of
 * ~11 bytes of state, so the 64 MiB state limit let one document reach ~6 million of them (~1.3 GB of
 * heap live, ~6 s to apply on load), built by one user within their share of structs in five minutes.
 * Now a change that would take a document past MAX_DOCUMENT_STRUCTS is refused, editors' and agents'
 * alike, and deleting still works. Asserted at the real ceiling, on an in-process server: the document is
 * brought to it server-side (as though built over minutes), then an editor's insertion is refused with the
 * reason and nobody sees it, another editor's deletion is applied, and an agent's write is refused with
 * what to do. red-team-structs.slow.test.ts builds it as the attacker would, through a provider, on the
 * server process, and measures what others feel.
 */
import { describe, expect, test } from 'bun:test'
import { documentStructs, FRAGMENT_NAME, MAX_DOCUMENT_STRUCTS } from '@collab/doc-schema'
import { fillToItemLimit } from '@collab/test-support/documents'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import type { RunningServer } from '../../server.ts'

/** The first paragraph's text of a document's fragment. */
function firstText(doc: Y.Doc): Y.XmlText {
  const paragraph = doc
    .getXmlFragment(FRAGMENT_NAME)
    .toArray()
    .find((node): node is Y.XmlElement => node instanceof Y.XmlElement && node.nodeName === 'paragraph')
  if (!paragraph) throw new Error('no paragraph')
  return paragraph.get(0) as Y.XmlText
}

describe('a document at its item limit', () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test("an editor's insertion is refused with the reason, a deletion still applies, an agent's write is refused", async () => {
    const mallory = await userWithToken(server, 'mallory')
    const created = await server.services.documents.create(mallory.user.id, {
      title: 'Full',
      markdown: 'first words here',
    })
    if (created.kind === 'error') throw new Error(created.message)
    const { room, slug } = created.value
    const writer = connectProvider(server.url, room, mallory.token)
    const deleter = connectProvider(server.url, room, mallory.token)
    try {
      await Promise.all([writer.ready, deleter.ready])
      const live = server.collab.hocuspocus.documents.get(room)
      if (!live) throw new Error('not live')
      // At its ceiling, as though built over minutes (the boundary counted none of it).
      fillToItemLimit(live)
      expect(documentStructs(live)).toBe(MAX_DOCUMENT_STRUCTS)
      await eventually(() => expect(firstText(deleter.doc).length).toBe(firstText(live).length), 30_000)

      // An editor's insertion: closed with the reason, never applied.
      const closes: string[] = []
      writer.provider.on('close', ({ event }: { event: { reason: string } }) => closes.push(event.reason))
      firstText(writer.doc).insert(firstText(writer.doc).length, '!')
      await eventually(() => expect(closes.length).toBeGreaterThan(0), 10_000)
      expect(closes[0]).toContain(`limit of ${MAX_DOCUMENT_STRUCTS.toLocaleString('en-US')} items`)
      expect(closes[0]).toContain('import that as a new document')
      expect(firstText(live).toString()).not.toContain('!')
      expect(server.metrics.editorRefusals.get({ kind: 'document_structs' })).toBeGreaterThan(0)

      // Another editor's deletion: applied (deleting adds no items).
      const before = firstText(live).length
      firstText(deleter.doc).delete(0, 3)
      await eventually(() => expect(firstText(live).length).toBe(before - 3), 10_000)

      // An agent's write: refused, naming what the document holds, its limit and what to do.
      const client = await connectClient(mcpUrlOf(server), mallory.token)
      try {
        const answer = await call(client, 'append_to_document', { slug, markdown: 'more words' })
        expect(answer.isError).toBe(true)
        expect(answer.text).toContain('Yjs items')
        expect(answer.text).toContain(`its limit is ${MAX_DOCUMENT_STRUCTS.toLocaleString('en-US')}`)
        expect(answer.text).toContain('import that as a new document')
        expect(
          firstText(live).toString().includes('more words') ||
            live.getXmlFragment(FRAGMENT_NAME).toString().includes('more words'),
        ).toBe(false)
      } finally {
        await client.close()
      }
    } finally {
      writer.destroy()
      deleter.destroy()
    }
  }, 60_000)
})
