/**
 * How many times a revert and a restore of a large document (a state of several read slices, the document
 * not loaded) carry a state over the database connection (issue 27 with 24; docs/history.md "Bounds").
 * Each read of a state of megabytes is the pg driver's work on the event loop, in slices (~0.1 s of CPU
 * per MiB in red-team-history's profile), felt by every other client. What the server wrote a moment ago
 * is not read back (documents/recent-states.ts): the "before" version's snapshot was read again to load
 * the document for the edit and by the compaction after it, and the "before" version itself as the newest
 * for the next version's summary. Now the snapshot is read at most once, and only the versions the action
 * names. Real server (PGlite, or PostgreSQL with TEST_DATABASE_URL), real MCP SDK client, the real
 * documents' worker.
 */
import { describe, expect, spyOn, test } from 'bun:test'
import { callText } from '@collab/test-support/mcp'
import { eventually } from '@collab/test-support/server'
import { findVersionState } from '../documents/history-store.ts'
import * as slicedRead from '../documents/sliced-read.ts'
import { STATE_SLICE_BYTES } from '../documents/sliced-read.ts'
import {
  sliceSizedWithAgent,
  useHistoryServer,
  useRestoredSpies,
  versionId,
  versionOfAgentWrite,
} from './history-support.ts'

const history = useHistoryServer()
const track = useRestoredSpies()

/** The slices read of each state while `work` runs and the document settles (unloaded, compacted). */
async function slicesRead(room: string, work: () => Promise<void>) {
  const reads = track(spyOn(slicedRead, 'readStateSlice'))
  await work()
  await eventually(
    async () => expect(history.server.collab.hocuspocus.documents.has(room)).toBe(false),
    60_000,
  )
  await Bun.sleep(500) // a compaction scheduled as it unloaded
  const snapshot = reads.mock.calls.filter(([, of]) => 'snapshot' in of).length
  const versions = new Map<bigint, number>()
  for (const [, of] of reads.mock.calls)
    if ('version' in of) versions.set(of.version, (versions.get(of.version) ?? 0) + 1)
  reads.mockRestore()
  return { snapshot, versions }
}

/**
 * A paragraph's sentence ten times longer than the helper's own (paragraphs of ~7.7 KB): the same state's
 * size in a tenth of the blocks, where the history's work (the edit's undo, the "before" merge, the
 * compactions' outlines) goes by blocks and what is counted here goes by the state's bytes.
 */
const SENTENCE = 'A long paragraph of an ordinary manual, repeated to make the document large. '
const LONG_SENTENCE = SENTENCE.repeat(10)

describe('a revert and a restore of a document of several read slices', () => {
  test('read the snapshot once at most and no version but those they name', async () => {
    const { created, agent } = await sliceSizedWithAgent(
      history.server,
      'passes',
      'Large',
      2.5,
      LONG_SENTENCE,
    )
    const stored = await history.server.services.documents.loadStored(created.room)
    expect(stored?.snapshot?.byteLength).toBeGreaterThan(2 * STATE_SLICE_BYTES) // three read slices
    try {
      const saved = await callText(agent, 'save_version', { slug: created.slug, version_name: 'built' })
      expect(saved.isError, saved.text).toBeFalsy()
      const named = versionId(saved.text, /version:? (\d+)/)
      const version = await versionOfAgentWrite(agent, created.slug)
      const slices = Math.ceil((STATE_SLICE_BYTES * 2.5) / STATE_SLICE_BYTES)
      const reverted = await slicesRead(created.room, async () => {
        const answer = await callText(agent, 'revert_changes', { slug: created.slug, version_id: version })
        expect(answer.isError, answer.text).toBeFalsy()
      })
      // Read before this change: the snapshot three times (the "before" merge, the load for the edit, the
      // compaction after it) and the "before" version as the next version's base.
      expect(reverted.snapshot).toBeLessThanOrEqual(slices)
      expect([...reverted.versions.keys()].sort()).toEqual([BigInt(named), BigInt(version)].sort())
      for (const count of reverted.versions.values()) expect(count).toBeLessThanOrEqual(slices)
      const restored = await slicesRead(created.room, async () => {
        const answer = await callText(agent, 'restore_version', { slug: created.slug, version_id: named })
        expect(answer.isError, answer.text).toBeFalsy()
      })
      expect(restored.snapshot).toBeLessThanOrEqual(slices)
      expect([...restored.versions.keys()]).toEqual([BigInt(named)])
      for (const count of restored.versions.values()) expect(count).toBeLessThanOrEqual(slices)
    } finally {
      await agent.close()
    }
  }, 180_000)

  test('a snapshot equal to a version the caller holds is taken from it, not read (the database compares)', async () => {
    const { created, agent } = await sliceSizedWithAgent(
      history.server,
      'same',
      'Same',
      1.5,
      'Another long paragraph, repeated so the state takes several read slices. '.repeat(10),
    )
    let named: number
    try {
      const saved = await callText(agent, 'save_version', { slug: created.slug, version_name: 'now' })
      expect(saved.isError, saved.text).toBeFalsy()
      named = versionId(saved.text, /version:? (\d+)/)
    } finally {
      await agent.close()
    }
    const prisma = history.server.services.db.prisma
    const { documentId } = (await history.server.services.documents.loadState(created.room))!
    const version = await findVersionState(prisma, documentId, { id: BigInt(named) })
    const other = { id: BigInt(named), state: version!.state.slice(0, version!.state.byteLength - 1) }
    const reads = track(spyOn(slicedRead, 'readStateSlice'))
    // No recent states given: only the comparison can spare the read.
    const same = await slicedRead.readSnapshotState(prisma, documentId, undefined, {
      id: BigInt(named),
      state: version!.state,
    })
    expect(reads).not.toHaveBeenCalled()
    expect(same.snapshot).toEqual(version!.state)
    expect(same.snapshot).not.toBe(version!.state) // a copy: the caller's goes to the worker
    const read = await slicedRead.readSnapshotState(prisma, documentId, undefined, other)
    expect(reads).toHaveBeenCalled()
    expect(read.snapshot).toEqual(version!.state)
  }, 120_000)
})
