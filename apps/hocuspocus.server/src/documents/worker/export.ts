/**
 * A stored document as the Markdown file people export (`doc export`, `GET /api/documents/:slug/markdown`):
 * pure work, run on the worker (worker.ts) for a large document, whose render takes as long as its content.
 */
import { documentToMarkdown, FRAGMENT_NAME } from '@collab/doc-schema'
import * as Y from 'yjs'
import { applyStored, type StoredParts } from '../stored-parts.ts'

/** The Markdown of stored content, ending in a newline (a file does). */
export function renderExport(stored: Pick<StoredParts, 'snapshot' | 'updates'>): string {
  const doc = new Y.Doc()
  try {
    applyStored(doc, stored)
    const text = documentToMarkdown(doc.getXmlFragment(FRAGMENT_NAME), { media: 'source' })
    return text.endsWith('\n') ? text : `${text}\n`
  } finally {
    doc.destroy()
  }
}
