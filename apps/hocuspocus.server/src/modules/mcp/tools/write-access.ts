/**
 * The shared steps of the editing tools: access through the documents service (write access = owner, or
 * an editor member of a document that is not read-only, with a token that has scope write), then the
 * write through the live document, answered only once stored.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type * as Y from 'yjs'
import type { Resolved } from '../../../documents/service.ts'
import { toToolFieldNames } from '../domain/field-names.ts'
import { refusal, type ToolContext, textResult } from './context.ts'

export async function resolveForWrite(
  ctx: ToolContext,
  slug: string,
): Promise<{ kind: 'ok'; value: Resolved } | { kind: 'error'; result: CallToolResult }> {
  const resolved = await ctx.services.documents.resolve(slug, ctx.principal)
  if (resolved.kind === 'error') return { kind: 'error', result: refusal(resolved.message) }
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
  return { kind: 'error', result: refusal(`slug: you can read "${slug}" but not change it: ${why}.`) }
}

export async function writeAndAnswer<T>(
  ctx: ToolContext,
  resolved: Resolved,
  tool: string,
  edit: (
    fragment: Y.XmlFragment,
  ) => { kind: 'ok'; value: T } | { kind: 'error'; code: string; message: string },
  answer: (value: T) => string,
): Promise<CallToolResult> {
  const outcome = await ctx.writer.write(
    resolved.document.room,
    { mcp: { tool, userId: ctx.principal.user.id } },
    edit,
  )
  if (outcome.kind === 'error') return refusal(toToolFieldNames(outcome.message))
  if (outcome.kind === 'unstored') {
    return refusal(
      `slug: the change reached the live document but storing it was not confirmed; the server keeps retrying. Call read_document to check before editing again.`,
    )
  }
  return textResult(answer(outcome.value))
}
