/**
 * Large documents load in parts (documents/worker/split.ts, collab/persistence-extension.ts): the stored
 * content is split on the documents' worker into updates whose dependencies always come first, and the
 * event loop applies one a turn. Applied in order, the parts give the same document as the stored content
 * (content, state vector and deletions), each part integrating whole (nothing left pending between
 * parts); a document past LOAD_IN_PARTS_BYTES opened by an editor loads so and takes edits as any other.
 * Its states read in slices (documents/sliced-read.ts) join into the same bytes, and its parts are applied
 * without the document's update listeners (none of them encoded again as an update).
 */
import { describe, expect, spyOn, test } from 'bun:test'
import { appendMarkdown, FRAGMENT_NAME } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { buildDocument, paragraph } from '@collab/test-support/documents'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import { Document } from '@hocuspocus/server'
import * as Y from 'yjs'
import { LOAD_IN_PARTS_BYTES } from '../collab/store-policy.ts'
import { EDIT_IN_PARTS_BYTES, planUndo, undoRest } from '../documents/history-undo.ts'
import { readForCompaction, STATE_SLICE_BYTES } from '../documents/store.ts'
import { applyStored } from '../documents/stored-parts.ts'
import { splitStored } from '../documents/worker/split.ts'
import type { RunningServer } from '../server.ts'

/** Two editors typing into the same paragraphs, deleting, adding blocks, each hearing the other late. */
function editedByTwo(): { snapshot: Uint8Array; updates: Uint8Array[]; doc: Y.Doc } {
  const a = new Y.Doc()
  const b = new Y.Doc()
  appendMarkdown(a.getXmlFragment(FRAGMENT_NAME), '# Shared\n\nfirst paragraph\n\n- one\n  - two\n')
  Y.applyUpdate(b, Y.encodeStateAsUpdate(a))
  const snapshot = Y.encodeStateAsUpdate(a)
  const updates: Uint8Array[] = []
  a.on('update', (update: Uint8Array) => updates.push(update))
  let seed = 7
  const random = (n: number) => {
    seed = (seed * 48271) % 2147483647
    return seed % n
  }
  for (let i = 0; i < 400; i++) {
    const doc = i % 3 === 0 ? b : a
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const block = fragment.get(random(fragment.length)) as Y.XmlElement
    const text = block.toArray().find((child) => child instanceof Y.XmlText) as Y.XmlText | undefined
    if (text) {
      text.insert(random(text.length + 1), `w${i} `, i % 4 === 0 ? { bold: true } : undefined)
      if (i % 5 === 0 && text.length > 4) text.delete(random(text.length - 3), 3)
    }
    if (i % 37 === 0) fragment.insert(random(fragment.length) + 1, [paragraph(`block ${i}`)])
    if (i % 53 === 0 && fragment.length > 3) fragment.delete(fragment.length - 1, 1)
    if (i % 6 === 0) {
      Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)))
      Y.applyUpdate(b, Y.encodeStateAsUpdate(a, Y.encodeStateVector(b)))
    }
  }
  Y.applyUpdate(a, Y.encodeStateAsUpdate(b, Y.encodeStateVector(a)))
  return { snapshot, updates, doc: a }
}

