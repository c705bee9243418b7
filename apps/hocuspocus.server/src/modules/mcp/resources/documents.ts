/**
 * Documents as MCP resources: `collab://documents/{slug}` (the whole Markdown) and
 * `collab://documents/{slug}/sections/{section_id}` (one section), both read through read_document's own
 * handler, so access, the data frame, the budget (MAX_READ_CHARS) and the notes naming the next call are
 * the tool's. resources/list pages through the caller's documents (find_documents' scope mine, its
 * cursors and order); completion/complete offers slugs and section ids for the templates' arguments.
 */

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js'
import { ErrorCode, ListResourcesRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { RATE_LIMITED_ERROR_CODE, type RateKind, rateLimitMessage } from '../infra/rate-limit.ts'
import { MAX_COMPLETION_VALUES, MAX_FIND_LIMIT, MAX_RESOURCE_PAGE } from '../limits.ts'
import { findPage } from '../paging/find-pages.ts'
import { refusalText, toolResult } from '../tools/answer.ts'
import type { CallerContext, ToolContext } from '../tools/context.ts'
import { instrument, type WrapperRefusal } from '../tools/instrument.ts'
import { headingsOf, openOutline } from '../tools/open-document.ts'
import { readDocument } from '../tools/read-document.ts'
import type { CallExtra } from '../tools/report.ts'
import type { ToolAnswer } from '../tools/tool.ts'
import {
  DOCUMENT_TEMPLATE,
  documentUri,
  RESOURCE_MIME,
  RESOURCE_NOT_FOUND,
  requestError,
  SECTION_TEMPLATE,
} from './uris.ts'

export { DOCUMENT_TEMPLATE, documentUri, SECTION_TEMPLATE, sectionUri } from './uris.ts'

/** What prompts reuse of the resources: the read (as a resource content item) and the completers. */
export type DocumentResources = {
  read(
    uri: URL,
    slug: string,
    sectionId?: string,
    /** The request being answered: its progress token and log level (tools/report.ts). */
    extra?: CallExtra,
  ): Promise<{ contents: Array<{ uri: string; mimeType: string; text: string }> }>
  completeSlug(value: string): Promise<string[]>
  completeSection(value: string, context?: { arguments?: Record<string, string> }): Promise<string[]>
}

export function registerDocumentResources(server: McpServer, caller: CallerContext): DocumentResources {
  const ctx: ToolContext = { ...caller, tool: 'resources/read' }
  // Through the tools' instrument: the same rate limit, log line and metrics (tool "resources/read").
  const read = async (uri: URL, slug: string, sectionId?: string, extra?: CallExtra) => {
    let answer: ToolAnswer | undefined
    let refusal: WrapperRefusal | undefined
    const result = await instrument(
      ctx,
      async (args: { slug: string; section_id?: string }, call) => {
        answer = await readDocument.handler(args, call)
        return toolResult(answer)
      },
      (refused) => {
        refusal = refused
      },
    )({ slug, section_id: sectionId }, extra)
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    if (refusal) {
      // Not the caller's params: over the rate limit, the database away (-32000, come back later), or a
      // failure on the server (-32603).
      if (refusal.code === 'internal') throw requestError(ErrorCode.InternalError, text)
      throw requestError(
        RATE_LIMITED_ERROR_CODE,
        text,
        refusal.code === 'rate_limited' ? { retryAfterSeconds: refusal.retryAfterSeconds } : undefined,
      )
    }
    if (result.isError) {
      const missing = typeof answer === 'object' && answer.kind === 'error' && answer.code === 'not_found'
      throw requestError(missing ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams, text, {
        uri: uri.toString(),
      })
    }
    return { contents: [{ uri: uri.toString(), mimeType: RESOURCE_MIME, text }] }
  }
  const completeSlug = async (value: string) => {
    await takeCompletion(caller)
    return completeSlugs(caller, value)
  }
  const completeSection = async (value: string, context?: { arguments?: Record<string, string> }) => {
    await takeCompletion(caller)
    const slug = context?.arguments?.slug
    if (!slug) return []
    const opened = await openOutline({ ...caller, tool: COMPLETION }, slug)
    if (opened.kind === 'error') return []
    return headingsOf(opened.value.outline)
      .map((h) => h.sectionId)
      .filter((id) => id.startsWith(value))
      .slice(0, MAX_COMPLETION_VALUES)
  }
  // The section template first: a URI is matched against the templates in registration order.
  server.registerResource(
    'document-section',
    new ResourceTemplate(SECTION_TEMPLATE, {
      list: undefined,
      complete: { slug: completeSlug, section_id: completeSection },
    }),
    {
      title: 'One section of a document',
      description: `A heading and its numbered blocks, as read_document with section_id (at most the read budget; a cut read names the from_block that continues). Section ids come from get_outline.`,
      mimeType: RESOURCE_MIME,
    },
    (uri, variables, extra) =>
      read(
        uri,
        decodeURIComponent(String(variables.slug)),
        decodeURIComponent(String(variables.section_id)),
        extra,
      ),
  )
  server.registerResource(
    'document',
    new ResourceTemplate(DOCUMENT_TEMPLATE, { list: undefined, complete: { slug: completeSlug } }),
    {
      title: 'A whole document',
      description: `The document's Markdown in the data frame, as read_document without section_id (at most the read budget; a longer document's read says to call get_outline and read one section at a time).`,
      mimeType: RESOURCE_MIME,
    },
    (uri, variables, extra) => read(uri, decodeURIComponent(String(variables.slug)), undefined, extra),
  )
  server.server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    // A page of find_documents' query (and at page two its snapshot): counted as a tool call.
    await takeRequest(caller, 'calls', 'resources/list')
    const page = await findPage(caller.search, caller.principal.user.id, {
      scope: 'mine',
      limit: MAX_RESOURCE_PAGE,
      cursor: request.params?.cursor,
    })
    if (page.kind === 'error') throw requestError(ErrorCode.InvalidParams, refusalText(page))
    return {
      resources: page.value.rows.map((row) => ({
        uri: documentUri(row.slug),
        name: row.slug,
        title: row.title,
        mimeType: RESOURCE_MIME,
      })),
      ...(page.value.next ? { nextCursor: page.value.next } : {}),
    }
  })
  // The list changes as documents are created, shared and deleted, and no notification says so (the SDK
  // declares listChanged: true): a client must not cache it, so say it will not be told.
  server.server.registerCapabilities({ resources: { listChanged: false } })
  return { read, completeSlug, completeSection }
}

