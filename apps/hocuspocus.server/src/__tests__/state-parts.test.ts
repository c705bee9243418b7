/**
 * A state larger than one write slice is stored in parts, a row of document_state_parts each (store.ts,
 * writeStateRow), and a version taken from it copies the parts (history-store.ts, insertVersion): the
 * database never builds such a state as one value on a write. (An INSERT of a 22 MB state, joined by the
 * database from its slices or sent as one parameter, grew PGlite's WebAssembly heap by ~138 MB for good; the
 * red team's 20 MiB import, red-team-imports-large.slow.test.ts, holds the server's growth to it.)
 * Checked here on the real client and database: the rows written, no write statement joining parts, the
 * bytes read back in slices equal to the parts, a smaller state taking the parts away, a state stored as one
 * value before parts existed read and then moved into parts, and the comparison of a snapshot with a version
 * part by part (equal: not read again; one part differing: read).
 */
import { describe, expect, test } from 'bun:test'
import { countingRawQueries, DATABASE_KIND, useWatchedServices } from '@collab/test-support/database'
import * as Y from 'yjs'
import { CONTENT_TRANSACTION } from '../db/transactions.ts'
import {
  readSnapshotState,
  readVersionState,
  STATE_PART_BYTES,
  STATE_SLICE_BYTES,
} from '../documents/sliced-read.ts'
import { storeContent } from '../documents/store.ts'

/** Prose of about `bytes` characters in sections (its state about as large). */
function prose(bytes: number): string {
  const sentence = 'A sentence of a long report, repeated until its state spans several stored parts. '
  const parts = ['# Report\n']
  for (let i = 0, size = 0; size < bytes; i++) {
    const part = `\n## Chapter ${i}\n\n${sentence.repeat(150)}\n`
    parts.push(part)
    size += part.length
  }
  return parts.join('')
}

/** A document's state of one paragraph holding `text`. */
function smallState(text: string): Uint8Array {
  const doc = new Y.Doc()
  const paragraph = new Y.XmlElement('paragraph')
  paragraph.insert(0, [new Y.XmlText(text)])
  doc.getXmlFragment('default').push([paragraph])
  const state = Y.encodeStateAsUpdate(doc)
  doc.destroy()
  return state
}

/** Statements run, as SQL text with the operation (writes and reads of states among them). */
const statements: Array<{ operation: string; sql: string }> = []
const opened = useWatchedServices(({ operation, sql }) => {
  statements.push({ operation, sql })
})

