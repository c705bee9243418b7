/**
 * The parts of docs/mcp/reference.md the code owns, each a named section the reference script writes
 * between `<!-- generated:NAME start -->` and `<!-- generated:NAME end -->`: the tools (from the
 * registry and the SDK's own tools/list answer), the limits (the named constants, their values and
 * comments) and the exact texts of the notes and paging refusals (made by the very functions the tools
 * call, with placeholders for what varies). Nothing here is a copy of a text the code holds.
 */
import { resolve } from 'node:path'
import * as docSchema from '@collab/doc-schema'
import type { Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js'
import * as posting from '../../../chat/posting.ts'
import { DATABASE_UNAVAILABLE_MESSAGE } from '../../../db/errors.ts'
import * as search from '../../../documents/search.ts'
import { rateLimitMessage } from '../infra/rate-limit.ts'
import { serverTimeMessage } from '../infra/server-time.ts'
import * as limits from '../limits.ts'
import { decodeCursor, encodeCursor } from '../paging/cursor.ts'
import { CURSOR_EXPIRED, PUBLIC_NEEDS_QUERY, queryTermsOf } from '../paging/find-pages.ts'
import { FRAME_END, type FrameSource, frameStart } from '../render/frame.ts'
import {
  notes,
  type ShownBlocks,
  type ShownSectionPart,
  shownBlocks,
  shownSections,
} from '../render/notes.ts'
import { TOOLS } from '../tools/index.ts'
import { CANCELLED_MESSAGE, GENERIC_FAILURE } from '../tools/instrument.ts'
import { notFoundMessage } from '../tools/open-document.ts'
import { mayUse, type Tool } from '../tools/tool.ts'
import { type NamedConstant, namedConstants } from './constants.ts'

export type Section = { name: string; text: string }

/** The repository's root, and a path from it (files are named from the root in the reference). */
export const ROOT = resolve(import.meta.dir, '../../../../../..')
export const REFERENCE_PATH = 'docs/mcp/reference.md'
const fromRoot = (path: string) => resolve(ROOT, path)

/** A placeholder where a note's text varies: `{name}` in the template, passed where the code passes a value. */
const slot = (name: string) => `{${name}}` as never

/** Markdown inline code of any text (a text holding backticks gets a longer fence). */
function code(text: string): string {
  const fence = text.includes('`') ? '``' : '`'
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${text}${pad}${fence}`
}

/** A table cell: pipes escaped, on one line. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')

const row = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [row(header), row(header.map(() => '---')), ...rows.map(row)].join('\n')
}

const number = (n: number) => n.toLocaleString('en-US')

/** The token scope that lists and calls a tool of this kind. */
const scopeOf = (tool: Tool) => (mayUse(['read'], tool.kind) ? 'read' : 'write')

// ---------- the frame ----------

/** Each kind of framed output's opening line (`frameStart`), as the tools that show it open it. */
function frameSection(): Section {
  const whose = slot('whose')
  const rows: [string, FrameSource][] = [
    ['read_document, resources/read', { kind: 'document', slug: slot('slug'), whose }],
    ['get_outline', { kind: 'outline', slug: slot('slug'), whose }],
    ['find_documents', { kind: 'document list' }],
    ['find_sections with slug', { kind: 'section matches', slug: slot('slug'), whose }],
    ['find_sections without slug', { kind: 'section matches list' }],
    ['list_chat_rooms', { kind: 'chat rooms', slug: slot('slug'), whose }],
    [
      'read_chat_thread',
      {
        kind: 'chat thread',
        slug: slot('slug'),
        whose,
        sectionId: slot('section_id'),
        headingRemoved: false,
      },
    ],
    [
      'read_chat_thread, the heading gone',
      { kind: 'chat thread', slug: slot('slug'), whose, sectionId: slot('section_id'), headingRemoved: true },
    ],
  ]
  const openings = table(
    ['output of', 'opening line'],
    rows.map(([tool, source]) => [tool, code(frameStart(source))]),
  )
  return { name: 'frame', text: `${openings}\n\nThe closing line, once per output: ${code(FRAME_END)}` }
}

// ---------- tools ----------

function toolsOverview(listed: readonly ListedTool[]): Section {
  const rows = TOOLS.map((tool) => {
    const a = listed.find((l) => l.name === tool.name)?.annotations ?? {}
    const yesNo = (hint: boolean | undefined) => (hint ? 'yes' : 'no')
    return [
      `[${code(tool.name)}](#${tool.name})`,
      tool.title,
      tool.kind,
      scopeOf(tool),
      yesNo(a.readOnlyHint),
      yesNo(a.destructiveHint),
      yesNo(a.idempotentHint),
      yesNo(a.openWorldHint),
    ]
  })
  return {
    name: 'tools',
    text: table(
      ['tool', 'title', 'kind', 'token scope', 'readOnly', 'destructive', 'idempotent', 'openWorld'],
      rows,
    ),
  }
}

