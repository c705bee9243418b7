/**
 * The shared path of the editing tools: resolve the document for write (owner, or an editor member of a
 * document that is not read-only, with a token that has scope write), apply the edit through the live
 * document, and answer only once the change is stored.
 */

import { type Result, refuse } from '@collab/doc-schema'
import type * as Y from 'yjs'
import type { Resolved } from '../../../documents/rows.ts'
import type { ToolContext } from './context.ts'
import { resolveForAgent } from './open-document.ts'
import type { ToolAnswer } from './tool.ts'

export async function resolveForWrite(ctx: ToolContext, slug: string): Promise<Result<Resolved>> {
  const resolved = await resolveForAgent(ctx, slug)
  if (resolved.kind === 'error') return resolved
  const { access, document } = resolved.value
  if (access.canWrite) return resolved
  const why = !ctx.principal.scopes.includes('write')
    ? 'this API token has only the read scope; ask for a token with scope write'
    : access.role === 'viewer'
      ? 'you are a viewer of it; ask its owner to make you an editor'
      : access.role === 'public'
        ? "it is another person's public document; ask its owner to share it with you as an editor"
        : document.readOnly
          ? 'it is read-only; only its owner can change it'
          : 'you do not have write access'
  return refuse('forbidden', `slug: you can read "${slug}" but not change it: ${why}.`, 'slug')
}

/** An edit of the document model on the live fragment: its value, or a refusal that changed nothing. */
export type Edit<T> = (fragment: Y.XmlFragment) => Result<T>

/** Resolves `slug` for write, applies `edit` as the calling tool, and answers once the change is stored. */
export async function editDocument<T>(
  ctx: ToolContext,
  slug: string,
  edit: Edit<T>,
  answer: (value: T) => string,
): Promise<ToolAnswer> {
  const resolved = await resolveForWrite(ctx, slug)
  if (resolved.kind === 'error') return resolved
  const outcome = await ctx.writer.write(
    resolved.value.document.room,
    // The principal goes with the change: the store attributes it to this agent and its app (history-authors.ts).
    {
      mcp: {
        tool: ctx.tool,
        userId: ctx.principal.user.id,
        handle: ctx.principal.user.handle,
        principal: ctx.principal,
      },
    },
    edit,
    {
      signal: ctx.signal,
      beforeApply:
        ctx.hold && ctx.signal
          ? () => ctx.hold!('write', { tool: ctx.tool, signal: ctx.signal! })
          : undefined,
    },
  )
  return outcome.kind === 'error' ? outcome : answer(outcome.value)
}
