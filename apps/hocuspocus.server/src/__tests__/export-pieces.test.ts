/**
 * Exports of large documents (issue 24): the stored state is read in slices, never as one text in one
 * statement (read whole, a 22 MB state's 30 MB of base64 text was parsed by the driver and decoded on the
 * event loop in one piece, ~0.4 s), the Markdown comes back from the worker in pieces and is sent piece by
 * piece; and the bytes are exactly those of the whole render as before (the stored state decoded whole,
 * documentToMarkdown, a newline), for small documents (rendered here), one past EXPORT_INLINE_BYTES and one
 * past a read slice (on the worker), with and without updates logged after the snapshot, over the service
 * and over REST.
 */
import { describe, expect, test } from 'bun:test'
import { documentToMarkdown, FRAGMENT_NAME } from '@collab/doc-schema'
import { DATABASE_KIND, longestString, useWatchedServices } from '@collab/test-support/database'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import * as Y from 'yjs'
import type { Database } from '../db/client.ts'
import { EXPORT_INLINE_BYTES, eachPiece } from '../documents/export-markdown.ts'
import { STATE_SLICE_BYTES } from '../documents/sliced-read.ts'
import { EXPORT_PIECE_CHARS, markdownText } from '../documents/worker/export.ts'
import type { Services } from '../services.ts'
import { wholeSnapshotSql, wholeUpdateSql } from './whole-state.ts'

/**
 * Prose of about `bytes` characters: sections of a heading and a long paragraph whose first sentence has
 * marks (emphasis, a link, code), sometimes a list. Mostly plain text, so its state is about as large as
 * its Markdown: with marks in every sentence a state was four times as large and took ten times as long
 * to build and render (832 KB of Markdown: a 3.6 MB state, ~4.5 s to import), for the same paths.
 */
function prose(bytes: number, seed: string): string {
  const marked = `Some *words* of ${seed}, a [link](https://x.org/) and \`code\` in a long paragraph. `
  const sentence = `Then more words of ${seed}, plain, in the same long paragraph. `
  const parts = [`# ${seed}\n`]
  for (let i = 0, size = 0; size < bytes; i++) {
    const list = i % 10 === 0 ? `\n- one\n- two ${i}\n` : ''
    const part = `\n## ${seed} ${i}\n\n${marked}${sentence.repeat(40)}\n${list}`
    parts.push(part)
    size += part.length
  }
  return parts.join('')
}

const CORPUS = [
  { name: 'small', markdown: '# Small\n\nOne paragraph with **bold**.\n\n- a\n- b\n\n* c\n' },
  { name: 'past EXPORT_INLINE_BYTES', markdown: prose(EXPORT_INLINE_BYTES + 16 * 1024, 'Middle') },
  { name: 'past a read slice', markdown: prose(STATE_SLICE_BYTES + 64 * 1024, 'Large') },
]

/**
 * The export as it was made before: the stored state read whole (its parts joined by the database) and
 * rendered in one string.
 */
async function exportAsBefore(db: Database, room: string): Promise<string> {
  const [row] = await db.prisma.$queryRaw<Array<{ state: string | null; updates: string[] | null }>>`
    SELECT encode(${wholeSnapshotSql('s')}, 'base64') AS state,
           (SELECT array_agg(encode(${wholeUpdateSql('u')}, 'base64') ORDER BY u.id)
              FROM document_updates u WHERE u.document_id = d.id) AS updates
      FROM documents d LEFT JOIN document_states s ON s.document_id = d.id WHERE d.room = ${room}`
  const doc = new Y.Doc()
  if (row?.state) Y.applyUpdate(doc, Buffer.from(row.state, 'base64'))
  for (const update of row?.updates ?? []) Y.applyUpdate(doc, Buffer.from(update, 'base64'))
  const text = documentToMarkdown(doc.getXmlFragment(FRAGMENT_NAME), { media: 'source' })
  doc.destroy()
  return `${text}\n`
}

/** An update appended to the document's log, as a store of typing would: one more paragraph at the end. */
async function typeAfterTheSnapshot(services: Services, room: string, text: string): Promise<void> {
  const stored = await services.documents.loadState(room)
  const doc = new Y.Doc()
  if (stored?.state) Y.applyUpdate(doc, stored.state)
  const before = Y.encodeStateVector(doc)
  const paragraph = new Y.XmlElement('paragraph')
  paragraph.insert(0, [new Y.XmlText(text)])
  doc.getXmlFragment(FRAGMENT_NAME).push([paragraph])
  await services.documents.appendUpdate(stored!.documentId, Y.encodeStateAsUpdate(doc, before))
  doc.destroy()
}