type JsonSchema = {
  type?: string
  enum?: unknown[]
  items?: JsonSchema
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  maxItems?: number
  default?: unknown
  description?: string
}

/** Bounds a JSON Schema states (the SDK's rendering of the zod schema); integers' safe maximum is no bound. */
function boundsOf(schema: JsonSchema): string {
  const range = (min: number | undefined, max: number | undefined, unit: string) => {
    const top = max === undefined || max >= Number.MAX_SAFE_INTEGER ? undefined : max
    if (min !== undefined && top !== undefined) return `${number(min)}–${number(top)}${unit}`
    if (top !== undefined) return `≤ ${number(top)}${unit}`
    if (min !== undefined && min > 0) return `≥ ${number(min)}${unit}`
    if (min === 0) return '≥ 0'
    return ''
  }
  if (schema.type === 'string') return range(schema.minLength, schema.maxLength, ' characters')
  if (schema.type === 'integer' || schema.type === 'number') return range(schema.minimum, schema.maximum, '')
  if (schema.type === 'array') {
    const items = schema.items ? boundsOf(schema.items) : ''
    const count = schema.maxItems === undefined ? '' : `at most ${number(schema.maxItems)} entries`
    return [count, items && `each ${items}`].filter(Boolean).join(', ')
  }
  return ''
}

function typeOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((v) => code(String(v))).join(' or ')
  if (schema.type === 'array') return `${schema.items ? typeOf(schema.items) : 'value'}[]`
  return schema.type ?? 'any'
}

function toolSection(tool: Tool, listed: ListedTool): Section {
  const schema = listed.inputSchema as { properties?: Record<string, JsonSchema>; required?: string[] }
  const required = new Set(schema.required ?? [])
  const args = Object.entries(schema.properties ?? {}).map(([name, field]) => [
    code(name),
    typeOf(field),
    required.has(name) ? 'yes' : 'no',
    field.default === undefined ? '' : code(JSON.stringify(field.default)),
    boundsOf(field),
    field.description ?? '',
  ])
  const heading = `${listed.title} · kind ${tool.kind} · token scope ${scopeOf(tool)}`
  const lines = [
    `*${heading}.* Description, as tools/list sends it:`,
    '',
    `> ${listed.description}`,
    '',
    args.length === 0
      ? 'No arguments.'
      : table(['argument', 'type', 'required', 'default', 'bounds', 'description'], args),
  ]
  return { name: `tool:${tool.name}`, text: lines.join('\n') }
}

// ---------- limits ----------

/** A constant's value with its unit when its name says one (`_MS`, `_BYTES`). */
function withUnit({ name, value }: NamedConstant): string {
  if (name.endsWith('_MS')) {
    const human = value >= 60_000 ? `${value / 60_000} min` : value >= 1_000 ? `${value / 1_000} s` : ''
    return `${number(value)} ms${human && ` (${human})`}`
  }
  if (name.endsWith('_BYTES') && value >= 1024) {
    const human = value >= 1024 * 1024 ? `${value / (1024 * 1024)} MiB` : `${value / 1024} KiB`
    return `${number(value)} bytes (${human})`
  }
  return number(value)
}

/** The constants the MCP contract quotes that live outside modules/mcp/limits.ts. */
const QUOTED_ELSEWHERE: { file: string; module: Record<string, unknown>; names: string[] }[] = [
  {
    file: 'apps/hocuspocus.server/src/documents/search.ts',
    module: search,
    names: ['MAX_QUERY_TERMS', 'MAX_FIND_TEXT_CHARS', 'MAX_SEARCH_VECTOR_CHARS', 'FIND_SNAPSHOT_TTL_MS'],
  },
  { file: 'apps/hocuspocus.server/src/chat/posting.ts', module: posting, names: ['MAX_CHAT_MESSAGE_CHARS'] },
  {
    file: 'packages/doc-schema/src/limits.ts',
    module: docSchema,
    names: [
      'MAX_MARKDOWN_CHARS',
      'MAX_TITLE_CHARS',
      'MAX_NESTING_DEPTH',
      'MAX_WRITE_ELEMENTS',
      'MAX_TABLE_CELLS',
      'MAX_MARKDOWN_EXPANSION_CHARS',
      'MAX_RENDER_WORK',
      'MAX_DIFF_EDITS',
    ],
  },
  { file: 'packages/doc-schema/src/sections/find-text.ts', module: docSchema, names: ['SNIPPET_CHARS'] },
]

