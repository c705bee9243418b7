/**
 * Section reads whose render is dear run on the documents' worker (issue 24): a section of one paragraph
 * of thousands of one-letter runs alternating bold and italic held the event loop ~150-260 ms for a read of
 * 2,000 characters (~900 ms for its first, its total measured too), and every other client waited. On a
 * real server with a real MCP client, where each read was made, from the server's own count
 * (`mcp_section_reads_total{where}` on /metrics):
 * - a dense section's read (cut, with its total and next block) is made on the worker, its answer exactly
 *   `renderSection` of the same content made here, on a copy in the test process: same rev, text, notes;
 * - a small section's read is made inline; a second read of the unchanged dense section is kept; after an
 *   edit it is made anew on the worker and shows the edit;
 * - a chapter read (with_subsections) of the dense section and a cold read of the stored document go to
 *   the worker too, with the same text as here;
 * - a cheap read cut before a dense block, whose total needs that block measured (one step of the loop
 *   for all of it), goes to the worker for it, with the same answer as here.
 * On the old code every section read rendered on the event loop and no count says otherwise: these fail.
 */
import { describe, expect, test } from 'bun:test'
import {
  type ChapterRender,
  FRAGMENT_NAME,
  listSections,
  renderChapter,
  renderSection,
  type SectionRender,
} from '@collab/doc-schema'
import { alternatingMarkRuns } from '@collab/test-support/documents'
import { callText } from '@collab/test-support/mcp'
import { eventually } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import * as Y from 'yjs'
import { applyStored } from '../../../documents/stored-parts.ts'
import type { RunningServer } from '../../../server.ts'
import { notes } from '../render/notes.ts'
import { createDocument, frameLines, type ReadWhere, readsByWhere, useOwnServerUser } from './setup.ts'

let server: RunningServer
let client: Client
let ownerId: string
useOwnServerUser('sections', (made) => {
  ;({ server, client } = made)
  ownerId = made.user.id
})

type Where = ReadWhere

/** The server's count of section reads by where they were made. */
const sectionReads = () => readsByWhere(server, 'mcp_section_reads_total')

/** How the counts moved since `start`. */
async function movedSince(start: Record<Where, number>): Promise<Record<Where, number>> {
  const now = await sectionReads()
  return { inline: now.inline - start.inline, worker: now.worker - start.worker, kept: now.kept - start.kept }
}

/**
 * A document of a small section, a dense one (a paragraph of `runs` one-letter runs alternating bold and
 * italic, written into the live document) and a subsection of the dense one; its section ids.
 */
async function denseDocument(title: string, runs: number) {
  const created = await createDocument(server, ownerId, {
    title,
    markdown: '## Small\n\na **short** note\n\n## Dense\n\nstart\n\n### Under\n\nafter',
    isPrivate: true,
  })
  const conn = await server.collab.hocuspocus.openDirectConnection(created.room, {})
  await conn.transact((doc) => {
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const text = new Y.XmlText()
    const paragraph = new Y.XmlElement('paragraph')
    paragraph.insert(0, [text])
    fragment.insert(denseAt(fragment), [paragraph])
    text.applyDelta(alternatingMarkRuns(runs))
  })
  const live = server.collab.hocuspocus.documents.get(created.room)!
  // The first section is the document's title (its level-1 heading).
  const [, small, dense, under] = listSections(live.getXmlFragment(FRAGMENT_NAME)).map((s) => s.sectionId)
  return { ...created, conn, small: small!, dense: dense!, under: under! }
}

/** The index of the dense section's first block: right after its heading. */
function denseAt(fragment: Y.XmlFragment): number {
  const heading = fragment.toArray().findIndex((node) => node.toString().includes('>Dense<'))
  if (heading < 0) throw new Error('no Dense heading')
  return heading + 1
}

/** `read` made here on a copy of the live document's content (never its memo, which the server shares). */
function onCopy<T>(room: string, read: (fragment: Y.XmlFragment) => T): T {
  const live = server.collab.hocuspocus.documents.get(room)
  if (!live) throw new Error(`${room} is not loaded`)
  const copy = new Y.Doc()
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(live))
  try {
    return read(copy.getXmlFragment(FRAGMENT_NAME))
  } finally {
    copy.destroy()
  }
}

function ok<T>(result: { kind: 'ok'; value: T } | { kind: 'error'; message: string }): T {
  if (result.kind === 'error') throw new Error(result.message)
  return result.value
}

/** The lines a section read's answer must hold for `read` (read_document's own: before, body, notes). */
function expectedAnswer(read: SectionRender) {
  const after: string[] = []
  if (read.nextBlock !== undefined && read.total !== undefined) {
    const shown = {
      first: read.firstBlock,
      last: read.lastBlock,
      count: read.blockCount,
      lastCut: read.truncatedBlock !== undefined,
      firstContinued: read.firstOffset !== undefined,
    }
    after.push(
      notes.nextBlock(shown, read.sectionId, read.nextBlock, read.nextOffset),
      notes.cutByMaxChars(read.budget, read.total),
    )
  }
  return { before: [`section_id: ${read.sectionId}`, `rev: ${read.rev}`], body: read.text.split('\n'), after }
}

/**
 * The dense section read over MCP as these tests ask for it (2,000 characters; `more` adds arguments),
 * refused by nothing: its text and its frame's lines.
 */
