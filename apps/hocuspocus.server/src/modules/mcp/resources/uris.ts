/**
 * The URIs of documents and sections as resources, and the link a tool answer carries to one (a
 * `resource_link` content item: a host reads it with resources/read instead of the tool inlining it).
 * A link names only the URI, the slug and the MIME type: no title or other text a person wrote.
 */
import type { ResourceLink } from '@modelcontextprotocol/sdk/types.js'

export const DOCUMENT_TEMPLATE = 'collab://documents/{slug}'
export const SECTION_TEMPLATE = 'collab://documents/{slug}/sections/{section_id}'

/** What resources/read answers for both templates. */
export const RESOURCE_MIME = 'text/markdown'

export const documentUri = (slug: string) => `collab://documents/${encodeURIComponent(slug)}`
export const sectionUri = (slug: string, sectionId: string) =>
  `${documentUri(slug)}/sections/${encodeURIComponent(sectionId)}`

/** A link to a whole document's resource (collab://documents/{slug}). */
export const documentLink = (slug: string): ResourceLink => ({
  type: 'resource_link',
  uri: documentUri(slug),
  name: slug,
  mimeType: RESOURCE_MIME,
})

/** JSON-RPC "resource not found" (the spec's -32002): a missing document and one the caller may not read. */
export const RESOURCE_NOT_FOUND = -32002

/**
 * A JSON-RPC error whose message is exactly `message` (it starts with the field at fault). The SDK's
 * McpError prefixes "MCP error <code>: " to its message, which would reach the caller in front of the field.
 */
export function requestError(code: number, message: string, data?: unknown): Error & { code: number } {
  return Object.assign(new Error(message), { code, data })
}
