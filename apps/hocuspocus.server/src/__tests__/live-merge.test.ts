/**
 * A large document's compaction while it is loaded merges the stored bytes alone (collab/persistence/
 * compaction.ts `mergesOnly`, worker/compact.ts `mergeOnly`): no decoded copy of it on the documents'
 * worker beside the live one. What shows it from outside: the snapshot written then has no outline, and
 * the text of a paragraph deleted before it is still in its bytes (a decode would have collected it).
 * Once the document unloads, the full compaction writes the outline with its totals, collects the
 * deleted text and takes the version people's changes waited for, with its summary. The threshold is
 * made small here (`liveMergeStructs`); LIVE_MERGE_STRUCTS is 100,000 items. An agent's version is taken
 * by a full compaction all the same, with its outline and summary.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readOutline, type StoredOutlineNode } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { appendOrThrow, buildDocument, paragraph } from '@collab/test-support/documents'
import { outlineShape } from '@collab/test-support/outline'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import { applyStored } from '../documents/stored-parts.ts'
import type { RunningServer } from '../server.ts'
import { agentAppends, editorOnPlan, useHistoryPlan } from './history-support.ts'
import { wholeSnapshotSql } from './whole-state.ts'

const DELETED = 'Ephemeral words typed and then deleted'

async function storedRow(server: RunningServer, documentId: string) {
  const [row] = await server.services.db.prisma.$queryRaw<
    Array<{ state: Uint8Array; outline: StoredOutlineNode[] | null; rows: number }>
  >`
    SELECT ${wholeSnapshotSql('s')} AS state, s.outline,
           (SELECT count(*)::int FROM document_updates u WHERE u.document_id = s.document_id) AS rows
      FROM document_states s WHERE s.document_id = ${documentId}::uuid`
  if (!row) throw new Error('no stored state')
  return { ...row, state: new Uint8Array(row.state) }
}

const holds = (state: Uint8Array, text: string) => Buffer.from(state).includes(Buffer.from(text))

/** The stored content (snapshot, then log) as text. */
async function storedText(server: RunningServer, room: string): Promise<string> {
  const stored = await server.services.documents.loadStored(room)
  if (!stored) throw new Error(`no stored document for ${room}`)
  const doc = new Y.Doc()
  applyStored(doc, stored)
  const text = doc.getXmlFragment(FRAGMENT_NAME).toString()
  doc.destroy()
  return text
}

describe(`a large live document's compaction (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer(
    (s) => {
      server = s
    },
    { liveMergeStructs: 100, storeCompactAfterUpdates: 2, versionMinIntervalMs: 0 },
  )

  test('merges the bytes alone while loaded, and compacts fully once unloaded', async () => {
    const { user, token } = await userWithToken(server, 'merger')
    const created = await buildDocument(server, user.id, { title: 'Large' }, (fragment) => {
      appendOrThrow(fragment, '## First')
      fragment.push(Array.from({ length: 60 }, (_, i) => paragraph(`First section, paragraph ${i}.`)))
      appendOrThrow(fragment, '## Second\n\nsecond')
    })
    const editor = connectProvider(server.url, created.room, token)
    await editor.ready
    const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
    const compactions = server.metrics.compactions.get()

    fragment.insert(1, [paragraph(DELETED)])
    await eventually(
      async () => expect(await storedText(server, created.room)).toContain(DELETED),
      10_000,
      'the paragraph stored',
    )
    fragment.delete(1, 1)
    for (const text of ['typed one', 'typed two', 'typed three']) {
      fragment.push([paragraph(text)])
      await Bun.sleep(300) // a store each (the debounce is 50-200 ms)
    }
    // Not held here: the full compaction waits for the live document to be collected.
    const liveText = () =>
      server.collab.hocuspocus.documents.get(created.room)!.getXmlFragment(FRAGMENT_NAME).toString()
    await eventually(
      async () => {
        const text = await storedText(server, created.room)
        expect(text).toBe(liveText())
        expect(server.metrics.compactions.get()).toBeGreaterThan(compactions)
      },
      10_000,
      'compacted while loaded',
    )
    const merged = await storedRow(server, created.id)
    expect(server.collab.hocuspocus.documents.has(created.room)).toBe(true)
    expect(merged.outline).toBeNull()
    expect(holds(merged.state, DELETED)).toBe(true)
    const expected = liveText()
    expect(expected).not.toContain(DELETED)

    editor.destroy()
    await eventually(() => expect(server.collab.hocuspocus.documents.has(created.room)).toBe(false), 20_000)
    await eventually(
      async () => expect((await storedRow(server, created.id)).outline).not.toBeNull(),
      40_000,
      'compacted after the unload',
    )
    const full = await storedRow(server, created.id)
    expect(full.rows).toBe(0)
    expect(holds(full.state, DELETED)).toBe(false)
    expect(await storedText(server, created.room)).toBe(expected)
    const back = new Y.Doc()
    Y.applyUpdate(back, full.state)
    expect(outlineShape(full.outline!)).toEqual(
      outlineShape(readOutline(back.getXmlFragment(FRAGMENT_NAME)) as StoredOutlineNode[]),
    )
    expect(full.outline!.every((node) => typeof node.total === 'number')).toBe(true)
    back.destroy()
    // The first compaction after the load takes an interval version (none since the load): a merge alone
    // takes it without a summary. People's changes as they left are taken after the unload, with one.
    const versions = await server.services.db.prisma.documentVersion.findMany({
      where: { documentId: created.id },
      orderBy: { id: 'asc' },
    })
    expect(versions.map((v) => [v.reason, v.summary === null])).toEqual([
      ['created', true],
      ['interval', true],
      ['pause', false],
    ])
    expect(versions[2]!.summary).toMatchObject({ changed: 1, sections: [{ t: 'Second' }] })
  }, 90_000)
})

describe(`an agent's version of a large live document (${DATABASE_KIND})`, () => {
  // The agent's version waits for the agent's pause while a person is connected (collab/persistence/
  // versions.ts), then is taken at the row of its write: by a full compaction, so it has its outline
  // (how `changes_since` finds the version of a rev the agent wrote) and its summary.
  const plan = useHistoryPlan({
    versionMinIntervalMs: 0,
    versionPauseMs: 30_000,
    versionAgentPauseMs: 500,
    liveMergeStructs: 10,
  })

  test("is taken whole, with its outline and summary, while the person's typing is merged alone", async () => {
    const { provider } = await editorOnPlan(plan, 'reader', 'laptop')
    await provider.ready
    try {
      const answer = await agentAppends(plan, '## Added\n\nWritten by the agent.')
      expect(answer.isError).toBe(false)
      const version = await eventually(async () => {
        const [newest] = await plan.server.services.db.prisma.documentVersion.findMany({
          where: { document: { slug: plan.slug } },
          orderBy: { id: 'desc' },
          take: 1,
        })
        expect(newest?.reason).toBe('agent')
        return newest!
      }, 20_000)
      expect(version.outline).not.toBeNull()
      expect(version.summary).toMatchObject({ added: 1, sections: [{ t: 'Added' }] })
    } finally {
      provider.destroy()
    }
  }, 60_000)
})
