/**
 * Section totals are measured after a store at most once per `searchRefreshMs` (issue 30): finding what to
 * measure walks every top-level block of the document, ~9 ms per store at 1 MiB, and typing stores every
 * 600 ms. Stores in between leave their blocks to the next timed measure, to a read (which renders only
 * the blocks not measured yet) or to the compaction, which measures everything first: the totals it
 * stores are exact. Render work is counted with doc-schema's `measuredElements` (headings and blocks
 * rendered for totals), in this process, where the server runs.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, measuredElements, renderSection, type StoredOutlineNode } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { appendOrThrow, buildDocument, paragraph } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import type { RunningServer } from '../server.ts'

describe(`section totals measured at most every searchRefreshMs (${DATABASE_KIND})`, () => {
  let server!: RunningServer
  // Longer than the test: only the first store after the load measures at once.
  useTestServer(
    (s) => {
      server = s
    },
    { searchRefreshMs: 600_000 },
  )

  async function typeAndStore(editor: TestProvider, text: string): Promise<void> {
    editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph(text)])
    await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
    await eventually(() => expect(server.collab.persistence.pendingCount()).toBe(0), 10_000, 'stored')
  }

  test('stores within the interval measure nothing; the unload compaction stores the exact total', async () => {
    const { user, token } = await userWithToken(server, 'measurer')
    const doc = await buildDocument(server, user.id, { title: 'Typed' }, (fragment) => {
      appendOrThrow(fragment, '## Typed into\n\nfirst block\n\nsecond block')
    })
    const editor = connectProvider(server.url, doc.room, token)
    try {
      await editor.ready
      const before = measuredElements()
      // The first store after the load measures the document at once (stored without totals): the title,
      // the section's heading, its two blocks and the one typed, in slices.
      await typeAndStore(editor, 'one')
      await eventually(() => expect(measuredElements() - before).toBe(5), 10_000, 'first measure')
      // More stores within the interval: nothing rendered (before: the new block, after every store).
      for (const text of ['two', 'three', 'four']) await typeAndStore(editor, text)
      expect(measuredElements() - before).toBe(5)
    } finally {
      editor.destroy()
    }
    // The last editor leaves: the compaction measures what is left and stores the exact total.
    await eventually(
      () => expect(server.collab.hocuspocus.documents.has(doc.room)).toBe(false),
      20_000,
      'unload',
    )
    const rows = await server.services.db.prisma.$queryRaw<Array<{ outline: StoredOutlineNode[] | null }>>`
      SELECT s.outline FROM document_states s JOIN documents d ON d.id = s.document_id WHERE d.room = ${doc.room}`
    const section = (rows[0]?.outline ?? [])
      .flatMap((root) => [root, ...root.children])
      .find((n) => n.title === 'Typed into')!
    const stored = new Y.Doc()
    Y.applyUpdate(stored, (await server.services.documents.loadState(doc.room))!.state!)
    const whole = renderSection(stored.getXmlFragment(FRAGMENT_NAME), section.sectionId, {
      maxChars: Number.MAX_SAFE_INTEGER,
    })
    stored.destroy()
    if (whole.kind === 'error') throw new Error(whole.message)
    expect(whole.value.text).toContain('four')
    expect(section.total).toBe(whole.value.text.length)
    expect(section.blocks).toBe(6)
  }, 60_000)
})
