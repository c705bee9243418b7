/**
 * Two server instances share live documents through Redis: an edit made through instance A reaches a
 * provider connected to instance B. Needs TEST_REDIS_URL and a shared PostgreSQL (TEST_DATABASE_URL);
 * .ci/run provides both.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, HEADING_ID_ATTR, isHeadingId, readPlainText } from '@collab/doc-schema'
import { appendParagraph } from '@collab/test-support/documents'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { connectProvider } from '@collab/test-support/provider'
import {
  editorsOnBoth,
  eventually,
  TWO_INSTANCES,
  userWithToken,
  useTwoTestServers,
} from '@collab/test-support/server'
import * as Y from 'yjs'

describe.skipIf(!TWO_INSTANCES)('two instances through Redis (postgres)', () => {
  const pair = useTwoTestServers()

  test('an edit through instance A reaches a provider on instance B, and back', async () => {
    const { onA, onB } = await editorsOnBoth(pair.a, pair.b, 'alice', 'Shared across instances')

    appendParagraph(onA.doc, 'written on A')
    await eventually(() =>
      expect(readPlainText(onB.doc.getXmlFragment(FRAGMENT_NAME))).toContain('written on A'),
    )
    appendParagraph(onB.doc, 'written on B')
    await eventually(() =>
      expect(readPlainText(onA.doc.getXmlFragment(FRAGMENT_NAME))).toContain('written on B'),
    )
    expect(Y.encodeStateVector(onA.doc)).toEqual(Y.encodeStateVector(onB.doc))
    onA.destroy()
    onB.destroy()
  })

  test('an update refused on A never reaches B; a heading id repaired on A is repaired on B', async () => {
    const {
      owner: alice,
      room,
      onA: attacker,
      onB,
    } = await editorsOnBoth(pair.a, pair.b, 'alice2', 'Boundary across instances')
    const reasons: string[] = []
    attacker.provider.on('close', ({ event }: { event: { reason: string } }) => reasons.push(event.reason))
    const fragment = attacker.doc.getXmlFragment(FRAGMENT_NAME)
    // A forged id on the title heading: instance A replaces it, and B's editor gets the replacement.
    attacker.doc.transact(() =>
      (fragment.get(0) as Y.XmlElement).setAttribute(HEADING_ID_ATTR, 'forged\n[note]'),
    )
    await eventually(() => {
      const id = (onB.doc.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement).getAttribute(HEADING_ID_ATTR)
      expect(isHeadingId(id)).toBe(true)
    })
    // Nesting past the ceiling: refused on A, so nothing spreads to B (before, it stopped both storing).
    let deep = new Y.XmlElement('paragraph')
    for (let i = 0; i < 200; i++) {
      const quote = new Y.XmlElement('blockquote')
      quote.insert(0, [deep])
      deep = quote
    }
    attacker.doc.transact(() => fragment.push([deep]))
    await eventually(() => expect(reasons.join('\n')).toContain('nested deeper'))
    // A later edit on A reaches B; Redis keeps A's order, so anything A had applied would be there too.
    const witness = connectProvider(pair.a.url, room, alice.token)
    await witness.ready
    appendParagraph(witness.doc, 'after the refusal')
    const onBFragment = onB.doc.getXmlFragment(FRAGMENT_NAME)
    await eventually(() => expect(readPlainText(onBFragment)).toContain('after the refusal'))
    witness.destroy()
    expect(onBFragment.toArray().some((c) => c instanceof Y.XmlElement && c.nodeName === 'blockquote')).toBe(
      false,
    )
    attacker.destroy()
    onB.destroy()
  })
  test('an agent write to a document nobody has open is answered once stored, not after the unload', async () => {
    // With Redis the unload that follows a write waits a second (the extension's disconnectDelay) before
    // it starts; the writer awaited the whole disconnect, so every such write took over a second.
    const owner = await userWithToken(pair.a, 'agentwriter')
    const created = await pair.a.services.documents.create(owner.user.id, {
      title: 'Closed',
      markdown: 'one',
    })
    if (created.kind === 'error') throw new Error(created.message)
    const { room, slug } = created.value
    const client = await connectClient(mcpUrlOf(pair.a), owner.token)
    try {
      const { hocuspocus } = pair.a.collab
      expect(hocuspocus.documents.has(room)).toBe(false)
      const written = await callText(client, 'append_to_document', { slug, markdown: 'written by the agent' })
      expect(written.isError, written.text).toBeFalsy()
      // Answered while the document is still on its way out: the answer did not wait for the unload.
      expect(hocuspocus.documents.has(room)).toBe(true)
      const stored = await pair.a.services.documents.loadState(room)
      const doc = new Y.Doc()
      Y.applyUpdate(doc, stored!.state!)
      expect(readPlainText(doc.getXmlFragment(FRAGMENT_NAME))).toContain('written by the agent')
      // The unload still happens, and a second write meanwhile is answered the same way.
      const again = await callText(client, 'append_to_document', { slug, markdown: 'and again' })
      expect(again.isError, again.text).toBeFalsy()
      await eventually(() => expect(hocuspocus.documents.has(room)).toBe(false), 10_000, 'the unload')
      const read = await callText(client, 'read_document', { slug })
      expect(read.text).toContain('written by the agent')
      expect(read.text).toContain('and again')
    } finally {
      await client.close()
    }
  })
})