/**
 * Counts one completion/complete against the caller's completion budget (infra/rate-limit.ts: its own
 * count, MCP_CALLS_PER_MINUTE a minute; why there). Every completion reaches one of the two completers,
 * which call this first.
 */
const takeCompletion = (caller: CallerContext) => takeRequest(caller, 'completions', COMPLETION)

/**
 * Counts one request of a method without a tool result (`tool`: its name in logs and metrics) against
 * the caller's `kind` budget. Over it, the request is refused with a JSON-RPC error saying when to
 * retry, logged and counted as `tool`, outcome `rate_limited`; requests within it are not logged one by
 * one (a host asks for a completion per keystroke).
 */
async function takeRequest(caller: CallerContext, kind: RateKind, tool: string): Promise<void> {
  const limiter = caller.rateLimiter
  if (!limiter) return
  const started = performance.now()
  const userId = caller.principal.user.id
  const decision = await limiter.take(userId, kind)
  if (decision.ok) return
  const { retryAfterSeconds } = decision
  const ms = performance.now() - started
  caller.observer?.(tool, 'rate_limited', ms / 1000)
  caller.logger.info(
    { tool, userId, durationMs: Math.round(ms), outcome: 'rate_limited', retryAfterSeconds },
    'mcp tool call',
  )
  throw requestError(RATE_LIMITED_ERROR_CODE, rateLimitMessage(limiter.limit, retryAfterSeconds, kind), {
    retryAfterSeconds,
  })
}

const COMPLETION = 'completion/complete'

/**
 * Slugs the caller can read that start with `value`, in find_documents' order: the caller's documents
 * matching the value as a search (words of the title and text start with it), then the most recently
 * changed ones, filtered to the prefix. At most MAX_COMPLETION_VALUES.
 */
async function completeSlugs(caller: CallerContext, value: string): Promise<string[]> {
  const prefix = value.toLowerCase()
  const found: string[] = []
  const add = (slugs: string[]) => {
    for (const slug of slugs) {
      if (found.length < MAX_COMPLETION_VALUES && slug.startsWith(prefix) && !found.includes(slug))
        found.push(slug)
    }
  }
  const words = value.replace(/[^\p{L}\p{N}]+/gu, ' ').trim()
  for (const query of words ? [words, undefined] : [undefined]) {
    const page = await findPage(caller.search, caller.principal.user.id, {
      scope: 'mine',
      query,
      limit: MAX_FIND_LIMIT,
    })
    if (page.kind === 'ok') add(page.value.rows.map((row) => row.slug))
  }
  return found
}
