/**
 * list_versions: a document's versions, newest first, each with when, why, who (every author since the
 * version before it, with the app) and what (sections added, removed, changed; characters in and out).
 * Pages by cursor (the id of the last version shown), within MAX_READ_CHARS.
 */
import { refuse } from '@collab/doc-schema'
import { z } from 'zod'
import { MAX_READ_CHARS } from '../limits.ts'
import { walkLines } from '../render/budget.ts'
import { renderOutput } from '../render/frame.ts'
import { historyNotes, versionLine } from '../render/history.ts'
import { listLimitField, slugField } from './fields.ts'
import { resolveForAgent } from './open-document.ts'
import { defineTool } from './tool.ts'

/** Versions one page shows by default, and at most. */
export const DEFAULT_VERSIONS_LIMIT = 20
export const MAX_VERSIONS_LIMIT = 50

/** A list_versions cursor: `v` and the id of the last version the previous page showed. */
const CURSOR = /^v(\d{1,18})$/

export const listVersions = defineTool({
  name: 'list_versions',
  kind: 'read',
  title: 'List versions of a document',
  description:
    "A document's versions, newest first: one line each with its version id, time, why it was taken " +
    "(after an agent's write, after a pause in editing, named…), who changed it since the version before " +
    '(people, and agents with the app: API token or OAuth app name) and what (sections added, removed and ' +
    `changed; characters in and out). At most ${MAX_VERSIONS_LIMIT} versions per call (default ` +
    `${DEFAULT_VERSIONS_LIMIT}) and ${MAX_READ_CHARS} characters; a note names the cursor of the next page. ` +
    'Pass a version id to changes_since to see what changed since it. Text only.',
  inputSchema: {
    slug: slugField(),
    limit: listLimitField('Versions', MAX_VERSIONS_LIMIT, DEFAULT_VERSIONS_LIMIT),
    cursor: z
      .string()
      .max(40)
      .optional()
      .describe('The cursor a previous page named, to read the next (older) page.'),
  },
  async handler({ slug, limit, cursor }, ctx) {
    let before: bigint | undefined
    if (cursor !== undefined) {
      const match = CURSOR.exec(cursor)
      if (!match)
        return refuse(
          'invalid_input',
          `cursor: "${cursor.slice(0, 40)}" is not a list_versions cursor; pass the cursor a note named, or call without cursor for the newest versions.`,
          'cursor',
        )
      before = BigInt(match[1]!)
    }
    const resolved = await resolveForAgent(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const documentId = resolved.value.document.id
    const pageSize = limit ?? DEFAULT_VERSIONS_LIMIT
    // One more than shown: whether an older page exists, without counting.
    // The page and its counts in one statement: a version taken meanwhile cannot make them disagree.
    const {
      versions: rows,
      total,
      newer,
    } = await ctx.documents.listVersionsCounted(documentId, { before, limit: pageSize + 1 })
    const source = { kind: 'versions', slug, whose: resolved.value.access.whose } as const
    if (rows.length === 0) {
      const body = before === undefined ? 'No versions yet.' : 'No versions older than the cursor.'
      return renderOutput({ source, body, notes: [historyNotes.lastVersionsPage()] })
    }
    const page = rows.slice(0, pageSize)
    const walk = walkLines(page.map(versionLine), MAX_READ_CHARS)
    const shown = page.slice(0, walk.kept)
    // Versions before this page (`newer`): those the cursor's page and the pages before it showed.
    const notes: string[] = []
    const last = shown.at(-1)!
    if (rows.length > shown.length) notes.push(historyNotes.moreVersions(`v${last.id}`))
    else notes.push(historyNotes.lastVersionsPage())
    notes.push(historyNotes.versionsShown(newer + 1, newer + shown.length, total))
    return renderOutput({ before: [`versions: ${total}`], source, body: walk.text, notes })
  },
})
