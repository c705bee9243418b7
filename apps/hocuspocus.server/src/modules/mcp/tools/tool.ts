/**
 * A tool is data: declared once with its kind, and everything else (the token scope that lists it, its MCP
 * annotations, instrumentation, the mapping of its answer to a tool result) follows from the declaration.
 */
import type { Refusal } from '@collab/doc-schema'
import type { ResourceLink, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type { z } from 'zod'
import type { ToolContext } from './context.ts'
import { withSectionPrefixes } from './section-prefix.ts'

/**
 * `read` changes nothing; `write` adds (a document, blocks at the end, a message); `destructive` may
 * change or remove what is there.
 */
export type ToolKind = 'read' | 'write' | 'destructive'

/**
 * An answer's text followed by links to resources (resource_link items: whole documents a host can read
 * with resources/read without the tool inlining them).
 */
export type LinkedAnswer = { kind: 'linked'; text: string; links: ResourceLink[] }

/**
 * An answer its tool keeps while what it shows is unchanged (a warm outline page): the same object at
 * every call, so its tool result and that result's JSON are made once (answer.ts, the only reader of it).
 */
export type KeptAnswer = { readonly kind: 'kept'; readonly text: string }

/**
 * What a handler returns: the answer's text, the text with resource links, a kept text, or a refusal (the
 * project's one refusal shape, from a service, the document model or the tool itself); the registration
 * loop makes each a tool result.
 */
export type ToolAnswer = string | LinkedAnswer | KeptAnswer | Refusal

export type Tool<Shape extends z.ZodRawShape = z.ZodRawShape> = {
  name: string
  kind: ToolKind
  title: string
  description: string
  inputSchema: Shape
  /** Only when the tool's idempotency differs from its kind's (read: idempotent; write, destructive: not). */
  idempotent?: boolean
  /**
   * An edit of a document's content that suggest mode turns into suggestions (write-path.ts): listed and
   * callable with scope suggest too.
   */
  proposes?: true
  handler(args: z.infer<z.ZodObject<Shape>>, ctx: ToolContext): Promise<ToolAnswer>
}

/**
 * Declares a tool (typing the handler's arguments from the input schema). A tool taking `slug` and
 * `section_id` accepts the start of an id get_outline prints: it is resolved to the whole id before the
 * handler runs (section-prefix.ts), for every caller of the handler (tools, resources, prompts).
 */
export function defineTool<Shape extends z.ZodRawShape>(tool: Tool<Shape>): Tool {
  return withSectionPrefixes(tool)
}

/**
 * A token lists and calls read tools with scope read; every other kind needs scope write, except the
 * edits that propose (`proposes`), which scope suggest may call too (their changes then land as suggestions).
 */
export function mayUse(scopes: readonly string[], tool: Pick<Tool, 'kind' | 'proposes'>): boolean {
  return (
    tool.kind === 'read' || scopes.includes('write') || (tool.proposes === true && scopes.includes('suggest'))
  )
}

/** The MCP annotations of a tool, from its kind: no tool reaches outside this server. */
export function annotationsOf(tool: Pick<Tool, 'kind' | 'idempotent'>): ToolAnnotations {
  return {
    readOnlyHint: tool.kind === 'read',
    destructiveHint: tool.kind === 'destructive',
    idempotentHint: tool.idempotent ?? tool.kind === 'read',
    openWorldHint: false,
  }
}