describe('splitting stored content into parts', () => {
  test('the parts, applied in order, give the same document, each integrating whole', () => {
    const { snapshot, updates, doc } = editedByTwo()
    const expected = new Y.Doc()
    applyStored(expected, { snapshot, updates })
    expect(expected.getXmlFragment(FRAGMENT_NAME).toString()).toBe(
      doc.getXmlFragment(FRAGMENT_NAME).toString(),
    )
    const parts = splitStored({ snapshot, updates }, 256)
    expect(parts.length).toBeGreaterThan(10)
    const loaded = new Y.Doc()
    for (const part of parts) {
      Y.applyUpdate(loaded, part)
      expect(loaded.store.pendingStructs).toBeNull()
    }
    expect(loaded.getXmlFragment(FRAGMENT_NAME).toString()).toBe(
      expected.getXmlFragment(FRAGMENT_NAME).toString(),
    )
    expect(Y.equalSnapshots(Y.snapshot(loaded), Y.snapshot(expected))).toBe(true)
  })

  test('an update whose dependencies are missing stays pending, as it does when applied whole', () => {
    const { snapshot, updates } = editedByTwo()
    // A log row from a client whose earlier changes were never stored.
    const other = new Y.Doc()
    Y.applyUpdate(other, snapshot)
    other.getXmlFragment(FRAGMENT_NAME).push([paragraph('lost first')])
    const vector = Y.encodeStateVector(other)
    other.getXmlFragment(FRAGMENT_NAME).push([paragraph('came later')])
    const orphan = Y.encodeStateAsUpdate(other, vector)
    const parts = splitStored({ snapshot, updates: [...updates, orphan] }, 1024)
    const loaded = new Y.Doc()
    for (const part of parts) Y.applyUpdate(loaded, part)
    expect(loaded.store.pendingStructs).not.toBeNull()
    // The missing change arriving later lets it in, as it would after a whole load.
    Y.applyUpdate(loaded, Y.encodeStateAsUpdate(other))
    expect(loaded.store.pendingStructs).toBeNull()
    expect(loaded.getXmlFragment(FRAGMENT_NAME).toString()).toContain('came later')
  })
})

describe("a restore's large edit is applied in parts", () => {
  test('the parts, applied in order with typing between them, make the document the whole edit makes', () => {
    // A version of ~400 KB of prose, then nearly all of it deleted: restoring the version brings it back.
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    const sentence = 'Every paragraph of this manual says the same thing in its own words, again. '
    appendMarkdown(fragment, '# Manual\n')
    for (let chunk = 0; chunk < 10; chunk++) {
      const body = Array.from(
        { length: 300 },
        (_, i) => `Paragraph ${chunk * 300 + i}. ${sentence}${sentence}`,
      )
      expect(appendMarkdown(fragment, `${body.join('\n\n')}\n`).kind).toBe('ok')
    }
    const version = Y.encodeStateAsUpdate(doc)
    fragment.delete(1, fragment.length - 1)
    const live = Y.encodeStateAsUpdate(doc)
    const plan = planUndo({
      base: version,
      steps: [],
      live,
      checkConflicts: false,
      trackLive: true,
      field: 'id',
    })
    if (plan.kind !== 'ok') throw new Error(plan.message)
    const bytes = plan.value.edit.reduce((sum, part) => sum + part.byteLength, 0)
    expect(bytes).toBeGreaterThan(EDIT_IN_PARTS_BYTES)
    expect(plan.value.edit.length).toBeGreaterThan(2)

    // Someone types at the top while the parts are applied.
    const typist = new Y.Doc()
    Y.applyUpdate(typist, live)
    typist.getXmlFragment(FRAGMENT_NAME).insert(1, [paragraph('typed meanwhile')])
    const typed = Y.encodeStateAsUpdate(typist, Y.encodeStateVectorFromUpdate(live))

    const whole = new Y.Doc()
    Y.applyUpdate(whole, live)
    Y.applyUpdate(whole, Y.mergeUpdates(plan.value.edit))
    Y.applyUpdate(whole, typed)
    const parted = new Y.Doc()
    Y.applyUpdate(parted, live)
    const partedFragment = parted.getXmlFragment(FRAGMENT_NAME)
    Y.applyUpdate(parted, plan.value.edit[0]!)
    for (const [i, apply] of undoRest(plan.value).entries()) {
      if (i === 1) Y.applyUpdate(parted, typed)
      apply(partedFragment)
      // Each part integrates whole: nothing waits for a later one.
      expect(parted.store.pendingStructs).toBeNull()
    }
    expect(partedFragment.toString()).toBe(whole.getXmlFragment(FRAGMENT_NAME).toString())
    expect(Y.equalSnapshots(Y.snapshot(parted), Y.snapshot(whole))).toBe(true)
    // And it is the version's content, with the typing.
    const text = partedFragment.toString()
    expect(text).toContain('Paragraph 2999.')
    expect(text).toContain('typed meanwhile')
  })
})

/** Hocuspocus's update listener (private), bound when a document is made. */
type Heard = { handleUpdate(this: Document, update: Uint8Array, origin: unknown): Document }
const documentPrototype = Document.prototype as unknown as Heard
const handleUpdate = documentPrototype.handleUpdate

