/**
 * The notes section: the exact texts of the notes the tools append (made by the functions the tools call,
 * with placeholders where they vary), how their `{blocks}` and `{sections}` parts read, and the paging
 * refusals.
 */
import * as limits from '../limits.ts'
import { historyNotes } from '../render/history.ts'
import {
  notes,
  type ShownBlocks,
  type ShownSectionPart,
  shownBlocks,
  shownSections,
} from '../render/notes.ts'
import { suggestionNotes } from '../render/suggestions.ts'
import { code, type Section, slot, table } from './format.ts'
import { pagingRefusals } from './refusals-section.ts'

/** Blocks and sections as placeholders: the notes' `{blocks}` and `{sections}` parts, named once below. */
const SOME_BLOCKS: ShownBlocks = { first: slot('F'), last: slot('L'), count: slot('B'), lastCut: false }
const SOME_PARTS: ShownSectionPart[] = [{ ...SOME_BLOCKS, sectionId: slot('X') }]

/** A note about blocks or sections with their rendering replaced by its placeholder. */
const withParts = (text: string) =>
  text.replace(shownSections(SOME_PARTS), '{sections}').replace(shownBlocks(SOME_BLOCKS), '{blocks}')

const LIMIT_BELOW_MAX = slot('limit')

type NoteRow = [tool: string, when: string, text: string]

/** Why a cut read stopped, said after its next-page note: the same three causes for a section and a chapter. */
const CUT_CAUSES = {
  byMaxChars: 'cut, `max_chars` given and below `MAX_READ_CHARS`',
  atCeiling: 'cut at the full budget',
  byWork: 'the render reached `MAX_RENDER_WORK` first',
} as const

/** The truncation notes of a cut section or chapter read, the same texts for both (#380's). */
function cutRows(tool: string): NoteRow[] {
  const texts: Record<keyof typeof CUT_CAUSES, string> = {
    byMaxChars: notes.cutByMaxChars(slot('cap'), slot('total')),
    atCeiling: notes.cutAtCeiling(slot('total')),
    byWork: notes.cutByWork(slot('shown'), slot('total')),
  }
  return Object.entries(CUT_CAUSES).map(([cause, when]) => [
    tool,
    `(after the next-page note) ${when}`,
    texts[cause as keyof typeof CUT_CAUSES],
  ])
}

/** One tool's notes, each (when it is added, its text). */
const rowsOf = (tool: string, rows: [when: string, text: string][]): NoteRow[] =>
  rows.map(([when, text]) => [tool, when, text])

/**
 * A find tool's paging notes: the next page's cursor while more `what`, then once the run has shown all it
 * will, the note on what is left: below the largest `limit` it says to raise it.
 */
function findRunRows(
  tool: string,
  what: string,
  nextPage: string,
  more: (limit: number) => string,
  max: number,
) {
  return rowsOf(tool, [
    [`${what}: first`, nextPage],
    [`then, with \`limit\` below ${max}`, more(LIMIT_BELOW_MAX)],
    [`then, with \`limit\` ${max}; also a run past the snapshot's cap`, more(max)],
  ])
}

/** The notes of the paged lists that say how much of the whole a call showed. */
const TRUNCATED: [tool: string, what: string, note: (shown: number, total: number) => string][] = [
  ['find_sections with slug', 'matches', notes.sectionMatchesTruncated],
  ['get_outline', 'headings', notes.outlineTruncated],
  ['list_chat_rooms', 'rooms', notes.roomsTruncated],
]

