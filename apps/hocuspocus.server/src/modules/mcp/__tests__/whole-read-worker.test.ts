/**
 * Whole reads whose render is dear run on the documents' worker (issue 24): a paragraph of thousands of
 * marks cost ~150 ms of the event loop per whole read at the render-work cap, and every other client
 * waited for it. On a real server with a real MCP client, for a live document (its state encoded, rendered
 * on the worker) and a stored one (its bytes sent as read, never decoded on the event loop):
 * - where each read was made, from the server's own count (`mcp_whole_reads_total{where}` on /metrics):
 *   dense content on the worker, small content inline, a repeat read of an unchanged document kept (live
 *   or stored), a changed one read anew;
 * - the text is exactly what rendering the same content on the event loop gives (readWholeDocument), cut
 *   by the render-work cap included, and an edit is in the next read.
 * On the old code every whole read rendered on the event loop, and no count says otherwise: these fail.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { alternatingMarkRuns } from '@collab/test-support/documents'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import * as Y from 'yjs'
import { applyStored } from '../../../documents/stored-parts.ts'
import type { RunningServer } from '../../../server.ts'
import { INLINE_READ_STRUCTS, MAX_READ_CHARS } from '../limits.ts'
import { notes } from '../render/notes.ts'
import { readWholeDocument } from '../render/whole-read.ts'
import { createDocument, frameLines, readsByWhere } from './setup.ts'

let server: RunningServer
let client: Client
let ownerId: string
useTestServer((s) => {
  server = s
})
beforeAll(async () => {
  const owner = await userWithToken(server, 'reader')
  ownerId = owner.user.id
  client = await connectClient(mcpUrlOf(server), owner.token)
}, 60_000)

/** The server's count of whole reads by where they were made. */
const wholeReads = () => readsByWhere(server, 'mcp_whole_reads_total')

/**
 * A paragraph of `runs` one-letter runs alternating bold and italic, written into the live document as one
 * delta (alternatingMarkRuns).
 */
async function denseDocument(title: string, runs: number) {
  const created = await createDocument(server, ownerId, { title, markdown: 'hello', isPrivate: true })
  const conn = await server.collab.hocuspocus.openDirectConnection(created.room, {})
  await conn.transact((doc) => {
    const text = new Y.XmlText()
    const paragraph = new Y.XmlElement('paragraph')
    paragraph.insert(0, [text])
    doc.getXmlFragment(FRAGMENT_NAME).push([paragraph])
    text.applyDelta(alternatingMarkRuns(runs))
  })
  return { ...created, conn }
}

/** The live document's whole read made here, on this thread: what the answer must equal. */
function renderedHere(room: string): string {
  const live = server.collab.hocuspocus.documents.get(room)
  if (!live) throw new Error(`${room} is not loaded`)
  return readWholeDocument(live.getXmlFragment(FRAGMENT_NAME), MAX_READ_CHARS).text
}

const bodyOf = (text: string) => frameLines(text).body.join('\n')