function limitsSection(): Section {
  const mcp = 'apps/hocuspocus.server/src/modules/mcp/limits.ts'
  const constants = [
    ...namedConstants(fromRoot(mcp), limits),
    ...QUOTED_ELSEWHERE.flatMap(({ file, module, names }) => namedConstants(fromRoot(file), module, names)),
  ]
  const rows = constants.map((c) => [
    code(c.name),
    withUnit(c),
    c.comment,
    code(c.file.replace(`${ROOT}/`, '').replace('apps/hocuspocus.server/src/', '')),
  ])
  return { name: 'limits', text: table(['constant', 'value', 'what it bounds (its comment)', 'file'], rows) }
}

// ---------- notes ----------

/** Blocks and sections as placeholders: the notes' `{blocks}` and `{sections}` parts, named once below. */
const SOME_BLOCKS: ShownBlocks = { first: slot('F'), last: slot('L'), count: slot('B'), lastCut: false }
const SOME_PARTS: ShownSectionPart[] = [{ ...SOME_BLOCKS, sectionId: slot('X') }]

/** A note about blocks or sections with their rendering replaced by its placeholder. */
const withParts = (text: string) =>
  text.replace(shownSections(SOME_PARTS), '{sections}').replace(shownBlocks(SOME_BLOCKS), '{blocks}')

const LIMIT_BELOW_MAX = slot('limit')

type NoteRow = [tool: string, when: string, text: string]