describe(`exports in pieces, the state read in slices (${DATABASE_KIND})`, () => {
  /** The longest text any statement of the documents service answered with, since the last reset. */
  let longestText = 0
  // The real client, watched: every statement's answer is measured for its longest text.
  const opened = useWatchedServices(({ operation, answer }) => {
    if (operation === '$queryRaw') longestText = Math.max(longestText, longestString(answer))
  })

  test('each export is the bytes of the whole render as before; a large one comes in pieces, its state in slices', async () => {
    const { db, services } = opened()
    const owner = await services.users.add('ann')
    if (owner.kind === 'error') throw new Error(owner.message)
    for (const { name, markdown } of CORPUS) {
      const imported = await services.documents.importMarkdown(owner.value.id, {
        markdown,
        fallbackTitle: name,
      })
      if (imported.kind === 'error') throw new Error(imported.message)
      const { room, slug } = imported.value.document
      for (const logged of [false, true]) {
        if (logged) await typeAfterTheSnapshot(services, room, `typed after the snapshot of ${name}`)
        longestText = 0
        const exported = await services.documents.markdownOf({ room, slug }, 'ann')
        if (exported.kind === 'error') throw new Error(exported.message)
        const read = longestText
        const pieces: Uint8Array[] = []
        await eachPiece(exported.value, (piece) => pieces.push(piece))
        const text = markdownText({ pieces, bytes: 0 })
        expect(text, `${name}, logged ${logged}`).toBe(await exportAsBefore(db, room))
        if (name === 'small') continue
        const stored = await services.documents.loadStored(room)
        // Rendered on the worker (stored bytes past EXPORT_INLINE_BYTES); the middle one read in one
        // statement, the large one in slices.
        expect(stored?.snapshot?.byteLength).toBeGreaterThan(EXPORT_INLINE_BYTES)
        if (name !== 'past a read slice') {
          expect(stored?.snapshot?.byteLength).toBeLessThanOrEqual(STATE_SLICE_BYTES)
          continue
        }
        expect(stored?.snapshot?.byteLength).toBeGreaterThan(STATE_SLICE_BYTES)
        // Read in slices: no statement answered more than one slice's base64 text (4/3 of its bytes, and
        // PostgreSQL's line breaks); before, the state came whole in one (over 1.3 MB of text).
        expect(read).toBeLessThan((STATE_SLICE_BYTES / 3) * 4 * 1.02)
        // Written in pieces of about EXPORT_PIECE_CHARS (each ends where a block does).
        expect(pieces.length).toBeGreaterThan(3)
        for (const piece of pieces.slice(0, -2))
          expect(piece.byteLength).toBeLessThan(EXPORT_PIECE_CHARS + 4096)
      }
    }
  }, 300_000)
})

describe(`GET /api/documents/:slug/markdown sends the pieces (${DATABASE_KIND})`, () => {
  // Any server does: the test's own user and document, nothing counted server-wide.
  const share = useSharedServer()

  test('the body is the export; UTF-8 across pieces intact', async () => {
    const { server } = share
    const owner = await userWithToken(server, share.handle('rex'))
    const markdown = `${prose(STATE_SLICE_BYTES, 'Große Überschrift ✦')}\nEnde: ünïcødé ✦ 𝄞\n`
    const imported = await server.services.documents.importMarkdown(owner.user.id, {
      markdown,
      fallbackTitle: 'U',
    })
    if (imported.kind === 'error') throw new Error(imported.message)
    const expected = await server.services.documents.markdownOf(imported.value.document, owner.user.id)
    if (expected.kind === 'error') throw new Error(expected.message)
    const pieces: Uint8Array[] = []
    await eachPiece(expected.value, (piece) => pieces.push(piece))
    expect(pieces.length).toBeGreaterThan(2) // the body crosses pieces
    const answer = await fetch(`${server.url}/api/documents/${imported.value.document.slug}/markdown`, {
      headers: { Authorization: `Bearer ${owner.token}` },
    })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    const body = await answer.text()
    expect(body).toBe(markdownText({ pieces, bytes: 0 }))
    expect(body.endsWith('Ende: ünïcødé ✦ 𝄞\n')).toBe(true)
  }, 300_000)
})
