/**
 * Incremental storage: a store appends the change to the document's update log instead of rewriting
 * the whole state; loads apply the snapshot and then the log; compaction merges the log back into the
 * snapshot (after COMPACT_AFTER_UPDATES rows, and when the document unloads); the title and search text
 * follow the content within `searchRefreshMs`. Real servers, real providers, the real database.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readOutlineWithTotals } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { appendOrThrow, buildDocument, element, paragraph, storedText } from '@collab/test-support/documents'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import type { TestProvider } from '@collab/test-support/provider'
import {
  editorsOnBoth,
  eventually,
  readAfterBothStop,
  TWO_INSTANCES,
  useRestartableServer,
  useTwoTestServers,
} from '@collab/test-support/server'
import * as Y from 'yjs'
import type { Config } from '../config.ts'
import type { RunningServer } from '../server.ts'

type LogRow = { bytes: number }
type StateRow = { bytes: number; updatedAt: Date; outline: boolean }

async function logRows(server: RunningServer, room: string): Promise<LogRow[]> {
  return server.services.db.prisma.$queryRaw<LogRow[]>`
    SELECT u.byte_size AS bytes FROM document_updates u JOIN documents d ON d.id = u.document_id
     WHERE d.room = ${room} ORDER BY u.id`
}

async function stateRow(server: RunningServer, room: string): Promise<StateRow> {
  const rows = await server.services.db.prisma.$queryRaw<StateRow[]>`
    SELECT s.byte_size AS bytes, s.updated_at AS "updatedAt", s.outline IS NOT NULL AS outline
      FROM document_states s JOIN documents d ON d.id = s.document_id WHERE d.room = ${room}`
  return rows[0] as StateRow
}

/** Whether the stored search chunks of the document match `word` (their full-text vectors). */
async function searchFinds(server: RunningServer, room: string, word: string): Promise<boolean> {
  const rows = await server.services.db.prisma.$queryRaw<Array<{ found: boolean }>>`
    SELECT EXISTS (SELECT 1 FROM document_search_chunks c JOIN documents d ON d.id = c.document_id
                    WHERE d.room = ${room} AND c.words @@ plainto_tsquery('simple', ${word})) AS found`
  return rows[0]?.found === true
}

async function contentUpdatedAt(server: RunningServer, room: string): Promise<number> {
  const row = await server.services.db.prisma.document.findUniqueOrThrow({ where: { room } })
  return row.contentUpdatedAt.getTime()
}

