/**
 * The read rule exists twice: decideAccess (one document, in TypeScript) and readableBy (many documents,
 * in SQL, for find_documents). This holds them equal on the real database over every role × document
 * flags (private, read-only, deleted), and holds the search service's answers (both scopes, page one and
 * rows by id) to decideAccess too. It fails when the SQL drifts: a deleted document listed, a private one
 * shown to a stranger, a member's document left out.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { Principal } from '../auth/tokens.ts'
import { Prisma } from '../db/generated/client.ts'
import { readableBy, withMembership } from '../documents/access.ts'
import type { RunningServer } from '../server.ts'

const ROLES = ['owner', 'editor', 'viewer', 'stranger'] as const
type Role = (typeof ROLES)[number]
type Flags = { isPrivate: boolean; readOnly: boolean; deleted: boolean }
const FLAGS: Flags[] = [false, true].flatMap((isPrivate) =>
  [false, true].flatMap((readOnly) => [false, true].map((deleted) => ({ isPrivate, readOnly, deleted }))),
)
/** A word every test document's title holds, for the full-text (public scope) query. */
const WORD = 'matrixword'

let server: RunningServer
let handle: (base: string) => string
useSharedServer((share) => {
  ;({ server, handle } = share)
})
const users = {} as Record<Role, string>
const documentIds: string[] = []

beforeAll(async () => {
  const { users: people, documents } = server.services
  for (const role of ROLES) {
    const added = await people.add(handle(`sql-${role}`))
    if (added.kind === 'error') throw new Error(added.message)
    users[role] = added.value.id
  }
  for (const flags of FLAGS) {
    const created = await documents.create(users.owner, {
      title: `${WORD} ${JSON.stringify(flags)}`,
      isPrivate: flags.isPrivate,
      readOnly: flags.readOnly,
    })
    if (created.kind === 'error') throw new Error(created.message)
    const { slug, id } = created.value
    await documents.share(slug, users.editor, 'editor')
    await documents.share(slug, users.viewer, 'viewer')
    if (flags.deleted) await documents.softDelete(slug)
    documentIds.push(id)
  }
}, 60_000)

/** What decideAccess says of each test document for this role's user (accessMany asks it, row by row). */
async function decided(role: Role) {
  const principal: Principal = {
    user: { id: users[role], handle: handle(`sql-${role}`), name: null, createdAt: new Date() },
    tokenId: 'test',
    scopes: ['read'],
  }
  const access = await server.services.documents.accessMany(
    documentIds.map((documentId) => ({ documentId, principal })),
  )
  return access.map((a, i) => ({
    id: documentIds[i]!,
    canRead: a.canRead,
    mine: a.canRead && a.role !== 'public',
    isPrivate: FLAGS[i]!.isPrivate,
  }))
}

const sorted = (ids: Iterable<string>) => [...ids].sort()

describe(`readableBy is decideAccess in SQL (${DATABASE_KIND})`, () => {
  for (const role of ROLES) {
    test(`${role}: readableBy selects exactly the documents decideAccess lets them read`, async () => {
      const userId = users[role]
      const rows = await server.services.db.prisma.$queryRaw<Array<{ id: string }>>(Prisma.sql`
        SELECT d.id::text AS id ${withMembership(userId)}
         WHERE ${readableBy(userId)} AND d.id = ANY(${documentIds}::uuid[])`)
      const expected = (await decided(role)).filter((d) => d.canRead).map((d) => d.id)
      expect(sorted(rows.map((r) => r.id))).toEqual(sorted(expected))
      // The matrix is not trivial: each role reads some and (but the owner of live ones) not others.
      expect(expected.length).toBeGreaterThan(0)
      expect(expected.length).toBeLessThan(FLAGS.length)
    })

    test(`${role}: the search service's scopes and rows by id never pass what decideAccess refuses`, async () => {
      const userId = users[role]
      const { search } = server.services
      const all = await decided(role)
      const mine = all.filter((d) => d.canRead && d.mine).map((d) => d.id)
      const publicOnes = all.filter((d) => d.canRead && !d.isPrivate).map((d) => d.id)
      const asOf = new Date(Date.now() + 60_000)
      const ours = (rows: Array<{ id: string }>) =>
        rows.map((r) => r.id).filter((id) => documentIds.includes(id))

      const { rows: foundMine } = await search.search({ userId, scope: 'mine', terms: null, asOf, take: 100 })
      expect(sorted(ours(foundMine))).toEqual(sorted(mine))
      const { rows: foundPublic } = await search.search({
        userId,
        scope: 'public',
        terms: [WORD],
        asOf,
        take: 100,
      })
      expect(sorted(ours(foundPublic))).toEqual(sorted(publicOnes))
      const byIdMine = await search.byIds({ userId, scope: 'mine', ids: documentIds })
      expect(sorted(ours(byIdMine))).toEqual(sorted(mine))
      const byIdPublic = await search.byIds({ userId, scope: 'public', ids: documentIds })
      expect(sorted(ours(byIdPublic))).toEqual(sorted(publicOnes))
    })
  }
})
