/**
 * A revert in a document larger than one read slice (STATE_SLICE_BYTES): the states go to the documents'
 * worker and back as bytes, never as base64 text. As text, an 8 MiB state was joined from its slices
 * (60-170 ms) and copied by the structured clone of each post (110-290 ms), on the event loop, in one piece
 * each (red-team-history's profile); the worker's merged "before" state came back as text too. Bytes are
 * decoded a slice at a time as they are read and posted as transfers. Real server (PGlite, or PostgreSQL
 * with TEST_DATABASE_URL), real MCP SDK clients, the real documents' worker. And the newest version, whose
 * state the "before" version's summary compares with, is not read again when the revert read it already.
 */
import { describe, expect, spyOn, test } from 'bun:test'
import { callText } from '@collab/test-support/mcp'
import * as slicedRead from '../documents/sliced-read.ts'
import { WorkerPool } from '../documents/worker/pool.ts'
import {
  sliceSizedWithAgent,
  useHistoryServer,
  useRestoredSpies,
  versionOfAgentWrite,
} from './history-support.ts'

const history = useHistoryServer()
const track = useRestoredSpies()

/** The strings in a posted job longer than `chars` (where a state could hide as text), by path. */
function longTexts(value: unknown, chars: number, path = 'job'): string[] {
  if (typeof value === 'string') return value.length > chars ? [path] : []
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return []
  return Object.entries(value).flatMap(([key, item]) => longTexts(item, chars, `${path}.${key}`))
}

describe('a revert in a document larger than a read slice', () => {
  test('sends its states to the worker and back as bytes, never as text, and reads the newest version once', async () => {
    const { created, agent } = await sliceSizedWithAgent(history.server, 'bytes', 'Large', 1.5)
    const version = await versionOfAgentWrite(agent, created.slug)
    // What the event loop posts to the worker, and what the "before" merge answers.
    const posted: unknown[] = []
    const original = Worker.prototype.postMessage
    track(
      spyOn(Worker.prototype, 'postMessage').mockImplementation(function (
        this: Worker,
        message: unknown,
        transfer?: unknown,
      ) {
        posted.push(message)
        return original.call(this, message, transfer as StructuredSerializeOptions)
      }),
    )
    const before = track(spyOn(WorkerPool.prototype, 'before'))
    const reads = track(spyOn(slicedRead, 'readVersionState'))
    const reverted = await callText(agent, 'revert_changes', { slug: created.slug, version_id: version })
    expect(reverted.isError, reverted.text).toBeFalsy()
    const kinds = posted.map((job) => (job as { kind?: string }).kind)
    expect(kinds).toContain('before')
    expect(kinds).toContain('undo')
    for (const job of posted) expect(longTexts(job, 64 * 1024)).toEqual([])
    const merged = (await before.mock.results[0]?.value) as Awaited<ReturnType<WorkerPool['before']>>
    expect(merged.kind).toBe('ok')
    if (merged.kind === 'ok') expect(merged.value.state).toBeInstanceOf(Uint8Array)
    // The reverted version is the newest, whose state the "before" summary compares with: read once.
    const readIds = reads.mock.calls.map(([, id]) => id)
    expect(readIds.filter((id) => id === BigInt(version))).toHaveLength(1)
    await agent.close()
  }, 120_000)
})
