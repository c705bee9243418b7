/**
 * Comparing yjs/flat-read.ts with Yjs (flat-read.test.ts and its slow random run, flat-collect.test.ts) over
 * random concurrent documents (concurrent-edits.ts): a flat read's blocks, and its collected encoding.
 */
import { expect } from 'bun:test'
import * as Y from 'yjs'
import { FRAGMENT_NAME } from '../limits.ts'
import { documentToMarkdown } from '../markdown/document-to-markdown.ts'
import { yBlockForRender } from '../markdown/render-depth.ts'
import { readFlat } from '../yjs/flat-read.ts'
import { topLevelElements } from '../yjs/read-y.ts'

export { concurrentEdits } from './concurrent-edits.ts'

/** Yjs's blocks of a state, as the export reads them. */
export function yjsBlocks(update: Uint8Array) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update)
  const blocks = topLevelElements(doc.getXmlFragment(FRAGMENT_NAME)).map(yBlockForRender)
  doc.destroy()
  return blocks
}

export function expectSameBlocks(update: Uint8Array): void {
  const flat = readFlat(update, FRAGMENT_NAME)
  expect(flat).not.toBeNull()
  const ours = [...flat!.blocks()]
  const yjs = yjsBlocks(update)
  expect(ours).toEqual(yjs)
  // Attributes and marks in the same order too.
  expect(JSON.stringify(ours)).toBe(JSON.stringify(yjs))
  expect(documentToMarkdown({ type: 'doc', content: ours })).toBe(
    documentToMarkdown({ type: 'doc', content: yjs }),
  )
}

/** Yjs's encoding of `update` applied to a new document, and its state vector. */
function yjsCollected(update: Uint8Array) {
  const doc = new Y.Doc()
  Y.applyUpdate(doc, update)
  const out = { state: Y.encodeStateAsUpdate(doc), vector: Y.encodeStateVector(doc) }
  doc.destroy()
  return out
}

/** A state read flat and written back collected (flat-collect.ts) is Yjs's encoding of it, byte for byte. */
export function expectCollectedAsYjs(update: Uint8Array): void {
  const flat = readFlat(update, FRAGMENT_NAME, { collect: true })
  expect(flat?.collected).toBeDefined()
  const ours = flat!.collected!
  const theirs = yjsCollected(update)
  expect(Buffer.from(ours.vector).toString('hex')).toBe(Buffer.from(theirs.vector).toString('hex'))
  expect(Buffer.from(ours.state).toString('hex')).toBe(Buffer.from(theirs.state).toString('hex'))
}
