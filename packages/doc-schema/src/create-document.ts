import * as Y from 'yjs'
import type { DocNode } from './doc-json.ts'
import { newHeadingId } from './heading-id.ts'
import { blockInserter, type ImportPart, insertParts } from './insert-blocks.ts'
import { editorSchema } from './lazy-libs.ts'
import { FRAGMENT_NAME, HEADING_ID_ATTR, MAX_DOCUMENT_BYTES, MAX_TITLE_CHARS } from './limits.ts'
import { checkNodes, type ParseOptions, parseMarkdown } from './markdown/parse-markdown.ts'
import { ok, type Result, refuseFor } from './result.ts'
import { blocksToY } from './yjs/build-y.ts'
import { newStateOverStructs } from './yjs/document-structs.ts'

/** The title as stored: whitespace runs (newlines included) collapse to one space. */
export function normaliseTitle(title: string): Result<string> {
  const clean = title.replace(/\s+/g, ' ').trim()
  if (clean === '')
    return refuseFor('empty_title', 'title: it is empty; give the document a short title.', 'title')
  if (clean.length > MAX_TITLE_CHARS) {
    return refuseFor(
      'title_too_long',
      `title: ${clean.length} characters is over ${MAX_TITLE_CHARS}; shorten it.`,
      'title',
    )
  }
  return ok(clean)
}

/** Blocks of a new document: the level-1 title heading (fresh id), then the parsed Markdown, checked. */
export function buildDocumentBlocks(
  title: string,
  markdown?: string,
  opts: Pick<ParseOptions, 'elements'> = {},
): Result<DocNode[]> {
  const cleanTitle = normaliseTitle(title)
  if (cleanTitle.kind === 'error') return cleanTitle
  const heading: DocNode = {
    type: 'heading',
    attrs: { level: 1, [HEADING_ID_ATTR]: newHeadingId() },
    content: [{ type: 'text', text: cleanTitle.value }],
  }
  if (markdown === undefined || markdown.trim() === '') return ok([heading])
  const body = parseMarkdown(markdown, opts)
  if (body.kind === 'error') return body
  return ok([heading, ...body.value])
}

/** Writes a new document into an empty Y.Doc's `default` fragment, in one transaction. */
export function writeNewDocument(
  doc: Y.Doc,
  title: string,
  markdown?: string,
  opts: Pick<ParseOptions, 'elements'> = {},
): Result<void> {
  const blocks = buildDocumentBlocks(title, markdown, opts)
  if (blocks.kind === 'error') return blocks
  return writeBlocks(doc, blocks)
}

function writeBlocks(doc: Y.Doc, blocks: Result<DocNode[]>): Result<void> {
  if (blocks.kind === 'error') return blocks
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  if (fragment.length > 0) {
    return refuseFor('not_empty', 'doc: it already has content; write a new document into an empty Y.Doc.')
  }
  const elements = blocksToY(blocks.value)
  doc.transact(() => fragment.insert(0, elements))
  return ok(undefined)
}

/** The full Yjs update (`Y.encodeStateAsUpdate`) of a new document: what a store saves as its first state. */
export function createDocumentUpdate(
  title: string,
  markdown?: string,
  opts: Pick<ParseOptions, 'elements'> = {},
): Result<Uint8Array> {
  return encodeNew((doc) => writeNewDocument(doc, title, markdown, opts))
}

/**
 * The same for an imported file (importMarkdown): the title heading, then its checked body blocks.
 * `inspect` reads the built fragment before it is encoded and let go (the import worker derives the
 * search text and outline there rather than decoding the state again).
 */
export function importedDocumentUpdate(
  imported: { title: string; blocks: DocNode[] },
  inspect?: (fragment: Y.XmlFragment) => void,
): Result<Uint8Array> {
  const checked = checkNodes(imported.blocks)
  if (checked.kind === 'error') return checked
  return importedPartsUpdate({ title: imported.title, parts: [checked] }, inspect)
}

/**
 * `importedDocumentUpdate` from the body's parts (importMarkdownParts): each part is built into the
 * document as it comes and its JSON let go, so the file's blocks as JSON, their ProseMirror nodes and their
 * detached Yjs copies are never all held beside the document. The same Yjs update, byte for byte, as
 * building every block first and inserting them at once (`writeImportedParts`).
 */
export function importedPartsUpdate(
  imported: { title: string; parts: Iterable<Result<ImportPart>> },
  inspect?: (fragment: Y.XmlFragment) => void,
  /** Called as blocks (or a long block's children) are built, with how many are (the worker collects its garbage). */
  built?: (blocks: number) => void,
): Result<Uint8Array> {
  const update = encodeNew((doc) => {
    const written = writeImportedParts(doc, imported.title, imported.parts, built)
    if (written.kind === 'ok') inspect?.(doc.getXmlFragment(FRAGMENT_NAME))
    return written
  })
  if (update.kind === 'ok' && update.value.length > MAX_DOCUMENT_BYTES) {
    return refuseFor(
      'too_large',
      `markdown: the document would hold ${update.value.length} bytes of state, over ${MAX_DOCUMENT_BYTES}; split the file into several documents.`,
      'markdown',
    )
  }
  return (update.kind === 'ok' && newStateOverStructs(update.value)) || update
}

/**
 * Writes the title heading and then each part's blocks into an empty Y.Doc's `default` fragment, in one
 * transaction, each block inserted after the one before as it is built (`blockInserter`), so the update is
 * the same as one insert of them all. A part's refusal ends it (the document is then thrown away).
 */
export function writeImportedParts(
  doc: Y.Doc,
  title: string,
  parts: Iterable<Result<ImportPart>>,
  built?: (blocks: number) => void,
): Result<void> {
  const heading = buildDocumentBlocks(title)
  if (heading.kind === 'error') return heading
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  if (fragment.length > 0) {
    return refuseFor('not_empty', 'doc: it already has content; write a new document into an empty Y.Doc.')
  }
  const first = heading.value.map((block) => editorSchema().nodeFromJSON(block))
  return doc.transact(() => insertParts(blockInserter(fragment, built), first, parts))
}

function encodeNew(write: (doc: Y.Doc) => Result<void>): Result<Uint8Array> {
  const doc = new Y.Doc()
  const written = write(doc)
  if (written.kind === 'error') return written
  const update = Y.encodeStateAsUpdate(doc)
  doc.destroy()
  return ok(update)
}
