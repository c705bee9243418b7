/**
 * revert_changes: undoes one version's changes, or one author's (a handle and app) since a version or a
 * time, as one
 * new edit on the live document that keeps everyone else's later changes; refused, naming the blocks,
 * where someone changed since a block the undone changes touched (documents/history-undo.ts;
 * docs/history.md "Restore and revert").
 */
import { z } from 'zod'
import {
  MAX_SINCE_TIME_CHARS,
  revertAuthor,
  revertVersion,
  sinceTimeOf,
} from '../../../documents/history-actions.ts'
import { MAX_LABEL_CHARS, MAX_REVERT_VERSIONS } from '../../../limits.ts'
import { slugField } from './fields.ts'
import { actionAnswer, actionDeps, actorOf, versionIdOf } from './history-actions.ts'
import { defineTool } from './tool.ts'
import { resolveForWrite } from './write-path.ts'

export const revertChanges = defineTool({
  name: 'revert_changes',
  kind: 'write',
  title: 'Revert changes',
  description:
    "Undoes changes as one new edit, keeping everyone else's: without author, what version version_id " +
    'changed (since the version before it); with author (a handle, as list_versions names people) and ' +
    "optionally app (an API token's or OAuth app's name), that author's changes in every version after " +
    'version_id, or after the newest version taken at or before since_time (an ISO 8601 time), ' +
    `at most ${MAX_REVERT_VERSIONS} versions. Later changes by others stay; where someone ` +
    'changed a block these changes touched, nothing is changed and the refusal names those blocks. A ' +
    'version of the document as it was is saved first and named in the answer (before_version). ' +
    'Needs write access and a token with scope write.',
  inputSchema: {
    slug: slugField('The document slug.'),
    version_id: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'The version whose changes to undo; with author: undo the changes after it. Needed unless author and since_time are given.',
      ),
    since_time: z
      .string()
      .max(MAX_SINCE_TIME_CHARS)
      .optional()
      .describe(
        "With author, instead of version_id: an ISO 8601 time; undo the author's changes after the newest version taken at or before it.",
      ),
    author: z
      .string()
      .trim()
      .min(1)
      .max(MAX_LABEL_CHARS)
      .optional()
      .describe("Whose changes to undo: a person's handle (an agent's changes are its user's)."),
    app: z
      .string()
      .max(MAX_LABEL_CHARS)
      .optional()
      .describe("With author: only the changes made through this app (API token's or OAuth app's name)."),
  },
  async handler({ slug, version_id, since_time, author, app }, ctx) {
    const refused = (field: string, message: string) =>
      ({ kind: 'error', code: 'invalid_input', field, message: `${field}: ${message}` }) as const
    if (app !== undefined && author === undefined)
      return refused('app', 'only with author (whose changes made through that app).')
    if (author === undefined && since_time !== undefined)
      return refused(
        'since_time',
        'only with author (whose changes since then to undo); to undo one version, pass its version_id.',
      )
    if (version_id !== undefined && since_time !== undefined)
      return refused('since_time', 'pass version_id or since_time, not both.')
    if (version_id === undefined && since_time === undefined)
      return refused(
        'version_id',
        author === undefined
          ? 'the version whose changes to undo (list_versions names them).'
          : "with author, pass version_id (undo the author's changes after that version) or since_time (after the newest version at or before that time).",
      )
    const id = version_id === undefined ? undefined : versionIdOf(version_id)
    if (id?.kind === 'error') return id
    const at = since_time === undefined ? undefined : sinceTimeOf(since_time)
    if (at?.kind === 'error') return at
    const resolved = await resolveForWrite(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const { document } = resolved.value
    if (author === undefined) {
      if (!id) return refused('version_id', 'the version whose changes to undo.')
      const done = await revertVersion(actionDeps(ctx), document, id.value, actorOf(ctx))
      if (done.kind === 'error') return done
      return actionAnswer(`reverted: the changes of version ${version_id}`, done.value)
    }
    const filter = { handle: author.replace(/^@/, ''), ...(app !== undefined ? { app } : {}) }
    const since = at ? { at: at.value } : id ? { versionId: id.value } : null
    if (!since) return refused('version_id', 'or since_time, with author.')
    const done = await revertAuthor(actionDeps(ctx), document, filter, since, actorOf(ctx))
    if (done.kind === 'error') return done
    return actionAnswer(
      `reverted: ${author}'s changes${app !== undefined ? ` through "${app}"` : ''} in versions ${done.value.reverted.join(', ')}`,
      done.value,
    )
  },
})
