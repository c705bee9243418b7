/**
 * restore_version: makes a document's content equal a version's, as one new edit on the live document
 * (editors see it at once), attributed to the agent and its app as a restore. A named version of the
 * document as it was is taken first, so the restore can itself be undone (docs/history.md).
 */
import { z } from 'zod'
import { restoreVersion as restore } from '../../../documents/history-actions.ts'
import { MAX_HISTORY_STATE_BYTES } from '../../../limits.ts'
import { slugField } from './fields.ts'
import { actionAnswer, actionDeps, actorOf, versionIdOf } from './history-actions.ts'
import { defineTool } from './tool.ts'
import { resolveForWrite } from './write-path.ts'

export const restoreVersion = defineTool({
  name: 'restore_version',
  kind: 'write',
  title: 'Restore a version',
  description:
    "Makes a document's content what it was at a version (an id list_versions shows), as one new edit: " +
    'people editing see it at once, and history records it as your restore. Everything changed since that ' +
    'version is undone, by anyone. A version of the document as it was is saved first and named in the ' +
    'answer (before_version): restore that to undo the restore. To undo only some changes and keep ' +
    `others', use revert_changes. Refused for a document or version over ${MAX_HISTORY_STATE_BYTES} bytes. ` +
    'Needs write access and a token with scope write.',
  inputSchema: {
    slug: slugField('The document slug.'),
    version_id: z.number().int().min(1).describe('The version to restore (list_versions shows ids).'),
  },
  async handler({ slug, version_id }, ctx) {
    const id = versionIdOf(version_id)
    if (id.kind === 'error') return id
    const resolved = await resolveForWrite(ctx, slug)
    if (resolved.kind === 'error') return resolved
    const done = await restore(actionDeps(ctx), resolved.value.document, id.value, actorOf(ctx))
    if (done.kind === 'error') return done
    return actionAnswer(`restored: version ${version_id}`, done.value)
  },
})
