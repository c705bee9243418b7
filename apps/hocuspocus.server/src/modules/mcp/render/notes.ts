/**
 * Notes: the server's own guidance after the data frame. Every text is built from the limits, never a
 * literal number, so the notes, the descriptions and docs/mcp/reference.md cannot drift apart.
 * Order in an output: a continuation note when one applies, then the truncation note, which ends it.
 */
import { MAX_RENDER_WORK } from '@collab/doc-schema'
import type { Narrowed } from '../../../documents/search.ts'
import { MAX_RANKED_DOCUMENTS, MAX_RANKED_TEXT_BYTES } from '../../../limits.ts'
import { MAX_COUNTED_CHARS, MAX_FIND_LIMIT, MAX_FIND_SECTIONS_DOCUMENTS, MAX_READ_CHARS } from '../limits.ts'

/**
 * Which blocks a cut section read shows, named in its next-page note beside the call that reads on. Its
 * truncation note counts characters: the budget that applied of the section's total.
 */
export type ShownBlocks = {
  first: number
  last: number
  count: number
  lastCut: boolean
  /** The first block was shown from an offset into it (block_offset), not from its start. */
  firstContinued?: boolean
}

export function shownBlocks({ first, last, count, lastCut, firstContinued }: ShownBlocks): string {
  if (lastCut && first === last)
    return `${firstContinued ? 'part' : 'the start'} of block ${last} of ${count}`
  const range = first === last ? `block ${first}` : `blocks ${first}–${last}`
  return `${range} of ${count}`
}

/** The part of one section a chapter read (with_subsections) shows: its blocks, and its id ('' for none). */
export type ShownSectionPart = ShownBlocks & { sectionId: string }

function shownSection(part: ShownSectionPart): string {
  const id = part.sectionId === '' ? 'a section without id' : part.sectionId
  return `${id} (${part.count === 0 ? 'no blocks' : shownBlocks(part)})`
}

/** The sections a cut chapter read shows: the first and the last (those between are shown whole). */
export function shownSections(parts: readonly ShownSectionPart[]): string {
  if (parts.length === 1) return `section ${shownSection(parts[0]!)}`
  return `${parts.length} sections, from ${shownSection(parts[0]!)} to ${shownSection(parts.at(-1)!)}`
}

/** Where the next read of a chapter starts: `fromSection` '' when that section has no id of its own. */
export type ChapterResume = { fromSection: string; fromBlock: number; blockOffset?: number }

