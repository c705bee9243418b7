/**
 * What import-parts.test.ts and import-state.test.ts compare builds with: heading ids and the client id
 * made the same on both sides, and the build in parts (`writeImportedParts`) as the import worker runs it.
 */
import { afterAll, spyOn } from 'bun:test'
import * as Y from 'yjs'
import { writeImportedParts } from '../create-document.ts'
import { importMarkdownParts } from '../markdown/import-markdown.ts'

/** The client id of every document the tests build. */
export const CLIENT = 4_242

/**
 * Heading ids come from crypto.getRandomValues, drawn in another order by each side (the title's first or
 * last): for the file's tests every draw is zeros, so every heading id is the same on both sides. The spy
 * is returned (a test can check the draws went through it).
 */
export function zeroRandomDraws() {
  const random = spyOn(crypto, 'getRandomValues').mockImplementation(
    <T extends ArrayBufferView | null>(array: T): T => {
      new Uint8Array(array!.buffer, array!.byteOffset, array!.byteLength).fill(0)
      return array
    },
  )
  afterAll(() => random.mockRestore())
  return random
}

/**
 * A file imported part by part into a new document of CLIENT's (`writeImportedParts`), or the refusal's
 * message; `parse: 'whole'` reads the file in one markdown-it parse (the reading before blocks were read
 * apart and long lists in slices: what the tests compare with).
 */
export function builtInParts(markdown: string, parse: 'scan' | 'whole' = 'scan'): Y.Doc | string {
  const imported = importMarkdownParts(markdown, { fallbackTitle: 'file', parse })
  if (imported.kind === 'error') return imported.message
  const doc = new Y.Doc()
  doc.clientID = CLIENT
  const written = writeImportedParts(doc, imported.value.title, imported.value.parts)
  return written.kind === 'error' ? written.message : doc
}
