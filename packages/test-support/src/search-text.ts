/**
 * The search columns of a document, written the way the store step writes them (documents/search.ts
 * searchColumnsSql over the live content's plain text). Until the store step's refresh sets search_text
 * (issue 14), search tests call this after building their documents; afterwards it is a no-op rewrite.
 */
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { searchColumnsSql } from '@collab/hocuspocus.server/src/documents/search.ts'
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
    await prisma.$executeRaw`UPDATE documents SET ${searchColumnsSql(row.title, text)} WHERE id = ${row.id}::uuid`
  } finally {
    await connection.disconnect()
  }
}
