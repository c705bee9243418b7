/**
 * The find_documents query: full text over documents.search_vector (title weight A, text weight B),
 * ordered by relevance, then most recently changed content, then slug, paged by keyset. Raw SQL because
 * Prisma has no tsvector type; every value is a bound parameter.
 */
import type { PrismaClient } from '../../../db/generated/client.ts'
import { Prisma } from '../../../db/generated/client.ts'
import type { MemberRole } from '../../../db/generated/enums.ts'
import type { FindKey } from '../domain/cursor.ts'

export type FoundRow = {
  slug: string
  title: string
  ownerId: string
  isPrivate: boolean
  readOnly: boolean
  contentUpdatedAt: Date
  role: MemberRole | null
  rank: number
}

export type SearchInput = {
  userId: string
  scope: 'mine' | 'public'
  /** A tsquery built by toPrefixTsQuery, or null for "everything in scope". */
  tsQuery: string | null
  asOf: Date
  after?: FindKey
  /** Rows to fetch (the caller asks for limit + 1 to learn whether more exist). */
  take: number
}

export async function searchDocuments(prisma: PrismaClient, input: SearchInput): Promise<FoundRow[]> {
  const { userId, tsQuery } = input
  const rank = tsQuery
    ? Prisma.sql`ts_rank(d.search_vector, to_tsquery('simple', ${tsQuery}))`
    : Prisma.sql`0::real`
  const conditions: Prisma.Sql[] = [
    Prisma.sql`d.deleted_at IS NULL`,
    Prisma.sql`d.created_at <= ${input.asOf}`,
  ]
  conditions.push(
    input.scope === 'mine'
      ? Prisma.sql`(d.owner_id = ${userId}::uuid OR m.user_id IS NOT NULL)`
      : Prisma.sql`d.is_private = false`,
  )
  if (tsQuery) conditions.push(Prisma.sql`d.search_vector @@ to_tsquery('simple', ${tsQuery})`)
  const where = Prisma.join(conditions, ' AND ')
  const inner = Prisma.sql`
    SELECT d.slug, d.title, d.owner_id::text AS "ownerId", d.is_private AS "isPrivate",
           d.read_only AS "readOnly", d.content_updated_at AS "contentUpdatedAt",
           m.role::text AS role, ${rank} AS rank
      FROM documents d
      LEFT JOIN document_members m ON m.document_id = d.id AND m.user_id = ${userId}::uuid
     WHERE ${where}`
  const after = input.after
  const keyset = after
    ? Prisma.sql`WHERE (r.rank < ${after.rank}::real)
         OR (r.rank = ${after.rank}::real AND r."contentUpdatedAt" < ${new Date(after.updatedAt)})
         OR (r.rank = ${after.rank}::real AND r."contentUpdatedAt" = ${new Date(after.updatedAt)} AND r.slug > ${after.slug})`
    : Prisma.empty
  return prisma.$queryRaw<FoundRow[]>`
    SELECT * FROM (${inner}) r
    ${keyset}
    ORDER BY r.rank DESC, r."contentUpdatedAt" DESC, r.slug ASC
    LIMIT ${input.take}`
}