describe(`a large document opened by an editor loads in parts (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })

  test('its content is the stored content, and it takes edits as any other', async () => {
    const { user, token } = await userWithToken(server, 'large')
    const sentence = 'A long paragraph of an ordinary manual, repeated to make the document large. '
    const created = await buildDocument(server, user.id, { title: 'Large' }, (fragment) => {
      fragment.push(
        Array.from({ length: Math.ceil((LOAD_IN_PARTS_BYTES * 1.2) / (sentence.length * 10)) }, (_, i) =>
          paragraph(`${i}: ${sentence.repeat(10)}`),
        ),
      )
    })
    const stored = await server.services.documents.loadStored(created.room)
    expect((stored?.snapshot?.byteLength ?? 0) + (stored?.updateBytes ?? 0)).toBeGreaterThan(
      LOAD_IN_PARTS_BYTES,
    )
    const expected = new Y.Doc()
    applyStored(expected, stored!)
    // Read in STATE_SLICE_BYTES slices (sliced-read.ts), each slice decoded into the same bytes.
    const prisma = server.services.db.prisma
    expect(stored!.snapshot!.byteLength).toBeGreaterThan(STATE_SLICE_BYTES)
    const read = await readForCompaction(prisma, created.id)
    expect(Buffer.from(read.snapshot!).equals(Buffer.from(stored!.snapshot!))).toBe(true)
    const lookup = { before: 2n ** 62n }
    const version = await server.services.documents.findVersion(created.id, lookup)
    const versionState = await server.services.documents.findVersionState(created.id, lookup)
    expect(versionState?.id).toBe(version!.id)
    expect(Buffer.from(versionState!.state).equals(Buffer.from(version!.state))).toBe(true)
    const inParts = server.metrics.documentLoadsInParts.get()
    const editor = connectProvider(server.url, created.room, token)
    try {
      await editor.ready
      expect(server.metrics.documentLoadsInParts.get()).toBe(inParts + 1)
      const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
      await eventually(() =>
        expect(fragment.toString()).toBe(expected.getXmlFragment(FRAGMENT_NAME).toString()),
      )
      fragment.push([paragraph('typed after the load')])
      await eventually(async () => {
        const back = new Y.Doc()
        applyStored(back, (await server.services.documents.loadStored(created.room))!)
        expect(back.getXmlFragment(FRAGMENT_NAME).toString()).toContain('typed after the load')
      }, 10_000)
    } finally {
      editor.destroy()
    }
  })

  test("its parts are applied without the document's update listeners, so no part is encoded again", async () => {
    const { user, token } = await userWithToken(server, 'unheard')
    const sentence = 'Another long paragraph of a manual, repeated to make the document large enough. '
    const created = await buildDocument(server, user.id, { title: 'Unheard' }, (fragment) => {
      fragment.push(
        Array.from({ length: Math.ceil((LOAD_IN_PARTS_BYTES * 1.2) / (sentence.length * 10)) }, (_, i) =>
          paragraph(`${i}: ${sentence.repeat(10)}`),
        ),
      )
    })
    // Hocuspocus's listener, bound when the document is made: what Yjs encodes each applied part for.
    const heard: number[] = []
    const spy = spyOn(documentPrototype, 'handleUpdate').mockImplementation(function (
      this: Document,
      update: Uint8Array,
      origin: unknown,
    ) {
      heard.push(update.byteLength)
      return handleUpdate.call(this, update, origin)
    })
    const inParts = server.metrics.documentLoadsInParts.get()
    const editor = connectProvider(server.url, created.room, token)
    try {
      await editor.ready
      expect(server.metrics.documentLoadsInParts.get()).toBe(inParts + 1)
      // Before: every part (up to SPLIT_PART_BYTES of structs) came back here encoded as an update.
      expect(heard.filter((bytes) => bytes > 16 * 1024)).toEqual([])
      await eventually(() =>
        expect(editor.doc.getXmlFragment(FRAGMENT_NAME).toString()).toContain('0: Another'),
      )
    } finally {
      spy.mockRestore()
      editor.destroy()
    }
  })
})
