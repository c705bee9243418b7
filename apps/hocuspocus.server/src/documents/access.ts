/**
 * Who may read and who may write a document: the one place this is decided. The WebSocket auth hook,
 * the REST API, the MCP tools and the CLI all ask here.
 *
 * - A deleted document does not exist for anyone.
 * - Read: the owner, any member, or any signed-in user when the document is public.
 * - Write: the owner, or an `editor` member unless the document is read-only; and only with a token
 *   that has the `write` scope.
 * - Propose (suggest mode: edits land as suggestions a person accepts or rejects): whoever could write,
 *   with a token that has the `write` or the `suggest` scope. A `suggest` token never writes directly.
 */
import { Prisma } from '../db/generated/client.ts'
import type { MemberRole, TokenScope } from '../db/generated/enums.ts'

export type Whose = 'yours' | 'shared with you' | "another person's"

export type AccessInput = {
  document: { ownerId: string; isPrivate: boolean; readOnly: boolean; deletedAt: Date | null }
  userId: string
  /** The caller's membership role on this document, if any. */
  role: MemberRole | null
  scopes: readonly TokenScope[]
}

export type Access =
  | { canRead: false }
  | {
      canRead: true
      canWrite: boolean
      /** May propose changes (suggest mode): as canWrite, with scope write or suggest. */
      canPropose: boolean
      whose: Whose
      role: 'owner' | MemberRole | 'public'
    }

export function decideAccess({ document, userId, role, scopes }: AccessInput): Access {
  if (document.deletedAt) return { canRead: false }
  const tokenCanWrite = scopes.includes('write')
  const tokenCanPropose = tokenCanWrite || scopes.includes('suggest')
  if (document.ownerId === userId) {
    return {
      canRead: true,
      canWrite: tokenCanWrite,
      canPropose: tokenCanPropose,
      whose: 'yours',
      role: 'owner',
    }
  }
  if (role) {
    const mayChange = role === 'editor' && !document.readOnly
    return {
      canRead: true,
      canWrite: tokenCanWrite && mayChange,
      canPropose: tokenCanPropose && mayChange,
      whose: 'shared with you',
      role,
    }
  }
  if (!document.isPrivate)
    return { canRead: true, canWrite: false, canPropose: false, whose: "another person's", role: 'public' }
  return { canRead: false }
}

/**
 * The caller's membership row `m` beside each document `d`: the join every query over many documents
 * uses with `readableBy` (at most one row per document: (document_id, user_id) is the key).
 */
export const withMembership = (userId: string): Prisma.Sql => Prisma.sql`
  FROM documents d
  LEFT JOIN document_members m ON m.document_id = d.id AND m.user_id = ${userId}::uuid`

/**
 * decideAccess's read rule as one SQL condition over `d` and `m` (see `withMembership`): not deleted,
 * and owned by the user, shared with them, or public. Every query that lists documents for a user ANDs
 * it in; __tests__/access-sql.test.ts holds it equal to decideAccess over roles × document flags.
 */
export const readableBy = (userId: string): Prisma.Sql => Prisma.sql`
  (d.deleted_at IS NULL AND (d.owner_id = ${userId}::uuid OR m.role IS NOT NULL OR d.is_private = false))`
