/**
 * The capacity bench's documents (bench/lib/capacity.ts): one user with a token and many small documents,
 * copied in SQL so thousands take seconds.
 */
import type { TestDatabase } from '@collab/test-support/database'
import { startTestServer, userWithToken } from '@collab/test-support/server'

export type Seeded = { token: string; rooms: Array<{ room: string; slug: string }> }

/**
 * One user with a token, and `count` small documents (a heading and two paragraphs): one made by the
 * documents service, the others copies of its rows made in SQL (the row, its stored state and its first
 * version, each copy with a room and slug of its own), so seeding thousands takes seconds, not minutes.
 */
export async function seed(db: TestDatabase, count: number): Promise<Seeded> {
  const server = await startTestServer(db)
  try {
    const { user, token } = await userWithToken(server, 'capacity')
    const made = await server.services.documents.create(user.id, {
      title: 'Capacity',
      markdown:
        '## Notes\n\nWhat the team agreed this week, and what is still open.\n\n## Next\n\nThe review is on Friday.\n',
    })
    if (made.kind === 'error') throw new Error(made.message)
    const { prisma } = server.services.db
    const template = made.value.id
    await prisma.$executeRaw`
      INSERT INTO documents (id, room, slug, title, owner_id, is_private, search_vector)
      SELECT gen_random_uuid(), replace(gen_random_uuid()::text, '-', ''), 'capacity-copy-' || g, title || ' ' || g,
             owner_id, is_private, search_vector
        FROM documents, generate_series(1, ${count - 1}::int) g WHERE id = ${template}::uuid`
    for (const table of ['document_states', 'document_versions', 'document_search_chunks']) {
      const columns = (
        await prisma.$queryRaw<Array<{ name: string }>>`
          SELECT column_name::text AS name FROM information_schema.columns
           WHERE table_name = ${table} AND column_name NOT IN ('id', 'document_id')`
      ).map((c) => `"${c.name}"`)
      await prisma.$executeRawUnsafe(
        `INSERT INTO ${table} (document_id, ${columns.join(', ')})
         SELECT d.id, ${columns.map((c) => `t.${c}`).join(', ')}
           FROM documents d JOIN ${table} t ON t.document_id = $1::uuid
          WHERE d.slug LIKE 'capacity-copy-%'`,
        template,
      )
    }
    const rooms = await prisma.document.findMany({
      where: { ownerId: user.id },
      select: { room: true, slug: true },
      orderBy: { createdAt: 'asc' },
    })
    if (rooms.length !== count) throw new Error(`seeded ${rooms.length} documents, not ${count}`)
    return { token, rooms }
  } finally {
    await server.stop()
  }
}
