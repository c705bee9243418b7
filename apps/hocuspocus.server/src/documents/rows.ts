/**
 * A document's row as the documents service hands it out, the columns read for it, and the one refusal
 * for a document that is missing or not the caller's: both answer alike, so nothing leaks which slugs exist.
 */
import { type Result, refuse } from '@collab/doc-schema'
import type { Access, Whose } from './access.ts'

export type DocumentRow = {
  id: string
  room: string
  slug: string
  title: string
  ownerId: string
  isPrivate: boolean
  readOnly: boolean
  /** Agents' edits land as suggestions (the owner's setting; docs/history.md, Suggestions). */
  agentsSuggest: boolean
  deletedAt: Date | null
  createdAt: Date
  updatedAt: Date
  contentUpdatedAt: Date
}

export type Resolved = { document: DocumentRow; access: Extract<Access, { canRead: true }> }

export type DocumentListing = DocumentRow & { whose: Whose; ownerHandle: string }

/** Prisma's `select` of a DocumentRow. */
export const documentSelect = {
  id: true,
  room: true,
  slug: true,
  title: true,
  ownerId: true,
  isPrivate: true,
  readOnly: true,
  agentsSuggest: true,
  deletedAt: true,
  createdAt: true,
  updatedAt: true,
  contentUpdatedAt: true,
} as const

export function notFound(slug: string): Result<never> {
  return refuse(
    'not_found',
    `slug: no document "${slug}" that you can open; list yours with find_documents or GET /api/documents`,
    'slug',
  )
}