describe(`the update log (${DATABASE_KIND})`, () => {
  const s = useRestartableServer('logger')
  const connect = (room: string) => s.connect(room)
  async function restart(overrides: Partial<Config> = {}): Promise<void> {
    expect((await s.restart(overrides)).unstored).toEqual([])
  }

  /** Types one paragraph and waits until a store has covered it. */
  async function typeAndStore(editor: TestProvider, text: string): Promise<void> {
    editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph(text)])
    await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
    await eventually(() => expect(s.server.collab.persistence.pendingCount()).toBe(0), 10_000, 'stored')
  }

  test('one paragraph typed into a ~1 MiB document appends a row of a few hundred bytes; the snapshot is not rewritten', async () => {
    const big = await buildDocument(s.server, s.owner.user.id, { title: 'Big' }, (fragment) => {
      for (let i = 0; i < 40; i++)
        appendOrThrow(fragment, `## Part ${i}\n\n${'Lorem ipsum dolor sit amet. '.repeat(900)}`)
    })
    const before = await stateRow(s.server, big.room)
    expect(before.bytes).toBeGreaterThan(900_000)
    const editor = await connect(big.room)
    await typeAndStore(editor, 'one new paragraph')

    const rows = await logRows(s.server, big.room)
    expect(rows).toHaveLength(1)
    expect(rows[0]!.bytes).toBeLessThan(1_000)
    const after = await stateRow(s.server, big.room)
    expect(after.bytes).toBe(before.bytes)
    expect(after.updatedAt.getTime()).toBe(before.updatedAt.getTime())
    expect(await storedText(s.server, big.room)).toContain('one new paragraph')
  }, 60_000)

  test('a restart loads the snapshot and then the log; cold reads and the outline see the logged changes', async () => {
    const doc = await buildDocument(s.server, s.owner.user.id, { title: 'Logged' }, (fragment) => {
      fragment.push([paragraph('from the snapshot')])
    })
    // A first visit ends with the unload's compaction: a snapshot with its stored outline.
    await typeAndStore(await connect(doc.room), 'in the snapshot too')
    s.closeEditors()
    await eventually(
      () => expect(s.server.collab.hocuspocus.documents.has(doc.room)).toBe(false),
      // The unload's compaction may start the documents' worker first (seconds on a loaded machine).
      20_000,
      'unload',
    )
    expect((await stateRow(s.server, doc.room)).outline).toBe(true)

    const editor = await connect(doc.room)
    await typeAndStore(editor, 'logged first')
    const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
    fragment.push([element('heading', { level: 2 }, [new Y.XmlText('Logged heading')])])
    await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
    await typeAndStore(editor, 'logged second')
    // Shutdown appends what is pending and compacts nothing: the log is what the next load must apply,
    // and the stored outline is the snapshot's, without the logged heading.
    await restart()
    expect((await logRows(s.server, doc.room)).length).toBeGreaterThanOrEqual(2)
    expect((await stateRow(s.server, doc.room)).outline).toBe(true)

    // A cold MCP read (the document is not loaded) applies the log too.
    expect(s.server.collab.hocuspocus.documents.has(doc.room)).toBe(false)
    const client = await connectClient(mcpUrlOf(s.server), s.owner.token)
    try {
      const read = await call(client, 'read_document', { slug: doc.slug })
      expect(read.text).toContain('from the snapshot')
      expect(read.text).toContain('logged first')
      expect(read.text).toContain('logged second')
      // The stored outline predates the logged heading: a cold outline must not answer from it.
      const outline = await call(client, 'get_outline', { slug: doc.slug })
      expect(outline.text).toContain('Logged heading')
    } finally {
      await client.close()
    }
    // And an editor opening it gets everything.
    const again = await connect(doc.room)
    const text = again.doc.getXmlFragment(FRAGMENT_NAME).toJSON()
    for (const part of ['from the snapshot', 'logged first', 'Logged heading', 'logged second'])
      expect(text).toContain(part)
  }, 60_000)

  test('the log is merged into the snapshot after STORE_COMPACT_AFTER_UPDATES rows, and when the document unloads', async () => {
    await restart({ storeCompactAfterUpdates: 3 })
    const doc = await buildDocument(s.server, s.owner.user.id, { title: 'Compacted' }, () => {})
    const editor = await connect(doc.room)
    const compactions = s.server.metrics.compactions.get()
    for (let i = 1; i <= 3; i++) await typeAndStore(editor, `compact me ${i}`)
    // The third row made it due: merged after that store, all rows gone, the snapshot holds them.
    await eventually(async () => expect(await logRows(s.server, doc.room)).toHaveLength(0), 10_000, 'merge')
    // Counted once its commit is answered, which another connection (PostgreSQL) may see before.
    await eventually(
      () => expect(s.server.metrics.compactions.get()).toBe(compactions + 1),
      10_000,
      'counted',
    )
    expect(s.server.collab.persistence.logRows(doc.room)).toBe(0)
    const snapshot = await s.server.services.documents.loadStored(doc.room)
    expect(snapshot!.updates).toHaveLength(0)
    const merged = new Y.Doc()
    Y.applyUpdate(merged, snapshot!.snapshot!)
    for (let i = 1; i <= 3; i++)
      expect(merged.getXmlFragment(FRAGMENT_NAME).toJSON()).toContain(`compact me ${i}`)

    // One more store leaves one row; the last editor leaving unloads the document, which merges it with
    // a fresh stored outline (so the next cold outline reads no state).
    editor.doc.getXmlFragment(FRAGMENT_NAME).push([element('heading', { level: 2 }, [new Y.XmlText('Late')])])
    await typeAndStore(editor, 'after the merge')
    expect(await logRows(s.server, doc.room)).toHaveLength(1)
    s.closeEditors()
    await eventually(
      () => expect(s.server.collab.hocuspocus.documents.has(doc.room)).toBe(false),
      // The unload's compaction may start the documents' worker first (seconds on a loaded machine).
      20_000,
      'unload',
    )
    expect(await logRows(s.server, doc.room)).toHaveLength(0)
    const outline = await s.server.services.documents.loadOutline(doc.room)
    expect(JSON.stringify(outline?.outline)).toContain('"Late"')
    const cold = new Y.Doc()
    Y.applyUpdate(cold, (await s.server.services.documents.loadState(doc.room))!.state!)
    // With every section's exact total, as a fresh measurement of the stored state gives them.
    expect(readOutlineWithTotals(cold.getXmlFragment(FRAGMENT_NAME))).toEqual(outline!.outline!)
  }, 60_000)

  test('search lags the content by at most SEARCH_REFRESH_MS: refreshed at once after a quiet period, then not per store but by the timer', async () => {
    // A long interval: the second word must not be searchable after its own store (no refresh per store).
    await restart({ searchRefreshMs: 60_000 })
    const doc = await buildDocument(s.server, s.owner.user.id, { title: 'Searched' }, () => {})
    const editor = await connect(doc.room)
    await typeAndStore(editor, 'aardvark')
    // Due at once after a quiet period (by a timer, so the store that made it due is not held up).
    await eventually(
      async () => expect(await searchFinds(s.server, doc.room, 'aardvark')).toBe(true),
      10_000,
      'refresh',
    )
    const refreshed = await contentUpdatedAt(s.server, doc.room)
    await typeAndStore(editor, 'bandicoot')
    expect(await searchFinds(s.server, doc.room, 'bandicoot')).toBe(false)
    // A store does not touch the documents row or the search chunks: the content-updated time moves
    // with the next refresh.
    expect(await contentUpdatedAt(s.server, doc.room)).toBe(refreshed)
    // Leaving unloads and compacts, which writes the search text with the snapshot.
    s.closeEditors()
    await eventually(
      () => expect(s.server.collab.hocuspocus.documents.has(doc.room)).toBe(false),
      // The unload's compaction may start the documents' worker first (seconds on a loaded machine).
      20_000,
      'unload',
    )
    expect(await searchFinds(s.server, doc.room, 'bandicoot')).toBe(true)
    expect(await contentUpdatedAt(s.server, doc.room)).toBeGreaterThan(refreshed)

    // A short interval: the timer catches the last change while the editor stays.
    await restart({ searchRefreshMs: 300 })
    const kept = await connect(doc.room)
    await typeAndStore(kept, 'capybara')
    await typeAndStore(kept, 'dugong')
    // The timer waits SEARCH_REFRESH_DB_DUTY (10) times what the last refresh's database write took when
    // that is longer than the interval: a 0.1-0.3 s write on a loaded machine (CI: two files at once) is
    // a 1-3 s wait (it was 10-30 s when the whole wall time counted a hundredfold).
    await eventually(
      async () => expect(await searchFinds(s.server, doc.room, 'dugong')).toBe(true),
      40_000,
      'refresh',
    )
    expect(s.server.collab.hocuspocus.documents.has(doc.room)).toBe(true)
  }, 90_000)
})

