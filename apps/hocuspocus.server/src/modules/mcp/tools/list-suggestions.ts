/** list_suggestions: a document's pending suggestions (proposed insertions and deletions), by id. */
import { listSuggestions as pendingSuggestions } from '@collab/doc-schema'
import {
  DEFAULT_SUGGESTIONS_LIMIT,
  MAX_READ_CHARS,
  MAX_SUGGESTION_TEXT_CHARS,
  MAX_SUGGESTIONS_LIMIT,
} from '../limits.ts'
import { walkLines } from '../render/budget.ts'
import { renderOutput } from '../render/frame.ts'
import { suggestionLine, suggestionNotes } from '../render/suggestions.ts'
import { readCall } from './context.ts'
import { listLimitField, slugField } from './fields.ts'
import { goneRefusal, resolveForAgent } from './open-document.ts'
import { defineTool } from './tool.ts'

export const listSuggestions = defineTool({
  name: 'list_suggestions',
  kind: 'read',
  title: 'List pending suggestions',
  description:
    "A document's pending suggestions: changes an agent in suggest mode proposed, not yet accepted or " +
    'rejected. One line each, in document order: its id, who proposed it (the person and the app), when, ' +
    `its section, and the text it adds and removes (up to ${MAX_SUGGESTION_TEXT_CHARS} characters each). ` +
    `At most ${MAX_SUGGESTIONS_LIMIT} per call (default ${DEFAULT_SUGGESTIONS_LIMIT}) and ${MAX_READ_CHARS} ` +
    'characters; a note says when there are more. Pass ids to decide_suggestions. Text only.',
  inputSchema: {
    slug: slugField(),
    limit: listLimitField('Suggestions', MAX_SUGGESTIONS_LIMIT, DEFAULT_SUGGESTIONS_LIMIT),
  },
  async handler({ slug, limit }, ctx) {
    const resolved = await resolveForAgent(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const content = await ctx.reader.open(resolved.value.document.room, readCall(ctx))
    if (!content) return goneRefusal(slug)
    try {
      const { suggestions, more } = pendingSuggestions(
        content.fragment,
        limit ?? DEFAULT_SUGGESTIONS_LIMIT,
        MAX_SUGGESTION_TEXT_CHARS,
      )
      const source = { kind: 'suggestions', slug, whose: resolved.value.access.whose } as const
      if (suggestions.length === 0)
        return renderOutput({ source, body: 'No pending suggestions.', notes: [] })
      const walk = walkLines(suggestions.map(suggestionLine), MAX_READ_CHARS)
      const notes = [suggestionNotes.howToDecide()]
      if (walk.kept < suggestions.length) notes.push(suggestionNotes.cut(walk.kept, suggestions.length))
      else if (more) notes.push(suggestionNotes.more(walk.kept))
      return renderOutput({ source, body: walk.text, notes })
    } finally {
      content.release()
    }
  },
})
