/** Builders of document content through Yjs (as editors' updates build it), and readers of stored text. */
import {
  appendMarkdown,
  createDocumentUpdate,
  documentStructs,
  FRAGMENT_NAME,
  MAX_DOCUMENT_STRUCTS,
  readOutline,
  readOutlineWithTotals,
  readPlainText,
  readTitle,
} from '@collab/doc-schema'
import { paragraph } from '@collab/doc-schema/test-builders'
import type { RunningServer } from '@collab/hocuspocus.server/src/server.ts'
import * as Y from 'yjs'

export { element, nestedList, paragraph } from '@collab/doc-schema/test-builders'

/** Appends one paragraph to the document, as a person typing would. */
export function appendParagraph(doc: Y.Doc, text: string): void {
  doc.getXmlFragment(FRAGMENT_NAME).push([paragraph(text)])
}

export const textOf = (doc: Y.Doc): string => readPlainText(doc.getXmlFragment(FRAGMENT_NAME))

/**
 * Brings `live` (a server's live document) to MAX_DOCUMENT_STRUCTS items as a user typing one character
 * before the last would over minutes (an item each, in its first paragraph's text), applied at once from a
 * scratch copy: the editor boundary counts none of them. Its editors receive them as any change.
 */
export function fillToItemLimit(live: Y.Doc): void {
  const scratch = new Y.Doc()
  Y.applyUpdate(scratch, Y.encodeStateAsUpdate(live))
  const vector = Y.encodeStateVector(scratch)
  const paragraph = scratch
    .getXmlFragment(FRAGMENT_NAME)
    .toArray()
    .find((node): node is Y.XmlElement => node instanceof Y.XmlElement && node.nodeName === 'paragraph')
  if (!paragraph) throw new Error('fillToItemLimit: the document has no paragraph')
  const text = paragraph.get(0) as Y.XmlText
  const missing = MAX_DOCUMENT_STRUCTS - documentStructs(live)
  scratch.transact(() => {
    for (let i = 0; i < missing; i++) text.insert(0, 'z')
  })
  Y.applyUpdate(live, Y.encodeStateAsUpdate(scratch, vector))
  scratch.destroy()
}

/**
 * A dense paragraph's text: `runs` one-letter runs alternating bold and italic, as one delta for
 * `Y.XmlText.applyDelta`. The same structs and state as inserting the runs one at a time at the text's end
 * (36,002 for 12,000 runs either way), without the walk to the end per insert (12,000 runs took ~4 s).
 */
export function alternatingMarkRuns(runs: number): Array<{ insert: string; attributes: object }> {
  return Array.from({ length: runs }, (_, i) => ({
    insert: String.fromCharCode(97 + (i % 26)),
    attributes: i % 2 ? { italic: {} } : { bold: {} },
  }))
}

/** A document `ownerId` makes through the documents service (title, Markdown…); a refusal throws. */
export async function createDocument(
  server: RunningServer,
  ownerId: string,
  input: Parameters<RunningServer['services']['documents']['create']>[1],
) {
  const created = await server.services.documents.create(ownerId, input)
  if (created.kind === 'error') throw new Error(created.message)
  return created.value
}

/** The plain text of the document as stored in the database ('' when nothing is stored). */
export async function storedText(server: RunningServer, room: string): Promise<string> {
  const loaded = await server.services.documents.loadState(room)
  const doc = new Y.Doc()
  if (loaded?.state) Y.applyUpdate(doc, loaded.state)
  const text = textOf(doc)
  doc.destroy()
  return text
}

/**
 * Creates a document and builds its content through Yjs (past the create-time Markdown ceiling), then
 * stores the state through the documents service, as the persistence step would.
 */
export async function buildDocument(
  server: RunningServer,
  ownerId: string,
  options: { title: string; isPrivate?: boolean },
  build: (fragment: Y.XmlFragment) => void,
) {
  const created = await server.services.documents.create(ownerId, options)
  if (created.kind === 'error') throw new Error(created.message)
  const doc = new Y.Doc()
  const base = createDocumentUpdate(options.title)
  if (base.kind === 'error') throw new Error(base.message)
  Y.applyUpdate(doc, base.value)
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  doc.transact(() => build(fragment))
  await storeAsPersisted(server, created.value.id, Y.encodeStateAsUpdate(doc), fragment)
  doc.destroy()
  return created.value
}

/**
 * Stores `state` (whose content `fragment` holds) for a document with its title, search text and outline,
 * as the store step saves them: without the outline, a cold get_outline decodes the state, and the
 * outline backfill rewrites it at the next start.
 */
export async function storeAsPersisted(
  server: RunningServer,
  documentId: string,
  state: Uint8Array,
  fragment: Y.XmlFragment,
  options: { totals?: boolean } = {},
): Promise<void> {
  await server.services.documents.storeState(documentId, {
    state,
    title: readTitle(fragment),
    text: readPlainText(fragment),
    // `totals`: every section's total measured, as a compaction of the live document stores them.
    outline: options.totals ? readOutlineWithTotals(fragment) : readOutline(fragment),
  })
}

/** Appends Markdown to a fragment; a refusal is a broken test, so it throws. */
export function appendOrThrow(fragment: Y.XmlFragment, markdown: string): void {
  const appended = appendMarkdown(fragment, markdown)
  if (appended.kind === 'error') throw new Error(appended.message)
}

/** A document grown past the create-time Markdown ceiling by appending `chunks` of Markdown. */
export function createLargeDocument(
  server: RunningServer,
  ownerId: string,
  title: string,
  chunks: string[],
): Promise<{ slug: string; room: string }> {
  return buildDocument(server, ownerId, { title }, (fragment) => {
    for (const chunk of chunks) appendOrThrow(fragment, chunk)
  })
}

/**
 * Inserts `count` one-chunk searchable documents of `ownerId` straight into the tables (no Yjs state: for
 * search tests over many documents), named `prefix-g` (g from 1), private, the g-th changed `minutes` (an
 * SQL expression of g; g itself unless given) after 2026-01-01, so the largest g is the most recent, with a
 * title and text from SQL expressions of g. Every value is a literal of the calling test.
 */
export async function insertSearchableDocuments(
  server: RunningServer,
  input: { ownerId: string; prefix: string; count: number; title: string; text: string; minutes?: string },
): Promise<void> {
  const { ownerId, prefix, count, title, text, minutes = 'g' } = input
  await server.services.db.prisma.$executeRawUnsafe(`
    WITH planned AS (SELECT g, gen_random_uuid() AS id FROM generate_series(1, ${count}) g),
    made AS (
      INSERT INTO documents (id, room, slug, title, owner_id, is_private, content_updated_at, search_vector)
      SELECT id, gen_random_uuid()::text, '${prefix}-' || g, ${title}, '${ownerId}'::uuid, true,
             timestamptz '2026-01-01' + (${minutes}) * interval '1 minute', to_tsvector('simple', ${title})
        FROM planned
      RETURNING id)
    INSERT INTO document_search_chunks (document_id, key, n, prefix_chars, body, stem, words, alone)
    SELECT made.id, 'k', 0, 0, b.body, to_tsvector('english', b.body),
           setweight(to_tsvector('simple', b.body), 'B'), true
      FROM made JOIN planned USING (id)
      CROSS JOIN LATERAL (SELECT (${title}) || E'\\n' || (${text}) AS body) b`)
}
