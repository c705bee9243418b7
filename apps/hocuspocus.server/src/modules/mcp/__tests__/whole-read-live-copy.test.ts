/**
 * Whole reads of a live document that changes between reads (issue 24, the red team's edit before each
 * read): the documents' worker keeps a copy of the document and the event loop sends it only what changed,
 * where it encoded the whole state (~1/10 of the render) for every read. On a real server with a real MCP
 * client: after the first read, reads after edits send changes only (a few bytes an edit, never the whole
 * state again), and each answer is exactly what rendering the live document here gives, for seeded random
 * edits (text with and without marks, deletions, a mark removed from a range, paragraphs added and removed).
 * On the old code every read encoded and sent the whole state (and the service had no such count): fails.
 * A stored document whose snapshot is larger than one slice (STATE_SLICE_BYTES) is read in slices as base64
 * text and decoded on the worker: its whole read is the same text as decoding it here.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { seededRandom } from '@collab/doc-schema/test-builders'
import { alternatingMarkRuns } from '@collab/test-support/documents'
import { callText } from '@collab/test-support/mcp'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import * as Y from 'yjs'
import { STATE_SLICE_BYTES } from '../../../documents/sliced-read.ts'
import { applyStored } from '../../../documents/stored-parts.ts'
import type { RunningServer } from '../../../server.ts'
import { MAX_READ_CHARS } from '../limits.ts'
import { readWholeDocument } from '../render/whole-read.ts'
import { createDocument, frameLines, useOwnServerUser } from './setup.ts'

let server: RunningServer
let client: Client
let ownerId: string
let ownerToken: string
useOwnServerUser('copy-reader', (made) => {
  ;({ server, client, token: ownerToken } = made)
  ownerId = made.user.id
})

/** Whole numbers below `below`, from the tests' seeded generator: the same edits every run. */
function seeded(seed: number): (below: number) => number {
  const random = seededRandom(seed)
  return (below) => Math.floor(random() * below)
}

const MARKS = [{ bold: {} }, { italic: {} }, { code: {} }, {}]

/** One random edit of the document's paragraphs (never its heading). */
function randomEdit(doc: Y.Doc, random: (below: number) => number): void {
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const paragraphs = fragment.toArray().filter((node): node is Y.XmlElement => {
    return node instanceof Y.XmlElement && node.nodeName === 'paragraph'
  })
  const paragraph = paragraphs[random(paragraphs.length)]!
  const text = paragraph.get(0) as Y.XmlText
  const at = random(text.length + 1)
  switch (random(5)) {
    case 0:
      text.insert(at, `w${random(1000)} `, MARKS[random(MARKS.length)])
      break
    case 1:
      text.delete(Math.min(at, Math.max(0, text.length - 1)), Math.min(1 + random(30), text.length - at))
      break
    case 2:
      text.format(at, 1 + random(40), { bold: null })
      break
    case 3: {
      const added = new Y.XmlElement('paragraph')
      const inner = new Y.XmlText()
      added.insert(0, [inner])
      inner.insert(0, `new paragraph ${random(1000)}`, MARKS[random(MARKS.length)])
      fragment.insert(1 + random(fragment.length - 1), [added])
      break
    }
    default:
      if (paragraphs.length > 2) fragment.delete(fragment.toArray().indexOf(paragraph), 1)
      else text.insert(at, 'x', { italic: {} })
  }
}

describe("whole reads of a changing live document, on its copy on the documents' worker", () => {
  test('after the first read only the changes are sent; every answer equals the render here, over random edits', async () => {
    const created = await createDocument(server, ownerId, { title: 'Changing', markdown: 'hello' })
    const conn = await server.collab.hocuspocus.openDirectConnection(created.room, {})
    try {
      await conn.transact((doc) => {
        const text = new Y.XmlText()
        const paragraph = new Y.XmlElement('paragraph')
        paragraph.insert(0, [text])
        doc.getXmlFragment(FRAGMENT_NAME).push([paragraph])
        text.applyDelta(alternatingMarkRuns(3_000))
      })
      const live = server.collab.hocuspocus.documents.get(created.room)!
      const renderedHere = () => readWholeDocument(live.getXmlFragment(FRAGMENT_NAME), MAX_READ_CHARS).text
      const stateBytes = Y.encodeStateAsUpdate(live).byteLength
      const sent = () => server.services.documents.liveReadBytes()

      const before = sent()
      const first = await callText(client, 'read_document', { slug: created.slug })
      expect(first.isError, first.text.slice(0, 300)).toBeFalsy()
      expect(frameLines(first.text).body.join('\n')).toBe(renderedHere())
      const afterFirst = sent()
      // The first read of a document sends its whole state: the worker has no copy yet.
      expect(afterFirst.whole - before.whole).toBeGreaterThanOrEqual(stateBytes)

      const random = seeded(24)
      for (let round = 0; round < 15; round++) {
        await conn.transact((doc) => {
          for (let edits = 1 + random(3); edits > 0; edits--) randomEdit(doc, random)
        })
        const read = await callText(client, 'read_document', { slug: created.slug })
        expect(read.isError, read.text.slice(0, 300)).toBeFalsy()
        expect(frameLines(read.text).body.join('\n'), `round ${round}`).toBe(renderedHere())
      }
      const afterEdits = sent()
      // Fifteen reads of a changed document: no whole state sent again, and what was sent is a fraction
      // of one state (each read's changes are a few edits and the delete set).
      expect(afterEdits.whole).toBe(afterFirst.whole)
      expect(afterEdits.changes - afterFirst.changes).toBeGreaterThan(0)
      expect(afterEdits.changes - afterFirst.changes).toBeLessThan(stateBytes / 4)
    } finally {
      await conn.disconnect()
    }
  }, 120_000)
})

test('a stored document whose snapshot is larger than one slice: read in slices, decoded on the worker, the same text', async () => {
  const sentence = 'The quick brown fox jumps over the **lazy** dog while the server keeps every edit. '
  const parts = ['# Big manual\n']
  for (let i = 0; i < 1_100; i++) parts.push(`\n## Part ${i}\n\n${sentence.repeat(10)}\n`)
  const response = await fetch(`${server.url}/api/documents`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ownerToken}`, 'content-type': 'text/markdown' },
    body: parts.join(''),
  })
  expect(response.status, await response.clone().text()).toBe(201)
  const created = (await response.json()) as { room: string; slug: string }
  expect(server.collab.hocuspocus.documents.get(created.room)).toBeUndefined()
  const stored = await server.services.documents.loadStored(created.room)
  expect(stored!.snapshot!.byteLength).toBeGreaterThan(STATE_SLICE_BYTES)
  const doc = new Y.Doc()
  applyStored(doc, stored!)
  const expected = readWholeDocument(doc.getXmlFragment(FRAGMENT_NAME), MAX_READ_CHARS).text
  doc.destroy()
  const read = await callText(client, 'read_document', { slug: created.slug })
  expect(read.isError, read.text.slice(0, 300)).toBeFalsy()
  expect(frameLines(read.text).body.join('\n')).toBe(expected)
}, 120_000)
