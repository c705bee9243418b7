/**
 * The update log read in bounded statements (documents/log-read.ts): a log past a read slice (one
 * editor's update may be up to the 8 MiB message limit, and a log may hold as many bytes as the snapshot
 * before it is merged) is never answered as one text; what the loaders, a cold read and a compaction get
 * from it is the stored content exactly; and a row merged away between two statements is left out, never
 * half read.
 */
import { describe, expect, test } from 'bun:test'
import { documentToMarkdown, FRAGMENT_NAME } from '@collab/doc-schema'
import { DATABASE_KIND, longestString, useWatchedServices } from '@collab/test-support/database'
import * as Y from 'yjs'
import type { PrismaClient } from '../db/generated/client.ts'
import { readLog } from '../documents/log-read.ts'
import { STATE_SLICE_BYTES } from '../documents/sliced-read.ts'
import { STATE_WRITE_SLICE_BYTES } from '../documents/store.ts'
import type { Services } from '../services.ts'

/** Every character of every string in a statement's answer (what the driver parsed for it). */
function textOf(value: unknown): number {
  if (typeof value === 'string') return value.length
  const items = Array.isArray(value) ? value : value && typeof value === 'object' ? Object.values(value) : []
  return items.reduce((sum: number, item) => sum + textOf(item), 0)
}

/** One slice's bytes as PostgreSQL's base64 (4/3, and a line break every 76 characters), and some slack. */
const SLICE_TEXT = Math.ceil((STATE_SLICE_BYTES / 3) * 4 * (77 / 76)) + 4096

/** Appends a paragraph of `chars` characters to the stored document, as one log row; the local copy follows. */
async function appendParagraph(
  services: Services,
  documentId: string,
  doc: Y.Doc,
  chars: number,
  mark: string,
) {
  const before = Y.encodeStateVector(doc)
  const paragraph = new Y.XmlElement('paragraph')
  paragraph.insert(0, [
    new Y.XmlText(`${mark} ${'lorem ipsum '.repeat(Math.ceil(chars / 12))}`.slice(0, chars)),
  ])
  doc.getXmlFragment(FRAGMENT_NAME).push([paragraph])
  await services.documents.appendUpdate(documentId, Y.encodeStateAsUpdate(doc, before))
}

/** The stored parts applied in order, as Markdown. */
function markdownOf(stored: { snapshot: Uint8Array | null; updates: Uint8Array[] }): string {
  const doc = new Y.Doc()
  if (stored.snapshot) Y.applyUpdate(doc, stored.snapshot)
  for (const update of stored.updates) Y.applyUpdate(doc, update)
  const text = documentToMarkdown(doc.getXmlFragment(FRAGMENT_NAME))
  doc.destroy()
  return text
}

/** A user's imported document of one heading and paragraph: its room, id and a local copy to type into. */
async function imported(services: Services, handle: string, title: string) {
  const owner = await services.users.add(handle)
  if (owner.kind === 'error') throw new Error(owner.message)
  const created = await services.documents.importMarkdown(owner.value.id, {
    markdown: `# ${title}\n\nThe snapshot.\n`,
    fallbackTitle: title,
  })
  if (created.kind === 'error') throw new Error(created.message)
  const { room } = created.value.document
  const stored = await services.documents.loadState(room)
  const doc = new Y.Doc()
  Y.applyUpdate(doc, stored!.state!)
  return { room, documentId: stored!.documentId, doc }
}

