/**
 * changes_since: what changed in a document since a version (by id, by time, or the version holding a
 * section rev the agent read), section by section with block-level diffs against the document now, and
 * who made the changes. Bounded by max_chars; a cut answer names the cursor that continues the same
 * comparison, so paging to the end shows every change once.
 */
import { type Result, refuse } from '@collab/doc-schema'
import { z } from 'zod'
import type { SectionChange } from '../../../documents/history-diff.ts'
import type { VersionLookup } from '../../../documents/history-store.ts'
import { stopIfCancelled } from '../infra/cancel.ts'
import { MAX_READ_CHARS } from '../limits.ts'
import { escapeFrameContent, renderOutput } from '../render/frame.ts'
import { authorsText, changeUnits, historyNotes, pageUnits } from '../render/history.ts'
import { readCall } from './context.ts'
import { maxCharsField, optionalSectionIdField, slugField } from './fields.ts'
import { goneRefusal, resolveForAgent } from './open-document.ts'
import { defineTool } from './tool.ts'

/** A changes_since cursor: `c<version id>.<unit>.<offset>` (the base version and where the page starts). */
const CURSOR = /^c(\d{1,18})\.(\d{1,9})\.(\d{1,9})$/

type Start = { lookup: VersionLookup; unit: number; offset: number; field: string }

function startOf(args: {
  since_version?: number
  since_time?: string
  since_rev?: string
  section_id?: string
  cursor?: string
}): Result<Start> {
  const given = ['since_version', 'since_time', 'since_rev', 'cursor'].filter(
    (key) => args[key as keyof typeof args] !== undefined,
  )
  if (given.length > 1)
    return refuse(
      'invalid_input',
      `since_version: pass at most one of since_version, since_time, since_rev or cursor (got ${given.join(', ')}). list_versions names version ids.`,
      'since_version',
    )
  if (args.section_id !== undefined && args.since_rev === undefined)
    return refuse(
      'invalid_input',
      'section_id: only with since_rev (the section whose rev you pass).',
      'section_id',
    )
  // None: since the newest version (what changed since the last one was taken).
  if (given.length === 0) return ok({ lookup: { at: new Date() }, unit: 0, offset: 0, field: 'slug' })
  if (args.since_version !== undefined)
    return ok({ lookup: { id: BigInt(args.since_version) }, unit: 0, offset: 0, field: 'since_version' })
  if (args.since_time !== undefined) {
    const at = new Date(args.since_time)
    if (Number.isNaN(at.getTime()))
      return refuse(
        'invalid_input',
        `since_time: "${args.since_time}" is not a time; pass an ISO 8601 time such as 2026-12-01T09:30:00Z.`,
        'since_time',
      )
    return ok({ lookup: { at }, unit: 0, offset: 0, field: 'since_time' })
  }
  if (args.since_rev !== undefined)
    return ok({
      lookup: { rev: args.since_rev, ...(args.section_id ? { sectionId: args.section_id } : {}) },
      unit: 0,
      offset: 0,
      field: 'since_rev',
    })
  const match = CURSOR.exec(args.cursor!)
  if (!match)
    return refuse(
      'invalid_input',
      `cursor: "${args.cursor!.slice(0, 60)}" is not a changes_since cursor; pass the cursor a note named, or start again with since_version.`,
      'cursor',
    )
  return ok({
    lookup: { id: BigInt(match[1]!) },
    unit: Number(match[2]),
    offset: Number(match[3]),
    field: 'cursor',
  })
}

function ok<T>(value: T): Result<T> {
  return { kind: 'ok', value }
}

function notFound(start: Start, slug: string): ReturnType<typeof refuse> {
  const what =
    'id' in start.lookup
      ? `no version ${start.lookup.id} of "${slug}" is kept`
      : start.field === 'slug'
        ? `"${slug}" has no version yet`
        : 'at' in start.lookup
          ? `no version of "${slug}" at or before ${start.lookup.at.toISOString()} is kept`
          : `no kept version of "${slug}" has a section with rev "${'rev' in start.lookup ? start.lookup.rev : ''}"`
  return refuse(
    'not_found',
    `${start.field}: ${what} (older versions are thinned: docs/history.md). Call list_versions for the versions kept and pass one as since_version.`,
    start.field,
  )
}