function noteRows(): NoteRow[] {
  return [
    ...findRunRows(
      'find_documents',
      'more rows exist',
      notes.nextFindPage(slot('cursor')),
      notes.moreDocuments,
      limits.MAX_FIND_LIMIT,
    ),
    [
      'find_sections without slug',
      'a document has more matching sections than shown (one per such document)',
      notes.moreInDocument(slot('slug'), slot('shown'), slot('total')),
    ],
    ...findRunRows(
      'find_sections without slug',
      'more documents match',
      notes.nextSectionsPage(slot('cursor')),
      notes.moreMatchingDocuments,
      limits.MAX_FIND_SECTIONS_DOCUMENTS,
    ),
    [
      'find_documents, find_sections without slug',
      `the query is broad: more than \`MAX_RANKED_DOCUMENTS\` readable matches, or more than \`MAX_SEARCH_CANDIDATES\` server-wide (or \`MAX_SEARCH_CANDIDATE_PARTS\` chunks of long documents, or \`MAX_SEARCH_CHECKED_TEXT_BYTES\` of their text to check), and more than \`MAX_RANKED_DOCUMENTS\` documents (or \`MAX_RANKED_TEXT_BYTES\` of text) in scope; {N}: how many were ranked (every page of the run, last)`,
      notes.narrowedSearch({ ranked: slot('N'), among: 'scope' }),
    ],
    [
      'find_documents, find_sections without slug',
      `the query's matches hold more than \`MAX_RANKED_TEXT_BYTES\` of text, most recently changed first; {N}: how many were ranked (every page of the run, last)`,
      notes.narrowedSearch({ ranked: slot('N'), among: 'matches' }),
    ],
    [
      'find_sections with slug, get_outline, list_chat_rooms',
      'a page does not reach the last line',
      notes.nextStart(slot('start')),
    ],
    ...TRUNCATED.map(
      ([tool, what, note]): NoteRow => [
        tool,
        `the call shows fewer than all ${what} (cut, or \`start\` > 1)`,
        note(slot('shown'), slot('total')),
      ],
    ),
    [
      'read_chat_thread',
      'older messages exist than the oldest shown (`seq`: that oldest one)',
      notes.olderMessages(slot('seq')),
    ],
    ...rowsOf('list_versions', [
      [
        'a page ends before the oldest version kept (`cursor`: its last id)',
        historyNotes.moreVersions(slot('cursor')),
      ],
      ['the page reaches the oldest version kept, or there is none', historyNotes.lastVersionsPage()],
      [
        'every page with versions, after those',
        historyNotes.versionsShown(slot('first'), slot('last'), slot('total')),
      ],
    ]),
    ...rowsOf('changes_since', [
      ['nothing changed since (the whole answer, no frame body)', historyNotes.noChanges(slot('since'))],
      [
        'the answer is cut (`cursor` continues the same comparison)',
        historyNotes.moreChanges(slot('cursor')),
      ],
      [
        'cut, or a page after the first',
        historyNotes.changesShown(slot('first'), slot('last'), slot('total')),
      ],
    ]),
    ...rowsOf('list_suggestions', [
      ['any suggestion is pending (every such answer)', suggestionNotes.howToDecide()],
      [
        'the answer reached `MAX_READ_CHARS` before the page was shown',
        suggestionNotes.cut(slot('shown'), slot('total')),
      ],
      ['more are pending than `limit`', suggestionNotes.more(slot('shown'))],
    ]),
    ...rowsOf('read_document, whole', [
      ['cut; `total` is the Markdown counted', notes.documentCut(slot('shown'), slot('total'))],
      ['cut, the Markdown longer than `MAX_COUNTED_CHARS`', notes.documentCut(slot('shown'), undefined)],
      [
        'cut, counting stopped at `MAX_RENDER_WORK` after `counted` characters',
        notes.documentCut(slot('shown'), undefined, slot('counted')),
      ],
      ['the render reached `MAX_RENDER_WORK` before the budget', notes.documentCutByWork(slot('shown'))],
    ]),
    ...rowsOf('read_document with section_id', [
      [
        'cut on a block boundary, the next block exists',
        withParts(notes.nextBlock(SOME_BLOCKS, slot('section_id'), slot('block'))),
      ],
      [
        'a block longer than the budget was cut (`offset`: its characters shown so far)',
        withParts(notes.nextBlock(SOME_BLOCKS, slot('section_id'), slot('block'), slot('offset'))),
      ],
    ]),
    ...cutRows('read_document with section_id'),
    ...rowsOf('read_document with with_subsections', [
      [
        'cut: every part the resume needs (`from_section` left out when it is `section_id`, `from_block` at a heading, `block_offset` unless the block was cut)',
        withParts(
          notes.nextChapterPart(SOME_PARTS, slot('section_id'), {
            fromSection: slot('from_section'),
            fromBlock: slot('block'),
            blockOffset: slot('offset'),
          }),
        ),
      ],
      [
        'cut, the read resumes at a subsection heading',
        withParts(
          notes.nextChapterPart(SOME_PARTS, slot('section_id'), {
            fromSection: slot('from_section'),
            fromBlock: 1,
          }),
        ),
      ],
      ['cut before a heading with no id of its own', withParts(notes.chapterStopsAtUnnamed(SOME_PARTS))],
    ]),
    ...cutRows('read_document with with_subsections'),
  ]
}

/** How `{blocks}` and `{sections}` read, from the functions that write them, on example values. */
function partRows(): [string, string][] {
  const blocks = (b: ShownBlocks) => shownBlocks(b)
  const part = (sectionId: string, b: ShownBlocks): ShownSectionPart => ({ ...b, sectionId })
  return [
    ['`{blocks}`: blocks shown', blocks({ first: 1, last: 40, count: 120, lastCut: false })],
    ['`{blocks}`: one block', blocks({ first: 7, last: 7, count: 120, lastCut: false })],
    ['`{blocks}`: one block cut', blocks({ first: 7, last: 7, count: 120, lastCut: true })],
    [
      '`{blocks}`: a block read from `block_offset` and cut again',
      blocks({ first: 7, last: 7, count: 120, lastCut: true, firstContinued: true }),
    ],
    [
      '`{sections}`: one section',
      shownSections([part('X', { first: 3, last: 5, count: 9, lastCut: false })]),
    ],
    [
      '`{sections}`: several (those between shown whole)',
      shownSections([
        part('X', { first: 3, last: 9, count: 9, lastCut: false }),
        part('Y', { first: 1, last: 4, count: 4, lastCut: false }),
        part('', { first: 1, last: 1, count: 0, lastCut: false }),
      ]),
    ],
  ]
}

export function notesSection(): Section {
  const notesTable = table(
    ['tool', 'when', 'text'],
    noteRows().map(([tool, when, text]) => [tool, when, code(text)]),
  )
  const partsTable = table(
    ['placeholder', 'example'],
    partRows().map(([what, text]) => [what, code(text)]),
  )
  const refusalsTable = table(
    ['find_documents and find_sections: refused', 'text'],
    pagingRefusals().map(([when, text]) => [when, code(text)]),
  )
  return { name: 'notes', text: [notesTable, '', partsTable, '', refusalsTable].join('\n') }
}
