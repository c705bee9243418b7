/**
 * A restore or revert brings back every item it undeletes as a new one, so its edit is held to the
 * document's item limit too (MAX_DOCUMENT_STRUCTS, yjs/document-structs.ts): the whole plan's insertions,
 * its later parts included, are counted before its first part is applied, and a plan that would pass the
 * limit is refused with nothing applied.
 */
import { expect, test } from 'bun:test'
import { documentStructs, FRAGMENT_NAME, MAX_DOCUMENT_STRUCTS } from '@collab/doc-schema'
import * as Y from 'yjs'
import { applyUndoPlan, type UndoPlan } from '../documents/history-undo.ts'

/** A plan inserting `paragraphs` one-word paragraphs (three items each) in two parts, against `live`. */
function planAdding(live: Y.Doc, paragraphs: number): UndoPlan {
  const scratch = new Y.Doc()
  Y.applyUpdate(scratch, Y.encodeStateAsUpdate(live))
  const vector = Y.encodeStateVector(live)
  const fragment = scratch.getXmlFragment(FRAGMENT_NAME)
  const parts: Uint8Array[] = []
  for (const half of [Math.ceil(paragraphs / 2), Math.floor(paragraphs / 2)]) {
    const before = Y.encodeStateVector(scratch)
    scratch.transact(() => {
      for (let i = 0; i < half; i++) {
        const paragraph = new Y.XmlElement('paragraph')
        paragraph.insert(0, [new Y.XmlText('back')])
        fragment.push([paragraph])
      }
    })
    parts.push(Y.encodeStateAsUpdate(scratch, before))
  }
  return { edit: parts, vector, deleted: new Float64Array(), touched: [], changed: true }
}

test('a restore that would take the document past its item limit is refused whole; one within it applies', () => {
  const live = new Y.Doc()
  const paragraph = new Y.XmlElement('paragraph')
  const text = new Y.XmlText()
  paragraph.insert(0, [text])
  live.getXmlFragment(FRAGMENT_NAME).insert(0, [paragraph])
  // Ten items short of the limit: characters typed one before the last, an item each.
  live.transact(() => {
    for (let i = documentStructs(live); i < MAX_DOCUMENT_STRUCTS - 10; i++) text.insert(0, 'z')
  })
  expect(documentStructs(live)).toBe(MAX_DOCUMENT_STRUCTS - 10)

  // Four paragraphs, twelve items (the second part's six count too): refused, nothing applied.
  const refused = applyUndoPlan(live.getXmlFragment(FRAGMENT_NAME), planAdding(live, 4), 'version_id')
  expect(refused.kind).toBe('error')
  if (refused.kind === 'error') {
    expect(refused.field).toBe('version_id')
    expect(refused.message).toContain('this change would add 12')
    expect(refused.message).toContain(`its limit is ${MAX_DOCUMENT_STRUCTS.toLocaleString('en-US')}`)
  }
  expect(documentStructs(live)).toBe(MAX_DOCUMENT_STRUCTS - 10)

  // Three paragraphs, nine items: within it, its first part applied.
  const applied = applyUndoPlan(live.getXmlFragment(FRAGMENT_NAME), planAdding(live, 3), 'version_id')
  expect(applied.kind).toBe('ok')
  expect(live.getXmlFragment(FRAGMENT_NAME).length).toBe(3)
}, 30_000)
