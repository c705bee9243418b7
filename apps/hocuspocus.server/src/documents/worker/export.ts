/**
 * A stored document as the Markdown file people export (`doc export`, `GET /api/documents/:slug/markdown`):
 * pure work, run on the worker (worker.ts) for a large document, whose render takes as long as its content.
 * The Markdown is written in pieces (documentMarkdownPieces), each encoded as UTF-8 as it is made: the whole
 * text is never one string, and the pieces' buffers go back to the event loop transferred (a string would
 * be cloned there) and are sent on as they are (http/api.ts, the CLI).
 */
import { documentMarkdownPieces, FRAGMENT_NAME } from '@collab/doc-schema'
import * as Y from 'yjs'
import { applyStored, type StoredParts } from '../stored-parts.ts'

/** Characters of Markdown in one piece of an export (a piece ends where a block does). */
export const EXPORT_PIECE_CHARS = 256 * 1024

/** An export: its Markdown as UTF-8 pieces in order, and their total size. */
export type MarkdownFile = { pieces: Uint8Array[]; bytes: number }

const NEWLINE = new Uint8Array([10])

/** The Markdown of stored content in pieces, ending in a newline (a file does). */
export function renderExport(
  stored: Pick<StoredParts, 'snapshot' | 'updates'>,
  pieceChars = EXPORT_PIECE_CHARS,
  /** Called after each piece (the worker collects garbage there for a large document). */
  collect?: () => void,
): MarkdownFile {
  const doc = new Y.Doc()
  try {
    applyStored(doc, stored)
    const encoder = new TextEncoder()
    const pieces: Uint8Array[] = []
    let bytes = 0
    const write = (piece: string) => {
      const encoded = encoder.encode(piece)
      pieces.push(encoded)
      bytes += encoded.byteLength
      collect?.()
    }
    documentMarkdownPieces(doc.getXmlFragment(FRAGMENT_NAME), write, pieceChars, { media: 'source' })
    // The whole render ends without newlines (trimmed): a file ends with one.
    pieces.push(NEWLINE.slice())
    return { pieces, bytes: bytes + 1 }
  } finally {
    doc.destroy()
  }
}

/** An export's Markdown as one text (small documents, tests). */
export function markdownText(file: MarkdownFile): string {
  const decoder = new TextDecoder()
  return file.pieces.map((piece) => decoder.decode(piece)).join('')
}
