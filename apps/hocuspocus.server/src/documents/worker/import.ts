/**
 * A person's Markdown file built into everything its new document row needs: the Yjs state, the title, the
 * search text and the outline. Pure work (no I/O), run on the import worker (worker.ts) so a large file never
 * holds the event loop that serves everyone; the service then stores the result in one transaction.
 */
import {
  importedDocumentUpdate,
  importMarkdown,
  type OutlineNode,
  ok,
  type Result,
  refuse,
} from '@collab/doc-schema'
import { storableText } from '../../db/storable-text.ts'
import { derivedOf } from '../stored-parts.ts'
import { titleTooLong } from '../title.ts'

export type ImportInput = { markdown: string; title?: string; fallbackTitle: string }

export type BuiltImport = {
  title: string
  /** The new document's whole Yjs state (`Y.encodeStateAsUpdate`). */
  state: Uint8Array
  /** Its search text (the first `maxTextChars`) and outline, as a store derives them. */
  text: string
  outline: OutlineNode[]
  /** One line per change the mapping made (importMarkdown), for the person importing. */
  changes: string[]
}

/** Builds an import; refusals as the service returns them (`invalid_input`, naming the field). */
export function buildImport(input: ImportInput, maxTextChars: number): Result<BuiltImport> {
  const imported = importMarkdown(storableText(input.markdown), {
    title: input.title === undefined ? undefined : storableText(input.title),
    fallbackTitle: storableText(input.fallbackTitle),
  })
  if (imported.kind === 'error') return refuse('invalid_input', imported.message, imported.field)
  const title = imported.value.title
  const tooLong = titleTooLong(title, ' (give a shorter --title)')
  if (tooLong) return tooLong
  const built = importedDocumentUpdate(imported.value)
  if (built.kind === 'error') return refuse('invalid_input', built.message, built.field)
  // With each section's total: measured here, on the worker, so no read renders a section to name it.
  const { text, outline } = derivedOf(built.value, maxTextChars, true)
  return ok({ title, state: built.value, text, outline, changes: imported.value.changes })
}
