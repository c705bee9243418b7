/**
 * The compaction on the documents' worker read flat (worker/compact.ts `compactFlat`: no Y.Doc) against the
 * same compaction on a decoded document (`compactDecoded`): the same state bytes and vector, title, search
 * text, outline with section totals (adopted from the stored outline where a section did not change) and
 * version summary, for random concurrent histories stored as a snapshot and log rows.
 */
import { describe, expect, test } from 'bun:test'
import type { StoredOutlineNode } from '@collab/doc-schema'
import { concurrentEdits } from '@collab/doc-schema/test-histories'
import * as Y from 'yjs'
import { type CompactInput, compactDecoded, compactFlat, compactStored } from '../documents/worker/compact.ts'

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')

/** Every node of an outline, depth first. */
function allNodes(roots: readonly StoredOutlineNode[]): StoredOutlineNode[] {
  return roots.flatMap((node) => [node, ...allNodes(node.children)])
}

function expectSame(input: CompactInput) {
  const flat = compactFlat(input)
  expect(flat).not.toBeNull()
  const decoded = compactDecoded(input)
  expect(Buffer.from(flat!.state).equals(Buffer.from(decoded.state))).toBe(true)
  expect(Buffer.from(flat!.vector).equals(Buffer.from(decoded.vector))).toBe(true)
  expect({ ...flat, state: null, vector: null }).toEqual({ ...decoded, state: null, vector: null })
  return flat!
}

describe('the compaction read flat gives what decoding gives', () => {
  test('random histories as a snapshot and log rows, with and without a stored outline and a version', () => {
    let summaries = 0
    let adopted = 0
    for (let seed = 500; seed < 530; seed++) {
      const { updates } = concurrentEdits(seed, 3 + (seed % 3), 20, seed % 4 !== 0)
      // Most of the history in the snapshot, or only some: a few sections unchanged since it, or none.
      const cut = Math.min(updates.length - 1, Math.floor(updates.length * (0.6 + (seed % 5) / 10)))
      const version = Math.floor(cut / 2)
      const snapshot = Y.mergeUpdates(updates.slice(0, cut))
      // The snapshot as a compaction stored it (collected), with its outline and totals.
      const first = expectSame({ snapshot, updates: [], storedOutline: null, maxTextChars: 5_000 })
      const input: CompactInput = {
        snapshot: seed % 2 === 0 ? first.state : base64(first.state),
        updates: updates.slice(cut).map(base64),
        storedOutline: first.outline,
        maxTextChars: seed % 3 === 0 ? 0 : 40 + seed,
        versionBase:
          seed % 3 === 0 ? undefined : seed % 3 === 1 ? null : Y.mergeUpdates(updates.slice(0, version)),
      }
      const second = expectSame(input)
      if (second.summary) summaries++
      // Sections unchanged since the snapshot took their totals from its outline.
      const revs = new Set(allNodes(first.outline!).map((node) => node.rev))
      adopted += allNodes(second.outline!).filter((node) => revs.has(node.rev)).length
    }
    expect(summaries).toBeGreaterThan(10)
    expect(adopted).toBeGreaterThan(5)
  })

  test('a stored total is taken for a section whose rev and block count match, not rendered again', () => {
    const { updates } = concurrentEdits(42, 3, 20)
    const snapshot = Y.mergeUpdates(updates)
    const first = compactFlat({ snapshot, updates: [], storedOutline: null, maxTextChars: 0 })!
    const outline = structuredClone(first.outline!)
    const node = outline.find((n) => n.total !== undefined)!
    node.total = 7
    const again = compactFlat({
      snapshot: first.state,
      updates: [],
      storedOutline: outline,
      maxTextChars: 0,
    })!
    expect(again.outline!.find((n) => n.rev === node.rev)!.total).toBe(7)
    expect(
      compactDecoded({ snapshot: first.state, updates: [], storedOutline: outline, maxTextChars: 0 }).outline,
    ).toEqual(again.outline)
  })

  test('rows sent twice are merged once; a row missing before others is left to decoding', () => {
    const { updates } = concurrentEdits(7, 3, 10)
    const whole = Y.mergeUpdates(updates)
    expectSame({ snapshot: whole, updates: [base64(whole)], storedOutline: null, maxTextChars: 100 })
    // Without the third update, later ones of its client start past its clocks: Yjs keeps them pending.
    const gap = {
      snapshot: null,
      updates: updates.filter((_, i) => i !== 2).map(base64),
      storedOutline: null,
      maxTextChars: 0,
    }
    expect(compactFlat(gap)).toBeNull()
    expect(compactDecoded(gap).state.byteLength).toBeGreaterThan(0)
  })

  test('a compaction says how it read the parts: flat, decoded, decoded after the flat reading threw, merged', () => {
    const { updates } = concurrentEdits(11, 3, 10)
    const whole = Y.mergeUpdates(updates)
    const input: CompactInput = { snapshot: whole, updates: [], storedOutline: null, maxTextChars: 100 }
    const flat = compactStored(input)
    expect(flat.read).toBe('flat')
    // Parts Yjs keeps pending do not read flat: decoded, as expected.
    const gap = { ...input, snapshot: null, updates: updates.filter((_, i) => i !== 2).map(base64) }
    expect(compactStored(gap).read).toBe('decoded')
    // A flat reading that throws: decoded all the same, the same state, the error kept for the log.
    const failed = compactStored(input, undefined, () => {
      throw new Error('a struct this reading does not know')
    })
    expect({ read: failed.read, flatError: failed.flatError }).toEqual({
      read: 'flat_failed',
      flatError: 'a struct this reading does not know',
    })
    expect(Buffer.from(failed.state).equals(Buffer.from(flat.state))).toBe(true)
    expect(compactStored({ ...input, mergeOnly: true }).read).toBe('merged')
  })
})
