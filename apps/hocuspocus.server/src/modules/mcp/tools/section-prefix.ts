/**
 * The one place a section_id argument is resolved: get_outline prints each id by its shortest start that
 * no other id of the document shares (render/outline.ts), and every tool taking a section_id accepts such a
 * start. Before the tool's handler runs, a start is replaced by the whole id it begins, so the tool, its
 * answer and the document model only ever see whole ids; a whole id is passed on untouched (no outline is
 * opened for it). A start that several ids share, or none, is refused here naming what to do.
 */
import { ok, type Refusal, type Result, refuse, refuseFor } from '@collab/doc-schema'
import { MAX_PREFIX_CANDIDATES, MIN_SECTION_ID_PREFIX } from '../limits.ts'
import type { ToolContext } from './context.ts'
import { headingsOf, openOutline } from './open-document.ts'

/** What a start of an id is made of: the id alphabet, shorter than a whole id. */
const ID_START = /^[A-Za-z0-9_-]{1,15}$/

/**
 * `tool` with its `section_id` argument resolved first (a tool without one is returned as it is). The
 * handler gets the whole id, so an edit's answer prints it and the edit still carries the rev of the read.
 */
export function withSectionPrefixes<T extends PrefixableTool>(tool: T): T {
  if (!('section_id' in tool.inputSchema && 'slug' in tool.inputSchema)) return tool
  const handler = tool.handler.bind(tool)
  const resolving: PrefixableTool['handler'] = async (args, ctx) => {
    const given = args.section_id
    if (typeof given !== 'string' || typeof args.slug !== 'string' || !ID_START.test(given))
      return handler(args, ctx) // a whole id, or no id at all: the tool's own answer
    const whole = await resolveSectionId(ctx, args.slug, given)
    if (whole.kind === 'error') return whole
    return handler({ ...args, section_id: whole.value }, ctx)
  }
  // The handler's answers are the tool's own or a Refusal, which every tool's answer type includes.
  return { ...tool, handler: resolving } as T
}

/** What the wrapper needs of a tool (tool.ts's Tool, whose answers include a Refusal). */
type PrefixableTool = {
  inputSchema: object
  handler(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown | Refusal>
}

/**
 * The whole id that `given` names in the document `slug`: itself when it is not the start of one (a whole
 * id, or text no id starts with, which the tool refuses in its own words), else the one heading id that
 * starts with it. Refused: shorter than MIN_SECTION_ID_PREFIX, the start of no heading's
 * id, or of several (naming up to MAX_PREFIX_CANDIDATES of them, by their place in get_outline).
 */
export async function resolveSectionId(
  ctx: ToolContext,
  slug: string,
  given: string,
): Promise<Result<string>> {
  if (!ID_START.test(given)) return ok(given)
  const opened = await openOutline(ctx, slug) // first: an unknown slug is refused as the tool would
  if (opened.kind === 'error') return opened
  if (given.length < MIN_SECTION_ID_PREFIX)
    return refuseFor('section_not_found', tooShort(given), 'section_id') // names no section: not found
  const headings = headingsOf(opened.value.outline)
  const matches: Array<{ sectionId: string; line: number }> = []
  headings.forEach(({ sectionId }, index) => {
    if (sectionId.startsWith(given) && !matches.some((m) => m.sectionId === sectionId))
      matches.push({ sectionId, line: index + 1 })
  })
  if (matches.length === 1) return ok(matches[0]!.sectionId)
  if (matches.length === 0) return refuseFor('section_not_found', unknownStart(given), 'section_id')
  return refuse('invalid_input', ambiguousStart(given, matches), 'section_id')
}

const OUTLINE_CALL = 'Call get_outline for the current section ids.'

const tooShort = (given: string) =>
  `section_id: "${given}" is too short to name a section: give the id as get_outline prints it (at least ` +
  `its first ${MIN_SECTION_ID_PREFIX} characters) or whole. ${OUTLINE_CALL}`

const unknownStart = (given: string) =>
  `section_id: no heading's id starts with "${given}" (the heading may have been removed). ${OUTLINE_CALL}`

function ambiguousStart(given: string, matches: Array<{ sectionId: string; line: number }>): string {
  const shown = matches.slice(0, MAX_PREFIX_CANDIDATES)
  const listed = shown
    .map(({ sectionId, line }) => `${sectionId} (heading ${line} of get_outline)`)
    .join(', ')
  const more = matches.length > shown.length ? ` and ${matches.length - shown.length} more` : ''
  return (
    `section_id: "${given}" is the start of ${matches.length} section ids: ${listed}${more}. ` +
    'Pass the whole id of the one you mean, or the longer start get_outline prints for it now.'
  )
}
