/**
 * A stored document as the Markdown file people export (`doc export`, `GET /api/documents/:slug/markdown`):
 * pure work, run on the worker (worker.ts) for a large document, whose render takes as long as its content.
 * The Markdown is written in pieces (documentMarkdownPieces), each encoded as UTF-8 as it is made: the whole
 * text is never one string. On the worker each piece is handed on as soon as it is made (`emit`: posted,
 * its buffer transferred) and sent to the connection from there (export-markdown.ts), so neither thread
 * holds the whole file; rendered here, the pieces are returned together. The blocks are read from the
 * stored bytes without a Y.Doc when they can be (`readStoredFlat`), else from one decoded with Yjs: the same
 * Markdown either way (flat-read.test.ts, export-pieces.test.ts).
 */
import {
  blocksToMarkdownPieces,
  documentMarkdownPieces,
  FRAGMENT_NAME,
  type SerializeOptions,
} from '@collab/doc-schema'
import * as Y from 'yjs'
import { applyStored, readStoredFlat, type StoredParts } from '../stored-parts.ts'

/** Characters of Markdown in one piece of an export (a piece ends where a block does). */
export const EXPORT_PIECE_CHARS = 256 * 1024

/** An export: its Markdown as UTF-8 pieces in order (none when they were emitted), and their total size. */
export type MarkdownFile = { pieces: Uint8Array[]; bytes: number }

const NEWLINE = new Uint8Array([10])
const EXPORT_OPTIONS: SerializeOptions = { media: 'source' }

/** The Markdown of stored content in pieces, ending in a newline (a file does). */
export function renderExport(
  stored: Pick<StoredParts, 'snapshot' | 'updates'>,
  options: {
    pieceChars?: number
    /** Called after each piece (the worker collects garbage there for a large document). */
    collect?: () => void
    /** Given each piece as it is made, instead of keeping it in the returned file. */
    emit?: (piece: Uint8Array) => void
    /**
     * The caller gives the stored bytes up (the worker owns a job's): they are dropped from `stored` once
     * applied, and this is called then (the worker collects them and the decoding's garbage before the
     * render adds its own).
     */
    applied?: () => void
  } = {},
): MarkdownFile {
  const { pieceChars = EXPORT_PIECE_CHARS, collect, emit, applied } = options
  const encoder = new TextEncoder()
  const pieces: Uint8Array[] = []
  const give = emit ?? ((piece: Uint8Array) => pieces.push(piece))
  let bytes = 0
  const write = (piece: string) => {
    const encoded = encoder.encode(piece)
    bytes += encoded.byteLength
    give(encoded)
    collect?.()
  }
  const done = () => {
    // The whole render ends without newlines (trimmed): a file ends with one.
    give(NEWLINE.slice())
    return { pieces, bytes: bytes + 1 }
  }
  const flat = readStoredFlat(stored)
  if (flat) {
    if (applied) {
      stored.snapshot = null
      stored.updates = []
      applied()
    }
    blocksToMarkdownPieces(flat.blocks(), write, pieceChars, EXPORT_OPTIONS)
    return done()
  }
  const doc = new Y.Doc()
  try {
    applyStored(doc, stored)
    if (applied) {
      stored.snapshot = null
      stored.updates = []
      applied()
    }
    documentMarkdownPieces(doc.getXmlFragment(FRAGMENT_NAME), write, pieceChars, EXPORT_OPTIONS)
    return done()
  } finally {
    doc.destroy()
  }
}

/** An export's Markdown as one text (small documents, tests). */
export function markdownText(file: MarkdownFile): string {
  const decoder = new TextDecoder()
  return file.pieces.map((piece) => decoder.decode(piece)).join('')
}
