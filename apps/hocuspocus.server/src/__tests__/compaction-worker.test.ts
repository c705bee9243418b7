/**
 * Compaction merged on the documents' worker (documents/compact-stored.ts, worker/compact.ts), not on the
 * event loop: what it stores reads back as the same document, with the outline and totals of that content
 * and no log rows left; and an update appended while it runs is kept (its row stays in the log, or is in
 * the snapshot), so loading the document gives every change.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readOutline, type StoredOutlineNode } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { appendOrThrow, buildDocument, paragraph } from '@collab/test-support/documents'
import { outlineShape } from '@collab/test-support/outline'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import { applyStored } from '../documents/stored-parts.ts'
import type { RunningServer } from '../server.ts'

/** The stored content (snapshot, then log) decoded into a document of its own. */
async function readBack(server: RunningServer, room: string): Promise<Y.Doc> {
  const stored = await server.services.documents.loadStored(room)
  if (!stored) throw new Error(`no stored document for ${room}`)
  const doc = new Y.Doc()
  applyStored(doc, stored)
  return doc
}

async function logRows(server: RunningServer, documentId: string): Promise<number> {
  const rows = await server.services.db.prisma.$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM document_updates WHERE document_id = ${documentId}::uuid`
  return rows[0]?.n ?? 0
}

describe(`compaction on the documents' worker (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('the unload compaction stores the same content, its outline with totals, and an empty log', async () => {
    const { user, token } = await userWithToken(server, 'compactor')
    const created = await buildDocument(server, user.id, { title: 'Merged' }, (fragment) => {
      appendOrThrow(fragment, '## First')
      fragment.push(Array.from({ length: 300 }, (_, i) => paragraph(`First section, paragraph ${i}.`)))
      appendOrThrow(fragment, '## Second\n\nsecond')
    })
    const editor = connectProvider(server.url, created.room, token)
    await editor.ready
    const compactionsBefore = server.metrics.compactions.get()
    const flatBefore = server.metrics.compactionReads.get({ read: 'flat' })
    editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph('typed before leaving')])
    await eventually(
      async () => expect(await logRows(server, created.id)).toBeGreaterThan(0),
      10_000,
      'logged',
    )
    const live = server.collab.hocuspocus.documents.get(created.room)!
    const expected = live.getXmlFragment(FRAGMENT_NAME).toString()
    editor.destroy()
    await eventually(() => expect(server.collab.hocuspocus.documents.has(created.room)).toBe(false), 20_000)
    expect(server.metrics.compactions.get()).toBeGreaterThan(compactionsBefore)
    // Read flat on the worker (collab_document_compaction_reads_total), nothing decoded.
    expect(server.metrics.compactionReads.get({ read: 'flat' })).toBeGreaterThan(flatBefore)
    expect(server.metrics.compactionReads.get({ read: 'flat_failed' })).toBe(0)

    expect(await logRows(server, created.id)).toBe(0)
    const back = await readBack(server, created.room)
    const fragment = back.getXmlFragment(FRAGMENT_NAME)
    expect(fragment.toString()).toBe(expected)
    const [row] = await server.services.db.prisma.$queryRaw<Array<{ outline: StoredOutlineNode[] }>>`
      SELECT outline FROM document_states WHERE document_id = ${created.id}::uuid`
    expect(outlineShape(row!.outline)).toEqual(outlineShape(readOutline(fragment) as StoredOutlineNode[]))
    expect(row!.outline.every((node: StoredOutlineNode) => typeof node.total === 'number')).toBe(true)
    back.destroy()
  })

  test('an update appended while the compaction runs is kept', async () => {
    const { user } = await userWithToken(server, 'appender')
    const created = await buildDocument(server, user.id, { title: 'Appended' }, (fragment) => {
      appendOrThrow(fragment, '## Only')
      fragment.push(Array.from({ length: 200 }, (_, i) => paragraph(`Paragraph ${i}.`)))
    })
    const { documents } = server.services
    // Two logged changes, made on a copy of the stored content, then one more appended during the compaction.
    const copy = await readBack(server, created.room)
    const change = (text: string) => {
      const before = Y.encodeStateVector(copy)
      copy.getXmlFragment(FRAGMENT_NAME).push([paragraph(text)])
      return Y.encodeStateAsUpdate(copy, before)
    }
    await documents.appendUpdate(created.id, change('logged one'))
    await documents.appendUpdate(created.id, change('logged two'))
    // Appended after the compaction read the log and before it writes: that row is not merged, so it stays.
    const done = await documents.compactStored(created.id, {
      maxTextChars: 0,
      afterRead: async () => {
        await documents.appendUpdate(created.id, change('appended meanwhile'))
      },
    })
    expect(done?.mergedRows).toBe(2)
    expect(await logRows(server, created.id)).toBe(1)
    const back = await readBack(server, created.room)
    expect(back.getXmlFragment(FRAGMENT_NAME).toString()).toBe(copy.getXmlFragment(FRAGMENT_NAME).toString())
    expect(back.getXmlFragment(FRAGMENT_NAME).toString()).toContain('appended meanwhile')
    back.destroy()
    copy.destroy()
  })
})
