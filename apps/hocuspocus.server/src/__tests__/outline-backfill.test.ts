/**
 * Stored outlines written before section sizes were counted are rewritten with them at start, so a cold
 * get_outline answers from the stored outline instead of decoding the state on every call. Simulated with
 * the sizes taken out of the stored outline (or the outline cleared), as a server before them left it.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, type OutlineNode, type StoredOutlineNode } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { createLargeDocument, paragraph } from '@collab/test-support/documents'
import { call, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { outlineEntries } from '@collab/test-support/outline'
import { eventually, useRestartableServer } from '@collab/test-support/server'
import { EXPORT_INLINE_BYTES } from '../documents/export-markdown.ts'
import { outlineCandidates, startOutlineBackfill } from '../documents/outline-backfill.ts'
import { writeStoredOutline } from '../documents/store.ts'
import { createLogger } from '../logger.ts'

describe(`stored outlines given sizes at start (${DATABASE_KIND})`, () => {
  const s = useRestartableServer('outlines')

  async function stored(room: string): Promise<{ outline: OutlineNode[] | null; storedAt: Date }> {
    const rows = await s.server.services.db.prisma.$queryRaw<
      Array<{ outline: OutlineNode[] | null; storedAt: Date }>
    >`SELECT s.outline, s.updated_at AS "storedAt"
        FROM document_states s JOIN documents d ON d.id = s.document_id WHERE d.room = ${room}`
    if (!rows[0]) throw new Error(`no stored state for ${room}`)
    const { outline, storedAt } = rows[0]
    return { outline: outline && withoutTotals(outline), storedAt }
  }

  /**
   * An outline without the section totals a create or compaction stores in it (stored-totals.ts): the
   * backfill derives sizes, not totals (it would render every document it rewrites), so it is compared
   * by what it does write.
   */
  const withoutTotals = (nodes: OutlineNode[]): OutlineNode[] =>
    nodes.map(({ total: _total, blocks: _blocks, children, ...rest }: StoredOutlineNode) => ({
      ...rest,
      children: withoutTotals(children),
    }))

  async function setOutline(room: string, outline: unknown): Promise<void> {
    await s.server.services.db.prisma.$executeRaw`
      UPDATE document_states SET outline = ${outline === null ? null : JSON.stringify(outline)}::jsonb
       WHERE document_id = (SELECT id FROM documents WHERE room = ${room})`
  }

  /** The outline as a server before sizes stored it: every node without `size`. */
  const withoutSizes = (nodes: OutlineNode[]): unknown[] =>
    nodes.map(({ size: _size, children, ...rest }) => ({ ...rest, children: withoutSizes(children) }))

  const flat = (nodes: OutlineNode[]): OutlineNode[] =>
    nodes.flatMap((node) => [node, ...flat(node.children)])

  async function create(title: string, markdown: string) {
    const created = await s.server.services.documents.create(s.owner.user.id, { title, markdown })
    if (created.kind === 'error') throw new Error(created.message)
    return created.value
  }

  // First in the file: the pass started below must not meet one a restart started.
  test('a pass over outlines that all have sizes rewrites nothing; the one whose sizes are taken out is found and rewritten', async () => {
    const docs = [
      await create('Sized one', '## A\n\nalpha'),
      await create('Sized two', '## B\n\nbeta\n\n### C\n\ngamma'),
      await create('Sized three', 'no heading here'),
    ]
    const outlines = await Promise.all(docs.map(async (doc) => (await stored(doc.room)).outline))
    const pass = () =>
      startOutlineBackfill({
        prisma: s.server.services.db.prisma,
        documents: s.server.services.documents,
        logger: createLogger('silent'),
      }).done
    expect(await pass()).toBe(0)

    await setOutline(docs[1]!.room, withoutSizes(outlines[1]!))
    expect(await pass()).toBe(1)
    expect((await stored(docs[1]!.room)).outline).toEqual(outlines[1]!)
    for (const [i, doc] of docs.entries()) expect((await stored(doc.room)).outline).toEqual(outlines[i]!)
    expect(await pass()).toBe(0)
  }, 60_000)

  test('the candidates are read from the partial index, not by walking every stored outline', async () => {
    // Without sequential scans the planner still has the primary key, which walks every row; it can take
    // the partial index only while the query's condition is the index's (the same expression, inline).
    const plan = await s.server.services.db.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL enable_seqscan = off`
      return tx.$queryRaw<Array<{ 'QUERY PLAN': string }>>`EXPLAIN ${outlineCandidates(
        '00000000-0000-0000-0000-000000000000',
        200,
      )}`
    })
    const text = plan.map((row) => row['QUERY PLAN']).join('\n')
    expect(text).toContain('document_states_outline_lacks_sizes_idx')
    expect(text).not.toContain('document_states_pkey')
  }, 60_000)

  test('an outline without sizes, or none, is rewritten from the snapshot at the next start, and a cold get_outline then answers from it', async () => {
    const markdown = '## First\n\nalpha beta\n\n### Nested\n\ngamma\n\n## Second\n\n- one\n- two'
    const legacy = await create('Legacy', markdown)
    const cleared = await create('Cleared', markdown)
    const partly = await create('Partly', markdown)
    const gone = await create('Deleted', markdown)
    const sized = (await stored(legacy.room)).outline
    // The title's heading, First (with Nested) and Second under it, each with its size.
    expect(flat(sized!).map((node) => [node.title, node.size > 0])).toEqual([
      ['Legacy', true],
      ['First', true],
      ['Nested', true],
      ['Second', true],
    ])
    const clearedSized = (await stored(cleared.room)).outline
    const partlySized = (await stored(partly.room)).outline
    // Only the deepest node lacks its size (the check looks at every depth).
    await s.server.services.db.prisma.$executeRaw`
      UPDATE document_states SET outline = outline #- '{0,children,0,children,0,size}'
       WHERE document_id = (SELECT id FROM documents WHERE room = ${partly.room})`
    expect(flat((await stored(partly.room)).outline!).map((node) => node.size === undefined)).toEqual([
      false,
      false,
      true,
      false,
    ])
    await setOutline(legacy.room, withoutSizes(sized!))
    await setOutline(cleared.room, null)
    await setOutline(gone.room, withoutSizes((await stored(gone.room)).outline!))
    expect(await s.server.services.documents.softDelete(gone.slug)).toMatchObject({ kind: 'ok' })
    const before = await stored(legacy.room)

    await s.restart()
    await eventually(
      async () => expect((await stored(legacy.room)).outline).toEqual(sized),
      10_000,
      'rewritten',
    )
    await eventually(
      async () => expect((await stored(cleared.room)).outline).toEqual(clearedSized),
      10_000,
      'written',
    )
    await eventually(
      async () => expect((await stored(partly.room)).outline).toEqual(partlySized),
      10_000,
      'completed',
    )
    // Only the outline: the snapshot's time (what a compaction checks against) is as it was.
    expect((await stored(legacy.room)).storedAt).toEqual(before.storedAt)
    expect(JSON.stringify((await stored(gone.room)).outline)).not.toContain('"size"')

    // Nothing is loaded after the restart, so get_outline is a cold read. A title changed in the stored
    // outline alone shows whether it is answered from there (a decode of the state would not show it).
    expect(s.server.collab.hocuspocus.documents.has(legacy.room)).toBe(false)
    await s.server.services.db.prisma.$executeRaw`
      UPDATE document_states
         SET outline = jsonb_set(outline, '{0,children,0,title}', '"Marked in the stored outline"')
       WHERE document_id = (SELECT id FROM documents WHERE room = ${legacy.room})`
    const client = await connectClient(mcpUrlOf(s.server), s.owner.token)
    try {
      const { text, isError } = await call(client, 'get_outline', { slug: legacy.slug })
      expect(isError).toBe(false)
      const titles = outlineEntries(text).map((entry) => entry.title)
      expect(titles).toContain('Marked in the stored outline')
      expect(titles).not.toContain('First')
    } finally {
      await client.close()
    }
  }, 60_000)

  test("a large snapshot's outline is derived on the documents' worker, not on the server's thread", async () => {
    // ~400 KB of text in ten parts: a state past EXPORT_INLINE_BYTES, whose decode deriveStored sends to
    // the worker (past the create-time Markdown ceiling, so built through Yjs).
    const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu '.repeat(6)
    const parts = Array.from(
      { length: 10 },
      (_, part) => `## Part ${part}\n\n${Array.from({ length: 100 }, (_, i) => `${words}${i}`).join('\n\n')}`,
    )
    const big = await createLargeDocument(s.server, s.owner.user.id, 'Large legacy', parts)
    const sized = (await stored(big.room)).outline
    await setOutline(big.room, null)
    const asked: Array<{ what: string; bytes: number }> = []
    const documents = s.server.services.documents
    const done = await startOutlineBackfill({
      prisma: s.server.services.db.prisma,
      documents: {
        loadStored: (room) => documents.loadStored(room),
        deriveStored: (parts, request) => {
          asked.push({ what: request.what, bytes: parts.snapshot?.byteLength ?? 0 })
          return documents.deriveStored(parts, request)
        },
      },
      logger: createLogger('silent'),
    }).done
    expect(done).toBe(1)
    expect(asked).toHaveLength(1)
    expect(asked[0]!.what).toBe('outline')
    expect(asked[0]!.bytes).toBeGreaterThan(EXPORT_INLINE_BYTES)
    expect((await stored(big.room)).outline).toEqual(sized)
    expect(flat(sized!).map((node) => node.title)).toEqual([
      'Large legacy',
      ...Array.from({ length: 10 }, (_, i) => `Part ${i}`),
    ])
  }, 60_000)

  test('the rewrite never replaces an outline stored with a newer snapshot', async () => {
    const doc = await create('Raced', '## Before\n\nalpha')
    const read = await stored(doc.room)
    // A compaction lands between the backfill's read of the snapshot and its write.
    const editor = await s.connect(doc.room)
    editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph('typed later')])
    await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
    await eventually(() => expect(s.server.collab.persistence.pendingCount()).toBe(0), 10_000, 'stored')
    s.closeEditors()
    await eventually(() => expect(s.server.collab.hocuspocus.documents.has(doc.room)).toBe(false))
    const compacted = await stored(doc.room)
    expect(compacted.storedAt).not.toEqual(read.storedAt)

    const prisma = s.server.services.db.prisma
    const stale = withoutSizes(read.outline!) as OutlineNode[]
    expect(await writeStoredOutline(prisma, doc.id, stale, read.storedAt)).toBe(false)
    expect((await stored(doc.room)).outline).toEqual(compacted.outline)
    // Against the snapshot it was read with, the same write goes through.
    expect(await writeStoredOutline(prisma, doc.id, stale, compacted.storedAt)).toBe(true)
    expect((await stored(doc.room)).outline).toEqual(stale)
  }, 60_000)
})
