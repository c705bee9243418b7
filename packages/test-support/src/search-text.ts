/**
 * The search columns and chunks of a document, written the way the store step writes them
 * (documents/store.ts writeDerived over the live content's title and plain text). Search tests call this
 * after building their documents, so a query finds them without waiting for the store step's refresh.
 */
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { writeDerived } from '@collab/hocuspocus.server/src/documents/store.ts'
import { MAX_FIND_TEXT_CHARS } from '@collab/hocuspocus.server/src/limits.ts'
import type { RunningServer } from '@collab/hocuspocus.server/src/server.ts'

export async function refreshSearchColumns(server: RunningServer, slug: string): Promise<void> {
  const { prisma } = server.services.db
  const row = await prisma.document.findUnique({
    where: { slug },
    select: { id: true, room: true, title: true },
  })
  if (!row) throw new Error(`no document ${slug}`)
  const connection = await server.collab.hocuspocus.openDirectConnection(row.room)
  try {
    const fragment = connection.document!.getXmlFragment(FRAGMENT_NAME)
    const text = readPlainText(fragment, MAX_FIND_TEXT_CHARS)
    await prisma.$transaction((tx) => writeDerived(tx, row.id, { title: row.title, text }))
  } finally {
    await connection.disconnect()
  }
}

/**
 * The search text stored for a document (its title, a newline, its text), put back together from its
 * chunks; null when it has none.
 */
export async function storedSearchText(server: RunningServer, room: string): Promise<string | null> {
  const rows = await server.services.db.prisma.$queryRaw<Array<{ text: string | null }>>`
    SELECT string_agg(substr(c.body, c.prefix_chars + 1), '' ORDER BY c.n) AS text
      FROM document_search_chunks c JOIN documents d ON d.id = c.document_id
     WHERE d.room = ${room}`
  return rows[0]?.text ?? null
}
