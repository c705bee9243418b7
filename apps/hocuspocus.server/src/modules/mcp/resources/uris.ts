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
