/**
 * A person's Markdown file built into everything its new document row needs: the Yjs state, the title, the
 * search text and the outline. Pure work (no I/O), run on the import worker (worker.ts) so a large file never
 * holds the event loop that serves everyone; the service then stores the result in one transaction.
 */
import {
  derivedStream,
  importedStateInParts,
  importMarkdownParts,
  ok,
  type Result,
  refuse,
} from '@collab/doc-schema'
import { storableJSON, storableText } from '../../db/storable-text.ts'
import { readImportBody } from '../import-body.ts'
import { titleTooLong } from '../title.ts'

/** How many sections' renders an import measures between two collections of its young garbage. */
const COLLECT_EVERY_SECTIONS = 500
/**
 * How many blocks (or a long list's items) an import builds between two full collections. Full, not young:
 * the items written out and let go had lived through young collections while they were built, so only a
 * full one reclaims them. Measured on the pool (load ~13-15 on 2 cores): young every 4,000 blocks, a 20 MiB
 * file peaked +251-254 MB and the ceiling +348-354; full every 2,000, +188 and +305; every 1,000, +183 and
 * +286. The price is CPU on the worker's thread: a 20 MiB file 5.8-5.9 s with young collections, 7.1-7.7 s
 * with full ones every 2,000 blocks (6.5-6.9 s every 4,000; the build before parts 5.0-5.9 s).
 */
const COLLECT_EVERY_BLOCKS = 2_000

export type ImportInput = {
  /**
   * The file: its text, or its bytes as they came (UTF-8, decoded here as `Request.text()` would: a BOM
   * dropped, a malformed sequence replaced). A request's body goes as bytes, transferred: read as text, the
   * event loop decoded 20 MiB and the post then copied the string (~170 ms of its CPU in one piece, a
   * 20 MiB file at load ~13 on 2 cores), where a transfer costs nothing. `buildImport` empties it once
   * read (the bytes are the worker's own).
   */
  markdown: string | Uint8Array
  title?: string
  fallbackTitle: string
  /**
   * `markdown` is a REST import's JSON body (`{"title"?, "markdown", "private"?}`, import-body.ts), read
   * here: its title and privacy are the body's.
   */
  json?: true
}

export type BuiltImport = {
  title: string
  /** The new document's whole Yjs state (`Y.encodeStateAsUpdate`). */
  state: Uint8Array
  /** Its search text (the first `maxTextChars`) and outline, as a store derives them. */
  text: string
  /**
   * The outline as the JSON a store writes (storableJSON), made here: as objects, a 20 MiB file's ~12,000
   * sections took the event loop hundreds of ms to receive (structured clone) and serialise again.
   */
  outlineJson: string
  /** One line per change the mapping made (importMarkdown), for the person importing. */
  changes: string[]
  /** A JSON body's `private`, when it gave one. */
  isPrivate?: boolean
}

/**
 * Builds an import; refusals as the service returns them (`invalid_input`, naming the field). `collect`
 * runs between the phases once the previous phase's structures are let go (the worker collects its
 * garbage there, so the next phase reuses that memory rather than growing the heap).
 */
export function buildImport(
  input: ImportInput,
  maxTextChars: number,
  collect: () => void = () => {},
  collectYoung: () => void = () => {},
): Result<BuiltImport> {
  let { title: givenTitle } = input
  let isPrivate: boolean | undefined
  let markdown: string
  if (input.json) {
    const body = readImportBody(input.markdown)
    if (body.kind === 'error') return body
    ;({ markdown, title: givenTitle, private: isPrivate } = body.value)
  } else
    markdown = typeof input.markdown === 'string' ? input.markdown : new TextDecoder().decode(input.markdown)
  // The file's bytes are not read again: let go (the worker's copy, transferred to it), so the first
  // collection frees them rather than holding them beside the build (20 MiB for a 20 MiB file).
  input.markdown = ''
  const imported = importMarkdownParts(storableText(markdown), {
    title: givenTitle === undefined ? undefined : storableText(givenTitle),
    fallbackTitle: storableText(input.fallbackTitle),
  })
  if (imported.kind === 'error') return refuse('invalid_input', imported.message, imported.field)
  const { title, changes } = imported.value
  const tooLong = titleTooLong(title, ' (give a shorter --title)')
  if (tooLong) return tooLong
  collect() // markdown-it's inline state and what the parse left behind
  // The body is built into the document one top-level block at a time (a long list a batch of items at a
  // time), each block's tokens and JSON let go as it is built; each block is measured for the outline (with
  // each section's total, so no read renders a section to name it) and the search text as it is built,
  // then written out and dropped from the document (import-state.ts): neither the whole document nor its
  // items are ever held beside the parse.
  let nextCollection = COLLECT_EVERY_BLOCKS
  let renders = 0
  const derived = derivedStream(
    maxTextChars,
    // Each section is rendered to measure it: a 20 MiB file's ~30,000 renders left ~200 MB of garbage
    // between two collections, so one is made every COLLECT_EVERY_SECTIONS sections.
    (sections) => {
      if (sections % COLLECT_EVERY_SECTIONS === 0) collectYoung()
    },
    () => {
      // every 4,000 items of a long list rendered to measure it
      if (++renders % 4 === 0) collectYoung()
    },
  )
  const built = importedStateInParts(imported.value, derived, (blocks) => {
    if (blocks >= nextCollection) {
      nextCollection = blocks + COLLECT_EVERY_BLOCKS
      collect()
    }
  })
  if (built.kind === 'error') return refuse('invalid_input', built.message, built.field)
  const { text, outline } = derived.finish()
  collect()
  return ok({ title, state: built.value, text, outlineJson: storableJSON(outline), changes, isPrivate })
}
