/**
 * Several instances store their own full copy of a document. With mergeWithStored (set when Redis is
 * configured) a store merges with the stored state under a row lock, so an instance that has not yet
 * received another instance's change cannot overwrite it in the database.
 */
import { describe, expect, test } from 'bun:test'
import { appendMarkdown, FRAGMENT_NAME, readPlainText, readTitle } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import * as Y from 'yjs'

describe(`storing with mergeWithStored (${DATABASE_KIND})`, () => {
  const share = useSharedServer()

  /** Two copies of a new document, as two instances would hold it, and a way to store either. */
  async function twoCopies(title: string) {
    const { user } = await userWithToken(share.server, share.handle(`merge-${title.toLowerCase()}`))
    const created = await share.server.services.documents.create(user.id, {
      title,
      markdown: 'kept paragraph\n\nparagraph to delete',
    })
    if (created.kind === 'error') throw new Error(created.message)
    const { id, room } = created.value
    const base = (await share.server.services.documents.loadState(room))!.state!
    const copy = () => {
      const doc = new Y.Doc()
      Y.applyUpdate(doc, base)
      return doc
    }
    const store = (doc: Y.Doc, mergeWithStored: boolean) => {
      const fragment = doc.getXmlFragment(FRAGMENT_NAME)
      return share.server.services.documents.storeState(
        id,
        { state: Y.encodeStateAsUpdate(doc), title: readTitle(fragment), text: readPlainText(fragment) },
        { mergeWithStored },
      )
    }
    const storedText = async () => {
      const doc = new Y.Doc()
      Y.applyUpdate(doc, (await share.server.services.documents.loadState(room))!.state!)
      return readPlainText(doc.getXmlFragment(FRAGMENT_NAME))
    }
    return { a: copy(), b: copy(), store, storedText }
  }

  const append = (doc: Y.Doc, text: string) => {
    const done = appendMarkdown(doc.getXmlFragment(FRAGMENT_NAME), text)
    if (done.kind === 'error') throw new Error(done.message)
  }

  test("a stale copy stored after another's change keeps that change", async () => {
    const { a, b, store, storedText } = await twoCopies('Insertions')
    append(b, 'written on instance B')
    await store(b, true)
    append(a, 'written on instance A') // A never received B's change
    await store(a, true)
    expect(await storedText()).toContain('written on instance B')
    expect(await storedText()).toContain('written on instance A')
  })

  test('a stored state held in parts (over 256 KiB) is merged as well, read in slices', async () => {
    const { a, b, store, storedText } = await twoCopies('Parts')
    append(b, 'written on instance B')
    for (let i = 0; i < 8; i++) append(b, `Part ${i} of a long report: ${'many words of it '.repeat(3_000)}`)
    await store(b, true)
    const [row] = await share.server.services.db.prisma.$queryRaw<Array<{ parts: number }>>`
      SELECT s.parts FROM document_states s JOIN documents d ON d.id = s.document_id WHERE d.title = 'Parts'`
    expect(Number(row?.parts)).toBeGreaterThan(1)
    append(a, 'written on instance A')
    await store(a, true)
    const text = await storedText()
    expect(text).toContain('written on instance B')
    expect(text).toContain('written on instance A')
  })

  test('without merging, the same order loses the change (what the merge is for)', async () => {
    const { a, b, store, storedText } = await twoCopies('Overwrite')
    append(b, 'written on instance B')
    await store(b, false)
    append(a, 'written on instance A')
    await store(a, false)
    expect(await storedText()).not.toContain('written on instance B')
  })

  test('a stale copy does not bring back a block another instance deleted', async () => {
    const { a, b, store, storedText } = await twoCopies('Deletions')
    const fragment = b.getXmlFragment(FRAGMENT_NAME)
    const index = fragment
      .toArray()
      .findIndex((n) => n instanceof Y.XmlElement && n.toString().includes('delete'))
    expect(index).toBeGreaterThan(0)
    fragment.delete(index, 1) // a deletion: B's state vector does not move
    await store(b, true)
    await store(a, true) // A's state vector covers B's, yet it lacks the deletion
    expect(await storedText()).not.toContain('paragraph to delete')
    expect(await storedText()).toContain('kept paragraph')
  })
})
