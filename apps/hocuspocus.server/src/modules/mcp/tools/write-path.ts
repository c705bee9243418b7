/**
 * The shared path of the editing tools: resolve the document for write (owner, or an editor member of a
 * document that is not read-only, with a token that has scope write), apply the edit through the live
 * document, and answer only once the change is stored.
 */

import { randomBytes } from 'node:crypto'
import { proposeEdit, type Result, refuse, type SuggestionAttrs } from '@collab/doc-schema'
import type * as Y from 'yjs'
import type { Resolved } from '../../../documents/rows.ts'
import type { ToolContext } from './context.ts'
import { resolveForAgent } from './open-document.ts'
import type { ToolAnswer } from './tool.ts'

export async function resolveForWrite(ctx: ToolContext, slug: string): Promise<Result<Resolved>> {
  const resolved = await resolveForAgent(ctx, slug)
  return resolved.kind === 'error' ? resolved : writableOf(ctx, slug, resolved.value)
}

/** The resolved document when this caller may write it, else the refusal that says why not. */
function writableOf(ctx: ToolContext, slug: string, resolved: Resolved): Result<Resolved> {
  const { access, document } = resolved
  if (access.canWrite) return { kind: 'ok', value: resolved }
  const why = ctx.principal.scopes.includes('suggest')
    ? 'this token has the suggest scope, which proposes edits (replace_text, edit_blocks, append_to_document) and changes nothing else; ask for a token with scope write'
    : !ctx.principal.scopes.includes('write')
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

/**
 * Whether this agent's edits of the document land as suggestions: its token has the suggest scope, or the
 * document's owner made agents suggest (`agentsSuggest`).
 */
export function suggestsIn(ctx: ToolContext, resolved: Resolved): boolean {
  return ctx.principal.scopes.includes('suggest') || resolved.document.agentsSuggest
}

/** Resolves `slug` for an edit that may be proposed: write access, or in suggest mode the right to propose. */
async function resolveForEdit(
  ctx: ToolContext,
  slug: string,
): Promise<Result<{ resolved: Resolved; suggest: boolean }>> {
  const resolved = await resolveForAgent(ctx, slug)
  if (resolved.kind === 'error') return resolved
  const suggest = suggestsIn(ctx, resolved.value)
  if (suggest && resolved.value.access.canPropose)
    return { kind: 'ok', value: { resolved: resolved.value, suggest } }
  // The same resolution, not a second query (every edit resolved the document twice).
  const writable = writableOf(ctx, slug, resolved.value)
  if (writable.kind === 'error') return writable
  return { kind: 'ok', value: { resolved: writable.value, suggest: false } }
}

/** Characters of a suggestion's id (base64url of random bytes: 8 characters, 48 bits). */
const SUGGESTION_ID_BYTES = 6

/** The suggestion marks of this call: who (from the principal, never from the input), its app, and when. */
async function suggestionOf(ctx: ToolContext): Promise<SuggestionAttrs> {
  const { user, tokenId } = ctx.principal
  const [author] = await ctx.documents
    .resolveAuthors([{ kind: 'agent', userId: user.id, handle: user.handle, credential: tokenId }])
    .catch(() => [])
  const app = author?.a ?? ''
  return {
    id: randomBytes(SUGGESTION_ID_BYTES).toString('base64url'),
    userId: user.id,
    author: app ? `${user.handle} via ${app}` : user.handle,
    at: new Date().toISOString(),
  }
}

/** What the editing tools' descriptions say of suggest mode. */
export const SUGGEST_MODE_TEXT =
  ' In suggest mode (a token with scope suggest, or a document whose owner makes agents suggest) the change ' +
  'is proposed, not made: reads show it as {++added++} / {--removed--}, the answer names its suggestion id, ' +
  'and a person accepts or rejects it; changes that are not text (rules, media, code, formatting, block ' +
  'attributes) are refused there.'

/** The answer's line for an edit that was proposed: its suggestion's id and what happens to it. */
export function proposedLine(id: string): string {
  return `suggestion: ${id} (pending: the change is proposed, not made; a person, or an agent with scope write, accepts or rejects it; list_suggestions shows it)`
}

/** An edit of the document model on the live fragment: its value, or a refusal that changed nothing. */
export type Edit<T> = (fragment: Y.XmlFragment) => Result<T>

/**
 * Resolves `slug` for write, applies `edit` as the calling tool, and answers once the change is stored.
 * In suggest mode (`suggestsIn`) the edit is proposed instead (doc-schema's proposeEdit): its changes land
 * as suggestions by this agent, and the answer names the suggestion. `sectionId`: the section whose rev
 * the edit answers as `rev`, made the live one's after proposing.
 */
export async function editDocument<T>(
  ctx: ToolContext,
  slug: string,
  edit: Edit<T>,
  answer: (value: T) => string,
  sectionId?: string,
): Promise<ToolAnswer> {
  const found = await resolveForEdit(ctx, slug)
  if (found.kind === 'error') return found
  const { resolved, suggest } = found.value
  const mark = suggest ? await suggestionOf(ctx) : undefined
  const apply: Edit<T> = mark ? (fragment) => proposeEdit(fragment, mark, edit, sectionId) : edit
  const outcome = await ctx.writer.write(
    resolved.document.room,
    // The principal goes with the change: the store attributes it to this agent and its app (history-authors.ts).
    {
      mcp: {
        tool: ctx.tool,
        userId: ctx.principal.user.id,
        handle: ctx.principal.user.handle,
        principal: ctx.principal,
      },
    },
    apply,
    {
      signal: ctx.signal,
      beforeApply:
        ctx.hold && ctx.signal
          ? () => ctx.hold!('write', { tool: ctx.tool, signal: ctx.signal! })
          : undefined,
    },
  )
  if (outcome.kind === 'error') return outcome
  return mark ? `${answer(outcome.value)}\n${proposedLine(mark.id)}` : answer(outcome.value)
}
