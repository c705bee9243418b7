/**
 * revert_changes: undoes one version's changes, or one author's (a handle and app) since a version, as one
 * new edit on the live document that keeps everyone else's later changes; refused, naming the blocks,
 * where someone changed since a block the undone changes touched (documents/history-undo.ts;
 * docs/history.md "Restore and revert").
 */
import { z } from 'zod'
import { revertAuthor, revertVersion } from '../../../documents/history-actions.ts'
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
    `version_id (at most ${MAX_REVERT_VERSIONS} versions). Later changes by others stay; where someone ` +
    'changed a block these changes touched, nothing is changed and the refusal names those blocks. A ' +
    'version of the document as it was is saved first and named in the answer (before_version). ' +
    'Needs write access and a token with scope write.',
  inputSchema: {
    slug: slugField('The document slug.'),
    version_id: z
      .number()
      .int()
      .min(1)
      .describe('The version whose changes to undo; with author: undo the changes after it.'),
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
  async handler({ slug, version_id, author, app }, ctx) {
    const id = versionIdOf(version_id)
    if (id.kind === 'error') return id
    if (app !== undefined && author === undefined)
      return {
        kind: 'error',
        code: 'invalid_input',
        field: 'app',
        message: 'app: only with author (whose changes made through that app).',
      }
    const resolved = await resolveForWrite(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const { document } = resolved.value
    if (author === undefined) {
      const done = await revertVersion(actionDeps(ctx), document, id.value, actorOf(ctx))
      if (done.kind === 'error') return done
      return actionAnswer(`reverted: the changes of version ${version_id}`, done.value)
    }
    const filter = { handle: author.replace(/^@/, ''), ...(app !== undefined ? { app } : {}) }
    const done = await revertAuthor(actionDeps(ctx), document, filter, { versionId: id.value }, actorOf(ctx))
    if (done.kind === 'error') return done
    return actionAnswer(
      `reverted: ${author}'s changes${app !== undefined ? ` through "${app}"` : ''} in versions ${done.value.reverted.join(', ')}`,
      done.value,
    )
  },
})
