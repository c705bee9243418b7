/**
 * What restore_version and revert_changes share: the history actions' dependencies from a tool's context
 * (the module's writer applies the edit to the live document, attributed to this agent and its app), and
 * the answer's lines.
 */
import { type Result, refuse } from '@collab/doc-schema'
import type { ActionOutcome, HistoryActionDeps } from '../../../documents/history-actions.ts'
import type { ToolContext } from './context.ts'

export function actionDeps(ctx: ToolContext): HistoryActionDeps {
  return {
    history: {
      // Read in slices, decoded on the documents' worker (documents/sliced-read.ts).
      findVersion: (documentId, lookup) => ctx.documents.findVersionState(documentId, lookup),
      versionsAfter: (documentId, since, limit) => ctx.documents.versionsAfter(documentId, since, limit),
    },
    write: (room, context, edit, rest) => ctx.writer.write(room, context, edit, { signal: ctx.signal, rest }),
    planUndo: (user, input) => ctx.documents.planUndo(user, input),
    async saveBefore(user, document, name, known) {
      await ctx.writer.storePending(document.room)
      return ctx.documents.saveBeforeVersion(user, document, name, known)
    },
  }
}

/** The caller: their share of the worker, and the context an edit carries (attribution: history-authors.ts). */
export function actorOf(ctx: ToolContext) {
  return {
    user: ctx.principal.user.id,
    context: {
      mcp: {
        tool: ctx.tool,
        userId: ctx.principal.user.id,
        handle: ctx.principal.user.handle,
        principal: ctx.principal,
      },
    },
  }
}

export function versionIdOf(raw: number, field = 'version_id'): Result<bigint> {
  if (!Number.isSafeInteger(raw) || raw < 1)
    return refuse('invalid_input', `${field}: a version id (list_versions names them).`, field)
  return { kind: 'ok', value: BigInt(raw) }
}

/** The answer of a restore or revert: what happened, and how to undo it. */
export function actionAnswer(what: string, outcome: ActionOutcome): string {
  return [
    outcome.changed ? what : `${what}: nothing to change, the content already was so`,
    `before_version: ${outcome.beforeVersionId} (the document as it was just before; restore_version with it undoes this)`,
  ].join('\n')
}
