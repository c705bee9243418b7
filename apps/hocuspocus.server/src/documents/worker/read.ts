/**
 * The start of a document's Markdown for a whole read (read_document without section_id): the same
 * `documentMarkdownPrefix` the event loop would run, on a copy decoded from the state's bytes, so the text is
 * the same character for character. Run on the documents' worker for content whose render is dear (a
 * paragraph of 10,000 marks: ~150 ms of CPU at the render-work cap, which held every other client's
 * keystroke that long), inline for small content (modules/mcp/infra/documents.ts decides).
 */
import {
  documentMarkdownPrefix,
  FRAGMENT_NAME,
  type MarkdownPrefix,
  type SerializeOptions,
} from '@collab/doc-schema'
import * as Y from 'yjs'
import { applyStored, type StoredParts } from '../stored-parts.ts'

export type ReadInput = {
  /** The content: a stored snapshot and log, or a live document's state as the snapshot. */
  stored: Pick<StoredParts, 'snapshot' | 'updates'>
  /** At least this many characters of Markdown, unless it is all of it (documentMarkdownPrefix). */
  minChars: number
  opts: SerializeOptions
}

/** `documentMarkdownPrefix(fragment, minChars, opts, bounded = true)` of the content, decoded here. */
export function renderReadPrefix(input: ReadInput): MarkdownPrefix {
  const doc = new Y.Doc()
  try {
    applyStored(doc, input.stored)
    return documentMarkdownPrefix(doc.getXmlFragment(FRAGMENT_NAME), input.minChars, input.opts, true)
  } finally {
    doc.destroy()
  }
}