describe.skipIf(!TWO_INSTANCES)('the update log with two instances (postgres, Redis)', () => {
  const editors: TestProvider[] = []
  afterAll(() => {
    for (const editor of editors) editor.destroy()
  })
  const pair = useTwoTestServers({ storeCompactAfterUpdates: 4 })

  test('each instance logs its editors’ changes; a compaction on either keeps what the other logged', async () => {
    const { room, onA, onB } = await editorsOnBoth(pair.a, pair.b, 'pair', 'Two logs')
    editors.push(onA, onB)
    const typed: string[] = []
    for (let i = 1; i <= 6; i++) {
      for (const [name, editor, server] of [
        ['A', onA, pair.a],
        ['B', onB, pair.b],
      ] as const) {
        const text = `from ${name} ${i}`
        typed.push(text)
        editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph(text)])
        await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
        await eventually(() => expect(server.collab.persistence.pendingCount()).toBe(0), 10_000, 'stored')
      }
    }
    // Both compacted at least once (4 rows each), each merging the rows the other had logged.
    await eventually(
      () =>
        expect(pair.a.metrics.compactions.get() + pair.b.metrics.compactions.get()).toBeGreaterThanOrEqual(2),
      10_000,
      'compactions',
    )
    for (const editor of editors.splice(0)) editor.destroy()
    const text = await readAfterBothStop(pair, (reader) => storedText(reader, room))
    for (const line of typed) expect(text).toContain(line)
  }, 60_000)
})