export const changesSince = defineTool({
  name: 'changes_since',
  kind: 'read',
  title: 'What changed since a version',
  description:
    'What changed in a document since a version: pass since_version (an id list_versions shows), since_time ' +
    '(the newest version at or before it) or since_rev (a section rev you read or wrote: the newest version ' +
    'in which a section had it; section_id narrows it); none of them: since the newest version. Answers who changed it since (people, agents and ' +
    'their apps), then each section added, removed or changed, with its blocks removed (-) and added (+) as ' +
    'section reads number them (a heading is block 0). Compared with the document now. ' +
    `At most ${MAX_READ_CHARS} characters per call (max_chars lowers it); a cut answer ends with a note ` +
    'naming the cursor that continues it. Text only.',
  inputSchema: {
    slug: slugField(),
    since_version: z.number().int().min(1).optional().describe('A version id (list_versions shows them).'),
    since_time: z
      .string()
      .max(40)
      .optional()
      .describe('An ISO 8601 time: changes since the newest version taken at or before it.'),
    since_rev: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe(
        'A section rev you read or wrote: changes since the newest version in which a section had it.',
      ),
    section_id: optionalSectionIdField('With since_rev: the section that rev is of.'),
    max_chars: maxCharsField('this answer'),
    cursor: z.string().max(60).optional().describe('The cursor a previous answer named, to read on.'),
  },
  async handler(args, ctx) {
    const start = startOf(args)
    if (start.kind === 'error') return start
    const { slug } = args
    const resolved = await resolveForAgent(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const { document, access } = resolved.value
    const base = await ctx.documents.findVersion(document.id, start.value.lookup)
    if (!base) return notFound(start.value, slug)
    stopIfCancelled(ctx.signal)
    // Compared on the documents' worker when either side is large (the version's state goes there).
    const compared = await ctx.reader.changesSince(document.room, base.state, {
      ...readCall(ctx),
      user: ctx.principal.user.id,
    })
    if (!compared) return goneRefusal(slug)
    if (compared.kind === 'error') return compared
    stopIfCancelled(ctx.signal)
    const changes: SectionChange[] = compared.value
    const since = `version ${base.id} (${base.createdAt.toISOString()})`
    const source = { kind: 'changes', slug, whose: access.whose, since } as const
    const count = (kind: string) => changes.filter((change) => change.kind === kind).length
    const charsIn = changes.reduce((sum, change) => sum + change.charsIn, 0)
    const charsOut = changes.reduce((sum, change) => sum + change.charsOut, 0)
    const header = [
      `since: ${since}`,
      `changes: ${count('added')} sections added, ${count('removed')} removed, ${count('changed')} changed; ${charsIn} characters in, ${charsOut} out`,
    ]
    if (changes.length === 0)
      return renderOutput({ before: header, source, body: '', notes: [historyNotes.noChanges(since)] })
    // The authors line is unit 0 of every comparison, so a cursor's positions mean the same on each page.
    const authors = await ctx.documents.authorsAfter(document.id, base.id)
    const units = [escapeFrameContent(`authors: ${authorsText(authors)}`), ...changeUnits(changes)]
    const { unit, offset } = start.value
    if (unit >= units.length)
      return refuse(
        'invalid_input',
        `cursor: it points past the end of the changes (the document changed since); start again with since_version: ${base.id}.`,
        'cursor',
      )
    const page = pageUnits(units, { unit, offset }, args.max_chars ?? MAX_READ_CHARS)
    const notes: string[] = []
    const lastShown = page.next ? (page.next.offset > 0 ? page.next.unit + 1 : page.next.unit) : units.length
    if (page.next) notes.push(historyNotes.moreChanges(`c${base.id}.${page.next.unit}.${page.next.offset}`))
    if (page.next || unit > 0) notes.push(historyNotes.changesShown(unit + 1, lastShown, units.length))
    return renderOutput({ before: header, source, body: page.text, notes })
  },
})
