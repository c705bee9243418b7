/**
 * Documents stored before the search chunks existed (none) are filled at start, so search finds them
 * without an edit. Simulated with the chunks deleted, as the migration leaves them.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { paragraph } from '@collab/test-support/documents'
import { storedSearchText } from '@collab/test-support/search-text'
import { eventually, useRestartableServer } from '@collab/test-support/server'

describe(`search columns filled at start (${DATABASE_KIND})`, () => {
  const s = useRestartableServer('backfill')

  const searchText = (room: string) => storedSearchText(s.server, room)

  test('a document without search chunks gets them from its stored content at the next start; a deleted one is left alone', async () => {
    const kept = await s.server.services.documents.create(s.owner.user.id, { title: 'Old notes' })
    const gone = await s.server.services.documents.create(s.owner.user.id, { title: 'Old and deleted' })
    if (kept.kind === 'error' || gone.kind === 'error') throw new Error('create failed')
    // A phrase typed after creation: stored through the update log (and compacted if it unloads).
    const editor = await s.connect(kept.value.room)
    editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph('url.parse in the old notes')])
    await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
    await eventually(() => expect(s.server.collab.persistence.pendingCount()).toBe(0), 10_000, 'stored')
    // The store's title and search refresh runs after the append (its write lands once it is committed):
    // waited for, or its chunks could land after the deletion below (seen once in a clean-clone run).
    await eventually(
      async () => expect(await searchText(kept.value.room)).toContain('url.parse'),
      10_000,
      'refreshed',
    )
    expect(await s.server.services.documents.softDelete(gone.value.slug)).toMatchObject({ kind: 'ok' })
    // As the migration left documents stored before it: no search chunks.
    await s.server.services.db.prisma.$executeRaw`DELETE FROM document_search_chunks`
    expect(await searchText(kept.value.room)).toBeNull()

    await s.restart()
    await eventually(
      async () => expect(await searchText(kept.value.room)).toContain('url.parse'),
      10_000,
      'filled',
    )
    expect(await searchText(kept.value.room)).toStartWith('Old notes\n')
    expect(await searchText(gone.value.room)).toBeNull()
  }, 60_000)
})