describe('whole reads of dense documents on the documents worker', () => {
  test('a live dense document: rendered on the worker, the same text as here; kept while unchanged; an edit is read anew', async () => {
    const dense = await denseDocument('Dense live', 2_000)
    try {
      const live = server.collab.hocuspocus.documents.get(dense.room)!
      let structs = 0
      for (const list of live.store.clients.values()) structs += list.length
      expect(structs).toBeGreaterThan(INLINE_READ_STRUCTS)
      const expected = renderedHere(dense.room)
      expect(expected).toContain('**a**_b_**c**_d_')

      const start = await wholeReads()
      const first = await callText(client, 'read_document', { slug: dense.slug })
      expect(first.isError, first.text.slice(0, 300)).toBeFalsy()
      expect(bodyOf(first.text)).toBe(expected)
      const afterFirst = await wholeReads()
      expect(afterFirst.worker - start.worker).toBe(1)
      expect(afterFirst.inline - start.inline).toBe(0)

      // Unchanged: the same answer, kept (nothing rendered again).
      const second = await callText(client, 'read_document', { slug: dense.slug })
      expect(second.text).toBe(first.text)
      const afterSecond = await wholeReads()
      expect(afterSecond.kept - afterFirst.kept).toBe(1)
      expect(afterSecond.worker).toBe(afterFirst.worker)

      // An edit: the next read shows it, rendered again on the worker.
      await dense.conn.transact((doc) => {
        const paragraph = doc.getXmlFragment(FRAGMENT_NAME).get(1) as Y.XmlElement
        ;(paragraph.get(0) as Y.XmlText).insert(0, 'EDITED ')
      })
      const third = await callText(client, 'read_document', { slug: dense.slug })
      expect(bodyOf(third.text)).toBe(renderedHere(dense.room))
      expect(third.text).toContain('EDITED ')
      const afterThird = await wholeReads()
      expect(afterThird.worker - afterSecond.worker).toBe(1)
    } finally {
      await dense.conn.disconnect()
    }
  })

  test('a stored dense document past the render-work cap: its stored bytes rendered on the worker, the same cut text and note as decoding it here', async () => {
    // 12,000 runs: past MAX_RENDER_WORK (30,000 units at three a run), so the read is cut by work.
    const dense = await denseDocument('Dense stored', 12_000)
    await dense.conn.disconnect()
    await eventually(
      () => expect(server.collab.hocuspocus.documents.get(dense.room)).toBeUndefined(),
      20_000,
      'the document unloaded',
    )
    const stored = await server.services.documents.loadStored(dense.room)
    const doc = new Y.Doc()
    applyStored(doc, stored!)
    const expected = readWholeDocument(doc.getXmlFragment(FRAGMENT_NAME), MAX_READ_CHARS)
    doc.destroy()
    expect(expected.byWork).toBe(true)

    const start = await wholeReads()
    const read = await callText(client, 'read_document', { slug: dense.slug })
    expect(read.isError, read.text.slice(0, 300)).toBeFalsy()
    const { body, after } = frameLines(read.text)
    expect(body.join('\n')).toBe(expected.text)
    expect(after).toEqual([notes.documentCutByWork(expected.text.length)])
    const afterRead = await wholeReads()
    expect(afterRead.worker - start.worker).toBe(1)
    expect(server.collab.hocuspocus.documents.get(dense.room)).toBeUndefined()

    const again = await callText(client, 'read_document', { slug: dense.slug })
    expect(again.text).toBe(read.text)
    const afterAgain = await wholeReads()
    expect(afterAgain.kept - afterRead.kept).toBe(1)

    // Stored content that changed (an edit stored, the document unloaded again) is read anew.
    const conn = await server.collab.hocuspocus.openDirectConnection(dense.room, {})
    await conn.transact((doc) => {
      const paragraph = doc.getXmlFragment(FRAGMENT_NAME).get(1) as Y.XmlElement
      ;(paragraph.get(0) as Y.XmlText).insert(0, 'STORED EDIT ')
    })
    await conn.disconnect()
    await eventually(
      () => expect(server.collab.hocuspocus.documents.get(dense.room)).toBeUndefined(),
      20_000,
      'the document unloaded again',
    )
    const edited = await callText(client, 'read_document', { slug: dense.slug })
    expect(edited.text).toContain('STORED EDIT ')
    const afterEdited = await wholeReads()
    expect(afterEdited.worker - afterAgain.worker).toBe(1)
    expect(afterEdited.kept).toBe(afterAgain.kept)
  }, 120_000)

  test('a small document is rendered on the event loop (a round trip through the worker would cost more)', async () => {
    const small = await createDocument(server, ownerId, { title: 'Small', markdown: 'a **short** note' })
    const start = await wholeReads()
    const read = await callText(client, 'read_document', { slug: small.slug })
    expect(bodyOf(read.text)).toContain('a **short** note')
    const after = await wholeReads()
    expect(after.inline - start.inline).toBe(1)
    expect(after.worker).toBe(start.worker)
  })
})
