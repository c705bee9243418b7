/** decide_suggestions: accept or reject pending suggestions, by id or all at once (scope write). */
import { decideSuggestions as decide, refuse } from '@collab/doc-schema'
import { z } from 'zod'
import { MAX_DECIDED_IDS } from '../limits.ts'
import { slugField } from './fields.ts'
import { defineTool } from './tool.ts'
import { resolveForWrite, suggestsIn } from './write-path.ts'

export const decideSuggestions = defineTool({
  name: 'decide_suggestions',
  kind: 'destructive',
  title: 'Accept or reject suggestions',
  description:
    'Accepts or rejects pending suggestions (list_suggestions shows them): accepting makes proposed text ' +
    "the document's and deletes text proposed for deletion; rejecting does the inverse. A block whose text " +
    'is all removed goes with it. Give ids (up to ' +
    `${MAX_DECIDED_IDS}) or all: true. An id that is not pending is refused and nothing changes. Needs write ` +
    'access and a token with scope write; an agent whose edits are suggestions (scope suggest, or a document ' +
    'whose owner makes agents suggest) cannot decide them: a person does, in the editor.',
  inputSchema: {
    slug: slugField('The document slug.'),
    decision: z.enum(['accept', 'reject']).describe('accept or reject.'),
    ids: z
      .array(z.string().min(1).max(40))
      .min(1)
      .max(MAX_DECIDED_IDS)
      .optional()
      .describe('The suggestions to decide, by the ids list_suggestions shows.'),
    all: z.boolean().optional().describe('true: decide every pending suggestion of the document.'),
  },
  async handler({ slug, decision, ids, all }, ctx) {
    if ((ids === undefined) === (all !== true))
      return refuse(
        'invalid_input',
        'ids: give either ids (from list_suggestions) or all: true, not both and not neither.',
        'ids',
      )
    const resolved = await resolveForWrite(ctx, slug)
    if (resolved.kind === 'error') return resolved
    if (suggestsIn(ctx, resolved.value))
      return refuse(
        'forbidden',
        `slug: your edits of "${slug}" are suggestions (its owner makes agents suggest), so you cannot decide them; a person accepts or rejects them in the editor.`,
        'slug',
      )
    const outcome = await ctx.writer.write(
      resolved.value.document.room,
      {
        mcp: {
          tool: ctx.tool,
          userId: ctx.principal.user.id,
          handle: ctx.principal.user.handle,
          principal: ctx.principal,
        },
      },
      (fragment) => decide(fragment, all ? 'all' : ids!, decision),
      { signal: ctx.signal },
    )
    if (outcome.kind === 'error') return outcome
    const { decided } = outcome.value
    if (decided.length === 0) return 'decided: none (no pending suggestions)'
    return `${decision === 'accept' ? 'accepted' : 'rejected'}: ${decided.join(', ')}`
  },
})