describe(`the update log read in bounded statements (${DATABASE_KIND})`, () => {
  /** The most text one statement answered with, and the longest parameter one was sent, since the last reset. */
  let largest = 0
  let largestParameter = 0
  const opened = useWatchedServices(({ operation, answer, values }) => {
    if (operation === '$queryRaw') largest = Math.max(largest, textOf(answer))
    largestParameter = Math.max(largestParameter, longestString(values))
  })

  /** A document whose log holds small rows, rows of a third of a slice and one row of 2.5 slices. */
  async function largeLog(services: Services, handle: string) {
    const { room, documentId: id, doc } = await imported(services, handle, 'Logged')
    await appendParagraph(services, id, doc, 40, 'small one')
    for (let i = 0; i < 4; i++) await appendParagraph(services, id, doc, STATE_SLICE_BYTES / 3, `third ${i}`)
    await appendParagraph(services, id, doc, Math.floor(STATE_SLICE_BYTES * 2.5), 'the large row')
    await appendParagraph(services, id, doc, 40, 'small two')
    const expected = documentToMarkdown(doc.getXmlFragment(FRAGMENT_NAME))
    doc.destroy()
    return { room, documentId: id, expected }
  }

  test('loads, cold reads and a compaction read the whole log, no statement more than a slice', async () => {
    const { services } = opened()
    const { room, documentId, expected } = await largeLog(services, 'lou')
    const [{ bytes }] = (await opened().db.prisma.$queryRaw<Array<{ bytes: bigint }>>`
      SELECT sum(byte_size)::bigint AS bytes FROM document_updates WHERE document_id = ${documentId}::uuid`) as [
      { bytes: bigint },
    ]
    expect(Number(bytes)).toBeGreaterThan(3 * STATE_SLICE_BYTES)

    largest = 0
    const stored = await services.documents.loadStored(room)
    expect(stored!.updates).toHaveLength(7)
    expect(stored!.updateBytes).toBe(Number(bytes))
    expect(markdownOf(stored!)).toBe(expected)
    // Before, the log came as one array_agg value of ~4 MB of text.
    expect(largest).toBeLessThan(SLICE_TEXT)

    largest = 0
    const forLoad = await services.documents.loadForLoad(room)
    expect(markdownOf({ snapshot: forLoad!.snapshot ?? null, updates: forLoad!.updates })).toBe(expected)
    expect(largest).toBeLessThan(SLICE_TEXT)

    largest = 0
    const done = await services.documents.compactStored(documentId, { maxTextChars: 1_000 })
    expect(done?.mergedRows).toBe(7)
    expect(largest).toBeLessThan(SLICE_TEXT)
    const after = await services.documents.loadStored(room)
    expect(after!.updates).toHaveLength(0)
    expect(markdownOf(after!)).toBe(expected)
  }, 120_000)

  test('a row merged away between two statements is left out, not half read', async () => {
    const { db, services } = opened()
    const { documentId } = await largeLog(services, 'vic')
    const listed = await db.prisma.$queryRaw<Array<{ id: bigint; bytes: number }>>`
      SELECT id, byte_size AS bytes FROM document_updates WHERE document_id = ${documentId}::uuid ORDER BY id`
    const large = listed.find((row) => Number(row.bytes) > STATE_SLICE_BYTES)!
    const small = listed.find((row) => Number(row.bytes) < 1000)!
    const sizes = new Map(listed.map((row) => [BigInt(row.id), Number(row.bytes)]))
    // Deleted (as a compaction elsewhere would merge it) once the list is read, or once the first of the
    // row's own statements has answered: the large row after its first slice.
    for (const [gone, afterOwn] of [
      [small, 0],
      [large, 1],
    ] as const) {
      let own = 0
      let deleted = false
      const interleaved = {
        $queryRaw: async (...args: Parameters<PrismaClient['$queryRaw']>) => {
          const answer = await db.prisma.$queryRaw(...args)
          if (args.slice(1).includes(BigInt(gone.id))) own++
          if (!deleted && own >= afterOwn) {
            deleted = true
            await db.prisma.$executeRaw`DELETE FROM document_updates WHERE id = ${gone.id}`
          }
          return answer
        },
      } as unknown as PrismaClient
      const read = await readLog(interleaved, documentId)
      expect(deleted).toBe(true)
      expect(read.vanished).toBe(1)
      expect(read.ids).not.toContain(BigInt(gone.id))
      expect(read.ids).toHaveLength(listed.length - (gone === small ? 1 : 2))
      // Every row kept is whole: its bytes are the row's size.
      expect(read.updates.map((update) => update.byteLength)).toEqual(read.ids.map((id) => sizes.get(id)!))
      expect(read.bytes).toBe(read.updates.reduce((sum, update) => sum + update.byteLength, 0))
    }
  }, 120_000)

  test('an update larger than a write slice is stored in parts, read whole, and its parts go with its row', async () => {
    const { db, services } = opened()
    const { room, documentId, doc } = await imported(services, 'pat', 'Pasted')
    // Over one write slice (two parts) but under a read slice: the loaders' one statement must not take
    // its empty column for its bytes.
    largestParameter = 0
    await appendParagraph(services, documentId, doc, STATE_WRITE_SLICE_BYTES + 40_000, 'pasted')
    expect(largestParameter).toBeLessThan(SLICE_TEXT / 2)
    const expected = documentToMarkdown(doc.getXmlFragment(FRAGMENT_NAME))
    const [row] = await db.prisma.$queryRaw<
      Array<{ id: bigint; parts: number; column: number; bytes: number }>
    >`
      SELECT id, parts, octet_length("update") AS column, byte_size AS bytes
        FROM document_updates WHERE document_id = ${documentId}::uuid`
    expect(row!.parts).toBe(2)
    expect(row!.column).toBe(0)
    const [{ count }] = (await db.prisma.$queryRaw<Array<{ count: number }>>`
      SELECT count(*)::int AS count FROM document_update_parts WHERE update_id = ${row!.id}`) as [
      { count: number },
    ]
    expect(count).toBe(2)
    const loaded = await services.documents.loadStored(room)
    expect(loaded!.updates.map((update) => update.byteLength)).toEqual([Number(row!.bytes)])
    expect(markdownOf(loaded!)).toBe(expected)
    // Merged by a compaction: the row and its parts are gone, the content stays.
    const done = await services.documents.compactStored(documentId, { maxTextChars: 1_000 })
    expect(done?.mergedRows).toBe(1)
    const [{ left }] = (await db.prisma.$queryRaw<Array<{ left: number }>>`
      SELECT count(*)::int AS left FROM document_update_parts WHERE update_id = ${row!.id}`) as [
      { left: number },
    ]
    expect(left).toBe(0)
    expect(markdownOf((await services.documents.loadStored(room))!)).toBe(expected)
    doc.destroy()
  }, 120_000)

  test('a small log is one statement with its bytes', async () => {
    const { db, services } = opened()
    const { documentId, doc } = await imported(services, 'sam', 'Small')
    for (let i = 0; i < 3; i++) await appendParagraph(services, documentId, doc, 100, `row ${i}`)
    let statements = 0
    const counted = {
      $queryRaw: (...args: Parameters<PrismaClient['$queryRaw']>) => {
        statements++
        return db.prisma.$queryRaw(...args)
      },
    } as unknown as PrismaClient
    const read = await readLog(counted, documentId, { authors: true })
    expect(statements).toBe(1)
    expect(read.ids).toHaveLength(3)
    expect(read.authors).toHaveLength(3)
    doc.destroy()
  })
})