const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`

export const notes = {
  outlineTruncated: (shown: number, total: number) => `[Truncated: showing ${shown} of ${total} headings.]`,
  roomsTruncated: (shown: number, total: number) => `[Truncated: showing ${shown} of ${total} rooms.]`,

  /**
   * find_documents and find_sections: the run ranked the matches among the `ranked` most recently changed
   * documents (documents/search.ts Narrowed): in scope, the query being broad, or of its matches, their
   * text being more than one search ranks. On every page of it.
   */
  narrowedSearch: (narrowed: Narrowed) =>
    narrowed.among === 'scope'
      ? `[Broad query: more documents hold these words than one search ranks (${MAX_RANKED_DOCUMENTS} documents, ${mebibytes(MAX_RANKED_TEXT_BYTES)} of text), so these are the best matches among the ${narrowed.ranked} most recently changed documents in scope. Add a word, or a "phrase" in double quotes, to search all of them.]`
      : `[Long matches: the documents holding these words hold more text than one search ranks (${mebibytes(MAX_RANKED_TEXT_BYTES)}), so these are the best matches among the ${narrowed.ranked} most recently changed of them. Add a word, or a "phrase" in double quotes, to search all of them.]`,

  moreDocuments: (limit: number) =>
    limit >= MAX_FIND_LIMIT
      ? '[More documents exist. Narrow with query.]'
      : `[More documents exist. Narrow with query, or raise limit up to ${MAX_FIND_LIMIT}.]`,

  /**
   * A cut section or chapter read when the caller chose a `max_chars` below MAX_READ_CHARS (docs.plus issue
   * #380's text): `cap` is the budget that applied (max_chars, at least MIN_SECTION_CHARS), `total` the exact
   * length of the section (or chapter) read whole.
   */
  cutByMaxChars: (cap: number, total: number) =>
    `[Truncated: showing ${cap} of ${total} characters. Call again with a larger max_chars, up to ${MAX_READ_CHARS}.]`,
  /** A cut section or chapter read at the full budget (#380's text). */
  cutAtCeiling: (total: number) =>
    `[Truncated: showing ${MAX_READ_CHARS} of ${total} characters. This section alone is longer than ${MAX_READ_CHARS}.]`,
  /**
   * A section or chapter read that stopped at MAX_RENDER_WORK (its markup) before its character budget:
   * `shown` the characters it showed, fewer than the budget.
   */
  cutByWork: (shown: number, total: number) =>
    `[Truncated: showing ${shown} of ${total} characters. The rest holds more markup (marks, links, nodes) than one read renders (${MAX_RENDER_WORK} units); read on as the note before says.]`,
  /**
   * A cut whole-document read: `total` is the document's Markdown length, counted up to MAX_COUNTED_CHARS
   * (undefined past it: the read renders no further than that).
   */
  documentCut: (shown: number, total: number | undefined, counted = MAX_COUNTED_CHARS) =>
    `[Truncated: showing ${shown} of ${total === undefined ? `more than ${counted}` : total} characters. Call get_outline, then read one section at a time with section_id.]`,
  /** A whole read whose render reached MAX_RENDER_WORK before its budget: it shows what was rendered. */
  documentCutByWork: (shown: number) =>
    `[Truncated: showing ${shown} characters; the document goes on with more markup (marks, links, nodes) than one whole read renders (${MAX_RENDER_WORK} units). Call get_outline, then read one section at a time with section_id.]`,

  /** find_sections across documents: a document holds more matching sections than a page shows of it. */
  moreInDocument: (slug: string, shown: number, total: number) =>
    `[More in "${slug}": showing ${shown} of ${total} matching sections. Call find_sections with slug: "${slug}" and the same query.]`,
  nextSectionsPage: (cursor: string) =>
    `[Next page: call find_sections with the same query, scope and limit, and cursor: "${cursor}".]`,
  moreMatchingDocuments: (limit: number) =>
    limit >= MAX_FIND_SECTIONS_DOCUMENTS
      ? '[More documents match. Narrow the query.]'
      : `[More documents match. Narrow the query, or raise limit up to ${MAX_FIND_SECTIONS_DOCUMENTS}.]`,
  /** find_sections with slug: the call shows fewer than all matching sections. */
  sectionMatchesTruncated: (shown: number, total: number) =>
    `[Truncated: showing ${shown} of ${total} matching sections.]`,

  olderMessages: (beforeSeq: number) => `[Older messages exist. Call again with before_seq: ${beforeSeq}.]`,

  nextFindPage: (cursor: string) =>
    `[Next page: call find_documents with the same query, scope and limit, and cursor: "${cursor}".]`,
  nextStart: (start: number) => `[Next page: call again with start: ${start}.]`,
  /**
   * The next read of a section, after the blocks this one showed: from a block's start, or (a cut block)
   * from `blockOffset` into it.
   */
  nextBlock: (shown: ShownBlocks, sectionId: string, fromBlock: number, blockOffset?: number) =>
    blockOffset === undefined
      ? `[Next page: this read showed ${shownBlocks(shown)}; call read_document with section_id: ${sectionId} and from_block: ${fromBlock}.]`
      : `[Next page: this read showed ${shownBlocks(shown)}; call read_document with section_id: ${sectionId}, from_block: ${fromBlock} and block_offset: ${blockOffset}.]`,
  /**
   * The next read of a chapter (with_subsections), after the sections this one showed: from_section when it
   * starts in a subsection, from_block (and block_offset) when it starts inside a section rather than at its
   * heading.
   */
  nextChapterPart: (
    shown: readonly ShownSectionPart[],
    sectionId: string,
    { fromSection, fromBlock, blockOffset }: ChapterResume,
  ) => {
    const args = [`section_id: ${sectionId}`, 'with_subsections: true']
    if (fromSection !== sectionId) args.push(`from_section: ${fromSection}`)
    if (fromBlock > 1 || blockOffset !== undefined) args.push(`from_block: ${fromBlock}`)
    if (blockOffset !== undefined) args.push(`block_offset: ${blockOffset}`)
    return `[Next page: this read showed ${shownSections(shown)}; call read_document with ${args.slice(0, -1).join(', ')} and ${args.at(-1)}.]`
  },
  /** A chapter read stopped before a heading whose id is missing or repeats an earlier one's. */
  chapterStopsAtUnnamed: (shown: readonly ShownSectionPart[]) =>
    `[Next page: this read showed ${shownSections(shown)}; the next section of this chapter has no section_id of its own, so no read can start there; call get_outline, then read on from the section after it.]`,
} as const
