/** The limits section: the named constants the MCP contract quotes, their values, comments and files. */
import * as docSchema from '@collab/doc-schema'
import * as search from '../../../documents/search.ts'
import * as services from '../../../limits.ts'
import * as limits from '../limits.ts'
import { type NamedConstant, namedConstants } from './constants.ts'
import { code, number, type Section, table } from './format.ts'
import { fromRoot, ROOT } from './root.ts'

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
    names: ['FIND_SNAPSHOT_TTL_MS'],
  },
  {
    file: 'apps/hocuspocus.server/src/limits.ts',
    module: services,
    names: [
      'MAX_QUERY_TERMS',
      'MAX_RANKED_DOCUMENTS',
      'MAX_RANKED_TEXT_BYTES',
      'MAX_SEARCH_CANDIDATES',
      'MAX_SEARCH_CANDIDATE_PARTS',
      'MAX_SEARCH_CHECKED_TEXT_BYTES',
      'MAX_FIND_TEXT_CHARS',
      'SEARCH_CHUNK_OVERLAP_CHARS',
      'MAX_SEARCH_VECTOR_CHARS',
      'MAX_CHAT_MESSAGE_CHARS',
    ],
  },
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
]

export function limitsSection(): Section {
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