describe(`large states are stored in parts (${DATABASE_KIND})`, () => {
  /** The imported document's id and its import version's id, for the tests after the first. */
  let documentId = ''
  let versionId = 0n

  async function headOf(id: string) {
    const [row] = await opened().db.prisma.$queryRaw<Array<{ stored: number; bytes: number; parts: number }>>`
      SELECT octet_length(state) AS stored, byte_size AS bytes, parts FROM document_states WHERE document_id = ${id}::uuid`
    return { stored: Number(row?.stored), bytes: Number(row?.bytes), parts: Number(row?.parts) }
  }

  /** The stored parts' sizes in order (n from 0) and their bytes joined here. */
  async function partsOf(table: 'state' | 'version', key: string | bigint) {
    const { prisma } = opened().db
    const rows =
      table === 'state'
        ? await prisma.$queryRaw<Array<{ n: number; data: string }>>`
            SELECT n, encode(data, 'base64') AS data FROM document_state_parts
             WHERE document_id = ${key as string}::uuid ORDER BY n`
        : await prisma.$queryRaw<Array<{ n: number; data: string }>>`
            SELECT n, encode(data, 'base64') AS data FROM document_version_parts
             WHERE version_id = ${key as bigint} ORDER BY n`
    const bytes = rows.map((row) => new Uint8Array(Buffer.from(row.data, 'base64')))
    return {
      numbers: rows.map((row) => Number(row.n)),
      sizes: bytes.map((part) => part.byteLength),
      joined: new Uint8Array(Buffer.concat(bytes)),
    }
  }

  test('an import of ~1.5 MB: its state and its version in parts, none joined by the database', async () => {
    const { db, services } = opened()
    const owner = await services.users.add('ada')
    if (owner.kind === 'error') throw new Error(owner.message)
    statements.length = 0
    const imported = await services.documents.importMarkdown(owner.value.id, {
      markdown: prose(1_500_000),
      fallbackTitle: 'Report',
    })
    if (imported.kind === 'error') throw new Error(imported.message)
    documentId = imported.value.document.id
    const writes = statements.filter((s) => /INSERT|UPDATE/.test(s.sql))

    const head = await headOf(documentId)
    expect(head.stored).toBe(0) // the column holds nothing: the parts do
    expect(head.bytes).toBeGreaterThan(5 * STATE_PART_BYTES)
    expect(head.parts).toBe(Math.ceil(head.bytes / STATE_PART_BYTES))
    const parts = await partsOf('state', documentId)
    expect(parts.numbers).toEqual([...Array(head.parts).keys()])
    // Every part a whole slice but the last.
    expect(parts.sizes.slice(0, -1).every((size) => size === STATE_PART_BYTES)).toBe(true)
    expect(parts.joined.byteLength).toBe(head.bytes)
    // Read back in slices (three parts a slice): the same bytes, and the document imported.
    const read = await readSnapshotState(db.prisma, documentId)
    expect(read.snapshot).toEqual(parts.joined)
    const doc = new Y.Doc()
    Y.applyUpdate(doc, read.snapshot!)
    expect(doc.getXmlFragment('default').toString()).toContain('Chapter 40')
    doc.destroy()

    // The import's version: the same parts, copied.
    const [version] = await db.prisma.$queryRaw<Array<{ id: bigint; parts: number; stored: number }>>`
      SELECT id, parts, octet_length(state) AS stored FROM document_versions
       WHERE document_id = ${documentId}::uuid AND reason = 'import'`
    versionId = BigInt(version!.id)
    expect({ parts: Number(version!.parts), stored: Number(version!.stored) }).toEqual({
      parts: head.parts,
      stored: 0,
    })
    expect((await partsOf('version', versionId)).joined).toEqual(parts.joined)
    expect(await readVersionState(db.prisma, versionId)).toEqual(parts.joined)

    // No write statement joined bytes into one value (as the writes did through a temporary table).
    expect(writes.length).toBeGreaterThan(head.parts)
    expect(writes.filter((s) => /string_agg\(\w*\.?data/.test(s.sql)).map((s) => s.sql)).toEqual([])
  }, 120_000)

  test('the snapshot is compared with a version part by part: read again only when a part differs', async () => {
    expect(documentId).not.toBe('')
    const { prisma } = opened().db
    const known = { id: versionId, state: await readVersionState(prisma, versionId) }
    // Statements sent: the head (with the comparison), then a slice a statement when it is read.
    const counted = countingRawQueries(prisma)
    const same = await readSnapshotState(counted.client, documentId, undefined, known)
    expect(same.snapshot).toEqual(known.state)
    expect(counted.sent.count).toBe(1) // equal: the caller's copy, nothing more read

    // One part of the snapshot changed (its last byte): no longer the version's, so read in slices.
    await prisma.$executeRaw`
      UPDATE document_state_parts SET data = overlay(data placing '\\xff'::bytea from octet_length(data))
       WHERE document_id = ${documentId}::uuid AND n = 2`
    counted.sent.count = 0
    const changed = await readSnapshotState(counted.client, documentId, undefined, known)
    expect(counted.sent.count).toBe(1 + Math.ceil(known.state.byteLength / STATE_SLICE_BYTES))
    expect(changed.snapshot).toEqual((await partsOf('state', documentId)).joined)
    expect(changed.snapshot).not.toEqual(known.state)
  }, 60_000)

  test('a smaller state takes the parts away; a large one brings them back; versions keep their own', async () => {
    expect(documentId).not.toBe('')
    const { prisma } = opened().db
    const large = await readVersionState(prisma, versionId)
    const write = (state: Uint8Array) =>
      prisma.$transaction(
        (tx) =>
          storeContent(tx, documentId, { state, title: 'Report', text: 'report' }, { keepDerived: true }),
        CONTENT_TRANSACTION,
      )
    const small = smallState('a short report')
    await write(small)
    expect(await headOf(documentId)).toEqual({ stored: small.byteLength, bytes: small.byteLength, parts: 0 })
    expect((await partsOf('state', documentId)).numbers).toEqual([])
    expect((await readSnapshotState(prisma, documentId)).snapshot).toEqual(small)
    // The version's parts are its own: still there, still the import.
    expect(await readVersionState(prisma, versionId)).toEqual(large)

    await write(large)
    const head = await headOf(documentId)
    expect(head).toEqual({
      stored: 0,
      bytes: large.byteLength,
      parts: Math.ceil(large.byteLength / STATE_PART_BYTES),
    })
    expect(Array.from((await partsOf('state', documentId)).joined)).toEqual(Array.from(large))

    // A version deleted (retention) takes its parts with it.
    await prisma.$executeRaw`DELETE FROM document_versions WHERE id = ${versionId}`
    expect((await partsOf('version', versionId)).numbers).toEqual([])
  }, 60_000)

  test('a large state stored as one value (before parts) is read in slices; its next write is in parts', async () => {
    expect(documentId).not.toBe('')
    const { prisma } = opened().db
    const { services } = opened()
    const large = (await readSnapshotState(prisma, documentId)).snapshot!
    // As a database migrated from before parts holds it: the column, parts 0, no part rows.
    await prisma.$executeRaw`DELETE FROM document_state_parts WHERE document_id = ${documentId}::uuid`
    await prisma.$executeRaw`
      UPDATE document_states SET state = decode(${Buffer.from(large).toString('base64')}, 'base64'), parts = 0
       WHERE document_id = ${documentId}::uuid`
    expect(await headOf(documentId)).toEqual({ stored: large.byteLength, bytes: large.byteLength, parts: 0 })
    expect((await readSnapshotState(prisma, documentId)).snapshot).toEqual(large)
    // The loader (a load into a live document) reads it too.
    const [doc] = await prisma.$queryRaw<
      Array<{ room: string }>
    >`SELECT room FROM documents WHERE id = ${documentId}::uuid`
    const stored = await services.documents.loadStored(doc!.room)
    expect(stored?.snapshot).toEqual(large)

    await prisma.$transaction(
      (tx) =>
        storeContent(
          tx,
          documentId,
          { state: large, title: 'Report', text: 'report' },
          { keepDerived: true },
        ),
      CONTENT_TRANSACTION,
    )
    expect((await headOf(documentId)).stored).toBe(0)
    expect(Array.from((await partsOf('state', documentId)).joined)).toEqual(Array.from(large))
    expect((await services.documents.loadStored(doc!.room))?.snapshot).toEqual(large)
  }, 60_000)
})