async function readDense(doc: { slug: string; dense: string }, more: Record<string, unknown> = {}) {
  const read = await callText(client, 'read_document', {
    slug: doc.slug,
    section_id: doc.dense,
    max_chars: 2_000,
    ...more,
  })
  expect(read.isError, read.text.slice(0, 300)).toBeFalsy()
  const { before, body, after } = frameLines(read.text)
  return { text: read.text, lines: { before, body, after } }
}

describe('section reads of dense sections on the documents worker', () => {
  test('a dense section: made on the worker, the same answer as here; kept while unchanged; an edit read anew; a small section inline', async () => {
    const doc = await denseDocument('Dense sections', 3_000)
    try {
      const start = await sectionReads()
      const small = await callText(client, 'read_document', { slug: doc.slug, section_id: doc.small })
      expect(small.isError, small.text.slice(0, 300)).toBeFalsy()
      expect(frameLines(small.text).body.join('\n')).toContain('a **short** note')
      expect(await movedSince(start)).toEqual({ inline: 1, worker: 0, kept: 0 })

      const asked = { slug: doc.slug, section_id: doc.dense, max_chars: 2_000 }
      const expected = onCopy(doc.room, (f) => ok(renderSection(f, doc.dense, { maxChars: 2_000 })))
      expect(expected.nextBlock).toBe(1) // cut inside the paragraph: the total and an offset are named
      expect(expected.total).toBeGreaterThan(3_000)
      const first = await readDense(doc)
      expect(first.lines).toEqual(expectedAnswer(expected))
      expect(await movedSince(start)).toEqual({ inline: 1, worker: 1, kept: 0 })

      // Unchanged: the same answer, kept (nothing rendered again, nothing counted first).
      const second = await callText(client, 'read_document', asked)
      expect(second.text).toBe(first.text)
      expect(await movedSince(start)).toEqual({ inline: 1, worker: 1, kept: 1 })

      // An edit: the next read shows it, made again on the worker.
      await doc.conn.transact((ydoc) => {
        const fragment = ydoc.getXmlFragment(FRAGMENT_NAME)
        const paragraph = fragment.get(denseAt(fragment)) as Y.XmlElement
        ;(paragraph.get(0) as Y.XmlText).insert(0, 'EDITED ')
      })
      const edited = onCopy(doc.room, (f) => ok(renderSection(f, doc.dense, { maxChars: 2_000 })))
      const third = await callText(client, 'read_document', asked)
      expect(third.text).toContain('EDITED ')
      const lines = frameLines(third.text)
      expect({ before: lines.before, body: lines.body, after: lines.after }).toEqual(expectedAnswer(edited))
      expect(await movedSince(start)).toEqual({ inline: 1, worker: 2, kept: 1 })

      // A chapter read of the dense section and its subsection: on the worker, the same text as here.
      const chapter: ChapterRender = onCopy(doc.room, (f) =>
        ok(renderChapter(f, doc.dense, { maxChars: 2_000 })),
      )
      const read = await readDense(doc, { with_subsections: true })
      expect(read.lines.body.join('\n')).toBe(chapter.text)
      expect(read.text).toContain(`of ${chapter.total}`)
      expect(await movedSince(start)).toEqual({ inline: 1, worker: 3, kept: 1 })
    } finally {
      await doc.conn.disconnect()
    }
  }, 120_000)

  test('a cold read of a stored dense section is made on the worker with the same text as decoding it here', async () => {
    const doc = await denseDocument('Dense stored sections', 3_000)
    await doc.conn.disconnect()
    await eventually(
      () => expect(server.collab.hocuspocus.documents.get(doc.room)).toBeUndefined(),
      20_000,
      'the document unloaded',
    )
    const stored = await server.services.documents.loadStored(doc.room)
    const copy = new Y.Doc()
    applyStored(copy, stored!)
    const expected = ok(renderSection(copy.getXmlFragment(FRAGMENT_NAME), doc.dense, { maxChars: 2_000 }))
    copy.destroy()

    const start = await sectionReads()
    const read = await readDense(doc)
    expect(read.lines).toEqual(expectedAnswer(expected))
    expect(await movedSince(start)).toEqual({ inline: 0, worker: 1, kept: 0 })
    expect(server.collab.hocuspocus.documents.get(doc.room)).toBeUndefined()
  }, 120_000)

  test('a cheap cut read whose total needs a dense block measured: made on the worker, the same answer as here', async () => {
    const doc = await denseDocument('Dense later', 3_000)
    try {
      // A plain block longer than the budget before the dense paragraph: the read shows only part of it.
      await doc.conn.transact((ydoc) => {
        const fragment = ydoc.getXmlFragment(FRAGMENT_NAME)
        const paragraph = new Y.XmlElement('paragraph')
        paragraph.insert(0, [new Y.XmlText('plain '.repeat(600))])
        fragment.insert(denseAt(fragment), [paragraph])
      })
      const start = await sectionReads()
      const read = await readDense(doc)
      // Made after the read: a total measured here is kept by revision in this process, the server's too.
      const expected = onCopy(doc.room, (f) => ok(renderSection(f, doc.dense, { maxChars: 2_000 })))
      expect(expected.lastBlock).toBe(1)
      expect(expected.text).not.toContain('**a**')
      expect(read.lines).toEqual(expectedAnswer(expected))
      expect(await movedSince(start)).toEqual({ inline: 0, worker: 1, kept: 0 })
    } finally {
      await doc.conn.disconnect()
    }
  }, 120_000)
})
