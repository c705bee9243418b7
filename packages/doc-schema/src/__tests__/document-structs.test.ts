/**
 * A document's Yjs item count and its ceiling (yjs/document-structs.ts): the count is exact, and the bound
 * kept between counts never lies low, whatever edits (local, remote, splitting, deleting, formatting) came
 * in between: if it did, a document could pass its ceiling unseen.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import * as Y from 'yjs'
import { MAX_DOCUMENT_STRUCTS } from '../limits.ts'
import { documentStructs, structsAdmitted, structsOverMessage } from '../yjs/document-structs.ts'
import { countUpdateWork } from '../yjs/update-work.ts'
import { runs } from './property-runs.ts'

/** A paragraph holding one text, in the fragment the server reads. */
function textDoc(): { doc: Y.Doc; text: Y.XmlText } {
  const doc = new Y.Doc()
  const paragraph = new Y.XmlElement('paragraph')
  const text = new Y.XmlText()
  paragraph.insert(0, [text])
  doc.getXmlFragment('default').insert(0, [paragraph])
  return { doc, text }
}

describe('documentStructs', () => {
  test('counts every struct in the store: a character typed before the last is an item of its own', () => {
    const { doc, text } = textDoc()
    const before = documentStructs(doc)
    expect(before).toBe(2) // the paragraph and its text
    for (let i = 0; i < 1_000; i++) text.insert(0, 'a')
    expect(documentStructs(doc)).toBe(before + 1_000)
    // Typed in order, characters merge into one run: the same text costs one item.
    const { doc: typed, text: typedText } = textDoc()
    for (let i = 0; i < 1_000; i++) typedText.insert(i, 'a')
    expect(documentStructs(typed)).toBe(3)
    // What the ceiling is about: bytes understate items (~11 bytes of state each here).
    const state = Y.encodeStateAsUpdate(doc)
    expect(state.byteLength / documentStructs(doc)).toBeLessThan(12)
    expect(countUpdateWork(state, null, Number.POSITIVE_INFINITY)?.inserted).toBe(documentStructs(doc))
  })
})

describe('structsAdmitted', () => {
  test('admits up to the ceiling exactly, then refuses', () => {
    const { doc, text } = textDoc()
    for (let i = 0; i < 50; i++) text.insert(0, 'b')
    const held = documentStructs(doc)
    expect(structsAdmitted(doc, 10, held + 10)).toBe(true)
    expect(structsAdmitted(doc, 11, held + 10)).toBe(false)
    expect(structsAdmitted(doc, 1)).toBe(true) // far below MAX_DOCUMENT_STRUCTS
    expect(held).toBeLessThan(MAX_DOCUMENT_STRUCTS)
  })

  // Edits of every kind that add or split structs, applied locally or from another replica; after each
  // round, a ceiling just above the true count must admit exactly what fits. A bound that lied low would
  // admit one more.
  type Edit =
    | { kind: 'insert'; at: number; text: string; bold: boolean }
    | { kind: 'delete'; at: number; length: number }
    | { kind: 'format'; at: number; length: number }
    | { kind: 'block' }
  const edit: fc.Arbitrary<Edit> = fc.oneof(
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      text: fc.string({ minLength: 1, maxLength: 4 }),
      bold: fc.boolean(),
    }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 5 }) }),
    fc.record({ kind: fc.constant('format' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 5 }) }),
    fc.record({ kind: fc.constant('block' as const) }),
  )
  const apply = (doc: Y.Doc, step: Edit) => {
    const fragment = doc.getXmlFragment('default')
    const text = (fragment.get(fragment.length - 1) as Y.XmlElement).get(0) as Y.XmlText
    const at = text.length === 0 ? 0 : step.kind === 'block' ? 0 : step.at % (text.length + 1)
    if (step.kind === 'insert') text.insert(at, step.text, step.bold ? { bold: true } : {})
    else if (step.kind === 'delete') text.delete(at, Math.min(step.length, text.length - at))
    else if (step.kind === 'format')
      text.format(at, Math.min(step.length, text.length - at), { italic: true })
    else {
      const paragraph = new Y.XmlElement('paragraph')
      paragraph.insert(0, [new Y.XmlText('new')])
      fragment.push([paragraph])
    }
  }

  test('the bound kept between counts never lies low (local and remote edits)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.array(edit, { minLength: 1, maxLength: 8 })), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.nat(20),
        (rounds, room) => {
          const { doc } = textDoc()
          const remote = new Y.Doc()
          Y.applyUpdate(remote, Y.encodeStateAsUpdate(doc))
          remote.on('update', (update: Uint8Array) => Y.applyUpdate(doc, update))
          structsAdmitted(doc, 0) // tracked from here
          for (const [fromRemote, steps] of rounds) {
            const target = fromRemote ? remote : doc
            for (const step of steps) target.transact(() => apply(target, step))
            if (!fromRemote) Y.applyUpdate(remote, Y.encodeStateAsUpdate(doc, Y.encodeStateVector(remote)))
            const held = documentStructs(doc)
            // A ceiling `room` above what it holds: `room` more fit, one more does not.
            expect(structsAdmitted(doc, room + 1, held + room)).toBe(false)
            expect(structsAdmitted(doc, room, held + room)).toBe(true)
          }
        },
      ),
      runs(300),
    )
  })
})

test('the refusal says what the document holds, what the change adds, the limit and what to do', () => {
  const message = structsOverMessage(499_990, 20)
  expect(message).toContain('holds 499,990 Yjs items')
  expect(message).toContain('would add 20')
  expect(message).toContain(`limit is ${MAX_DOCUMENT_STRUCTS.toLocaleString('en-US')}`)
  expect(message).toContain('import that as a new document')
})