function noteRows(): NoteRow[] {
  const below = (max: number) => `with \`limit\` below ${max}`
  return [
    ['find_documents', 'more rows exist: first', notes.nextFindPage(slot('cursor'))],
    ['find_documents', `then, ${below(limits.MAX_FIND_LIMIT)}`, notes.moreDocuments(LIMIT_BELOW_MAX)],
    [
      'find_documents',
      `then, with \`limit\` ${limits.MAX_FIND_LIMIT}; also a run past the snapshot's cap`,
      notes.moreDocuments(limits.MAX_FIND_LIMIT),
    ],
    [
      'find_sections without slug',
      'a document has more matching sections than shown (one per such document)',
      notes.moreInDocument(slot('slug'), slot('shown'), slot('total')),
    ],
    ['find_sections without slug', 'more documents match: first', notes.nextSectionsPage(slot('cursor'))],
    [
      'find_sections without slug',
      `then, ${below(limits.MAX_FIND_SECTIONS_DOCUMENTS)}`,
      notes.moreMatchingDocuments(LIMIT_BELOW_MAX),
    ],
    [
      'find_sections without slug',
      `then, with \`limit\` ${limits.MAX_FIND_SECTIONS_DOCUMENTS}; also a run past the snapshot's cap`,
      notes.moreMatchingDocuments(limits.MAX_FIND_SECTIONS_DOCUMENTS),
    ],
    [
      'find_sections with slug, get_outline, list_chat_rooms',
      'a page does not reach the last line',
      notes.nextStart(slot('start')),
    ],
    [
      'find_sections with slug',
      'the call shows fewer than all matches (cut, or `start` > 1)',
      notes.sectionMatchesTruncated(slot('shown'), slot('total')),
    ],
    [
      'get_outline',
      'the call shows fewer than all headings (cut, or `start` > 1)',
      notes.outlineTruncated(slot('shown'), slot('total')),
    ],
    [
      'list_chat_rooms',
      'the call shows fewer than all rooms (cut, or `start` > 1)',
      notes.roomsTruncated(slot('shown'), slot('total')),
    ],
    [
      'read_chat_thread',
      'older messages exist than the oldest shown (`seq`: that oldest one)',
      notes.olderMessages(slot('seq')),
    ],
    [
      'read_document, whole',
      'cut; `total` is the Markdown counted',
      notes.documentCut(slot('shown'), slot('total')),
    ],
    [
      'read_document, whole',
      `cut, the Markdown longer than \`MAX_COUNTED_CHARS\``,
      notes.documentCut(slot('shown'), undefined),
    ],
    [
      'read_document, whole',
      'cut, counting stopped at `MAX_RENDER_WORK` after `counted` characters',
      notes.documentCut(slot('shown'), undefined, slot('counted')),
    ],
    [
      'read_document, whole',
      'the render reached `MAX_RENDER_WORK` before the budget',
      notes.documentCutByWork(slot('shown')),
    ],
    [
      'read_document with section_id',
      'cut on a block boundary, the next block exists',
      notes.nextBlock(slot('section_id'), slot('block')),
    ],
    [
      'read_document with section_id',
      'a block longer than the budget was cut (`offset`: its characters shown so far)',
      notes.nextBlock(slot('section_id'), slot('block'), slot('offset')),
    ],
    [
      'read_document with section_id',
      '(after the next-page note) cut, `max_chars` given and below `MAX_READ_CHARS`',
      withParts(notes.sectionCutByMaxChars(slot('shown'), SOME_BLOCKS)),
    ],
    [
      'read_document with section_id',
      '(after the next-page note) cut at the full budget',
      withParts(notes.sectionCutAtCeiling(slot('shown'), SOME_BLOCKS)),
    ],
    [
      'read_document with section_id',
      '(after the next-page note) the render reached `MAX_RENDER_WORK` first',
      withParts(notes.sectionCutByWork(slot('shown'), SOME_BLOCKS)),
    ],
    [
      'read_document with with_subsections',
      'cut: every part the resume needs (`from_section` left out when it is `section_id`, `from_block` at a heading, `block_offset` unless the block was cut)',
      notes.nextChapterPart(slot('section_id'), {
        fromSection: slot('from_section'),
        fromBlock: slot('block'),
        blockOffset: slot('offset'),
      }),
    ],
    [
      'read_document with with_subsections',
      'cut, the read resumes at a subsection heading',
      notes.nextChapterPart(slot('section_id'), { fromSection: slot('from_section'), fromBlock: 1 }),
    ],
    [
      'read_document with with_subsections',
      'cut before a heading with no id of its own',
      notes.chapterStopsAtUnnamed,
    ],
    [
      'read_document with with_subsections',
      '(after the next-page note) cut, `max_chars` given and below `MAX_READ_CHARS`',
      withParts(notes.chapterCutByMaxChars(slot('shown'), SOME_PARTS)),
    ],
    [
      'read_document with with_subsections',
      '(after the next-page note) cut at the full budget',
      withParts(notes.chapterCutAtCeiling(slot('shown'), SOME_PARTS)),
    ],
    [
      'read_document with with_subsections',
      '(after the next-page note) the render reached `MAX_RENDER_WORK` first',
      withParts(notes.chapterCutByWork(slot('shown'), SOME_PARTS)),
    ],
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

/** Refusals of paging arguments, from the functions that check them. */
function pagingRefusals(): [string, string][] {
  const refusal = (result: { kind: string; message?: string }) => {
    if (result.kind !== 'error' || result.message === undefined) throw new Error('expected a refusal')
    return result.message
  }
  const binding = { query: 'a', scope: 'mine', limit: limits.DEFAULT_FIND_LIMIT } as const
  const otherRun = encodeCursor({
    ...binding,
    query: 'b',
    stage: 'first',
    asOf: new Date().toISOString(),
    shown: [],
  })
  const tooMany = Array.from({ length: search.MAX_QUERY_TERMS + 1 }, (_, i) => `w${i}`).join(' ')
  return [
    ['scope `public` without a query', PUBLIC_NEEDS_QUERY],
    ['a query without letters or digits', refusal(queryTermsOf('+++'))],
    [`a query of ${search.MAX_QUERY_TERMS + 1} terms`, refusal(queryTermsOf(tooMany))],
    ['a cursor the server did not give out', refusal(decodeCursor('not-a-cursor', binding))],
    ['a cursor of another query, scope or limit', refusal(decodeCursor(otherRun, binding))],
    ['a cursor whose paging run has expired', CURSOR_EXPIRED],
  ]
}

function notesSection(): Section {
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

/** The answers every tool call can get from the call's wrapper and the document lookup, not from the tool. */
function refusalsSection(): Section {
  const rows: [string, string][] = [
    ['no such document, or no access (the same answer)', notFoundMessage(slot('slug'))],
    ['over the tool-call rate limit', rateLimitMessage(slot('limit'), slot('seconds'))],
    ['over the completion rate limit', rateLimitMessage(slot('limit'), slot('seconds'), 'completions')],
    ["the user's share of server time is spent", serverTimeMessage(slot('seconds'))],
    ['the database cannot be reached (stopped, restarting)', DATABASE_UNAVAILABLE_MESSAGE],
    ['an unexpected failure (logged in full)', GENERIC_FAILURE],
    ['cancelled by its caller while its POST is still open', CANCELLED_MESSAGE],
  ]
  return {
    name: 'refusals',
    text: table(
      ['situation', 'answer'],
      rows.map(([when, text]) => [when, code(text)]),
    ),
  }
}

/** Every generated section, in the order the reference shows them. */
export function generatedSections(listed: readonly ListedTool[]): Section[] {
  const perTool = TOOLS.map((tool) => {
    const entry = listed.find((l) => l.name === tool.name)
    if (!entry) throw new Error(`tools/list does not list ${tool.name}`)
    return toolSection(tool, entry)
  })
  return [
    frameSection(),
    toolsOverview(listed),
    ...perTool,
    notesSection(),
    limitsSection(),
    refusalsSection(),
  ]
}
