/**
 * The first step of every per-document tool: access through the documents service ("not found" and
 * "no access" read the same), then the live-or-stored content.
 */
import type { OutlineNode } from '@collab/doc-schema'
import { ok, type Result, refuse } from '@collab/doc-schema'
import type { Resolved } from '../../../documents/rows.ts'
import { stopIfCancelled } from '../infra/cancel.ts'
import type { ReadableDocument } from '../infra/documents.ts'
import { readCall, type ToolContext } from './context.ts'

export type Opened = { resolved: Resolved; content: ReadableDocument }

/**
 * The document for `slug` as the documents service resolves it, its refusal in an agent's words: the
 * service's "not found" names the HTTP API too, which an MCP agent cannot call.
 */
export async function resolveForAgent(ctx: ToolContext, slug: string): Promise<Result<Resolved>> {
  const resolved = await ctx.documents.resolve(slug, ctx.principal)
  return resolved.kind === 'error' && resolved.code === 'not_found' ? goneRefusal(slug) : resolved
}

export async function openDocument(ctx: ToolContext, slug: string): Promise<Result<Opened>> {
  const resolved = await resolveForAgent(ctx, slug)
  if (resolved.kind === 'error') return resolved
  const content = await ctx.reader.open(resolved.value.document.room, readCall(ctx))
  if (!content) return goneRefusal(slug)
  return ok({ resolved: resolved.value, content })
}

/** Access as openDocument, then only the document's outline (ctx.reader.openOutline: nothing decoded). */
export async function openOutline(
  ctx: ToolContext,
  slug: string,
): Promise<Result<{ resolved: Resolved; outline: OutlineNode[] }>> {
  const resolved = await resolveForAgent(ctx, slug)
  if (resolved.kind === 'error') return resolved
  stopIfCancelled(ctx.signal)
  const outline = await ctx.reader.openOutline(resolved.value.document.room)
  if (!outline) return goneRefusal(slug)
  stopIfCancelled(ctx.signal)
  return ok({ resolved: resolved.value, outline })
}

/** Every heading of an outline in document order (id and title): what the chat tools need of it. */
export function headingsOf(outline: readonly OutlineNode[]): Array<{ sectionId: string; title: string }> {
  const headings: Array<{ sectionId: string; title: string }> = []
  const visit = (node: OutlineNode) => {
    headings.push({ sectionId: node.sectionId, title: node.title })
    for (const child of node.children) visit(child)
  }
  for (const root of outline) visit(root)
  return headings
}

/** An unknown or unreadable slug (the same words for both), naming the tool call that lists documents. */
export function notFoundMessage(slug: string): string {
  return `slug: no document "${slug}" that you can open; call find_documents to list the documents you can open.`
}

export const goneRefusal = (slug: string) => refuse('not_found', notFoundMessage(slug), 'slug')
