/**
 * changes_since of a large document, and the web page's changes (`GET …/versions/:id/changes`), compare on
 * the documents' worker (documents/service.ts `changesSince`): decoding the version's state and the stored
 * content and comparing them held the event loop 98-171 ms a call for a 5 MB document. A large version's
 * preview (`GET …/versions/:id`) is rendered there too (http/api-history.ts `previewOf`). Asserted, for a document not loaded (its stored content sent
 * to the worker) and for a loaded one (its copy there): nothing is decoded on the event loop (the inline
 * path's `fragmentOfState` is not called) and the answer is the one the comparison made here gives (its
 * counts line, and each changed block). Real server (PGlite, or PostgreSQL with TEST_DATABASE_URL), real
 * MCP SDK client, real provider, the real worker.
 */
import { describe, expect, spyOn, test } from 'bun:test'
import { documentMarkdownPrefix, FRAGMENT_NAME } from '@collab/doc-schema'
import { element, paragraph } from '@collab/test-support/documents'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken } from '@collab/test-support/server'
import * as Y from 'yjs'
import * as historyDiff from '../documents/history-diff.ts'
import { findVersionState } from '../documents/history-store.ts'
import { applyStored } from '../documents/stored-parts.ts'
import { MAX_API_PREVIEW_CHARS } from '../http/api-history.ts'
import { HISTORY_INLINE_BYTES } from '../limits.ts'
import { sliceSizedDocument, useHistoryServer, useRestoredSpies, versionId } from './history-support.ts'

const history = useHistoryServer()
const track = useRestoredSpies()

const SENTENCE = 'A long paragraph of an ordinary manual, repeated to make the document large. '

/** The counts line changes_since writes for `changes` (changes-since.ts). */
function countsLine(changes: historyDiff.SectionChange[]): string {
  const count = (kind: string) => changes.filter((change) => change.kind === kind).length
  const charsIn = changes.reduce((sum, change) => sum + change.charsIn, 0)
  const charsOut = changes.reduce((sum, change) => sum + change.charsOut, 0)
  return `changes: ${count('added')} sections added, ${count('removed')} removed, ${count('changed')} changed; ${charsIn} characters in, ${charsOut} out`
}

/** A large document, a named version of it, then an editor's changes after it (the editor left open). */
async function changedAfterVersion(handle: string) {
  const { server } = history
  const { user, token } = await userWithToken(server, handle)
  const created = await sliceSizedDocument(server, user.id, `Changes ${handle}`, 1, SENTENCE)
  const agent = await connectClient(mcpUrlOf(server), token)
  const saved = await callText(agent, 'save_version', { slug: created.slug, version_name: 'base' })
  expect(saved.isError, saved.text).toBeFalsy()
  const since = versionId(saved.text, /version:? (\d+)/)
  const editor: TestProvider = connectProvider(server.url, created.room, token)
  await editor.ready
  const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
  ;((fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText).insert(0, 'Changed after the version. ')
  fragment.delete(6, 1)
  const heading = element('heading', { level: 2 }, [new Y.XmlText('Added later')])
  fragment.push([heading, paragraph('A new section, written after the version.')])
  const live = server.collab.hocuspocus.documents.get(created.room)!
  await eventually(() => expect(live.getXmlFragment(FRAGMENT_NAME).toString()).toBe(fragment.toString()))
  return { created, agent, editor, since, live, token }
}

/** What changes_since should say, compared here: the version's state against `fragment`. */
async function expectedChanges(documentId: string, since: number, fragment: Y.XmlFragment) {
  const version = await findVersionState(history.server.services.db.prisma, documentId, { id: BigInt(since) })
  return historyDiff.diffSinceState(version!.state, fragment)
}

function expectAnswerOf(text: string, changes: historyDiff.SectionChange[]): void {
  expect(changes.length).toBeGreaterThan(1) // an added section and a changed one at least
  expect(text).toContain(countsLine(changes))
  for (const change of changes)
    for (const block of change.blocks) expect(text).toContain(block.text.slice(0, 40))
}

describe('changes_since of a large document', () => {
  test('not loaded: its stored content is compared on the worker, the same changes as here', async () => {
    const { server } = history
    const { created, agent, editor, since, token } = await changedAfterVersion('changes-stored')
    try {
      editor.destroy()
      await eventually(
        async () => expect(server.collab.hocuspocus.documents.has(created.room)).toBe(false),
        30_000,
        'the document to unload',
      )
      const stored = await server.services.documents.loadStored(created.room)
      const doc = new Y.Doc()
      applyStored(doc, stored!)
      const expected = await expectedChanges(stored!.documentId, since, doc.getXmlFragment(FRAGMENT_NAME))
      doc.destroy()

      const decoded = track(spyOn(historyDiff, 'fragmentOfState'))
      const answer = await callText(agent, 'changes_since', { slug: created.slug, since_version: since })
      expect(answer.isError, answer.text).toBeFalsy()
      expect(decoded).not.toHaveBeenCalled()
      expectAnswerOf(answer.text, expected)
      // The web page's changes (the same comparison over REST) likewise.
      const response = await fetch(`${server.url}/api/documents/${created.slug}/versions/${since}/changes`, {
        headers: { authorization: `Bearer ${token}` },
      })
      expect(response.status).toBe(200)
      const body = (await response.json()) as { counts: Record<string, number>; sections: unknown[] }
      expect(decoded).not.toHaveBeenCalled()
      expect(body.sections.length).toBe(expected.length)
      expect(body.counts).toEqual({
        added: expected.filter((change) => change.kind === 'added').length,
        removed: expected.filter((change) => change.kind === 'removed').length,
        changed: expected.filter((change) => change.kind === 'changed').length,
        charsIn: expected.reduce((sum, change) => sum + change.charsIn, 0),
        charsOut: expected.reduce((sum, change) => sum + change.charsOut, 0),
      })
    } finally {
      editor.destroy()
      await agent.close()
    }
  }, 120_000)

  test('loaded: compared on its copy on the worker, the same changes as here', async () => {
    const { created, agent, editor, since, live } = await changedAfterVersion('changes-live')
    try {
      const stored = await history.server.services.documents.loadStored(created.room)
      const expected = await expectedChanges(stored!.documentId, since, live.getXmlFragment(FRAGMENT_NAME))
      const decoded = track(spyOn(historyDiff, 'fragmentOfState'))
      const answer = await callText(agent, 'changes_since', { slug: created.slug, since_version: since })
      expect(answer.isError, answer.text).toBeFalsy()
      expect(decoded).not.toHaveBeenCalled()
      expectAnswerOf(answer.text, expected)
    } finally {
      editor.destroy()
      await agent.close()
    }
  }, 120_000)
})

describe("a large version's preview", () => {
  test('is rendered on the worker: nothing decoded here, the same Markdown as rendered here', async () => {
    const { created, agent, editor, since, token } = await changedAfterVersion('preview-large')
    try {
      const version = await findVersionState(history.server.services.db.prisma, created.id, {
        id: BigInt(since),
      })
      expect(version!.state.byteLength).toBeGreaterThan(HISTORY_INLINE_BYTES)
      const fragment = historyDiff.fragmentOfState(version!.state)
      const here = documentMarkdownPrefix(fragment, MAX_API_PREVIEW_CHARS, { media: 'source' }, true)
      fragment.doc?.destroy()
      const expected = here.text.slice(0, MAX_API_PREVIEW_CHARS)
      expect(expected.length).toBe(MAX_API_PREVIEW_CHARS) // the document is larger than one preview

      const decoded = track(spyOn(historyDiff, 'fragmentOfState'))
      const response = await fetch(`${history.server.url}/api/documents/${created.slug}/versions/${since}`, {
        headers: { authorization: `Bearer ${token}` },
      })
      expect(response.status).toBe(200)
      const body = (await response.json()) as { markdown: string; complete: boolean; note?: string }
      expect(decoded).not.toHaveBeenCalled()
      expect(body.markdown).toBe(expected)
      expect(body.complete).toBe(false)
      expect(body.note).toContain(`first ${MAX_API_PREVIEW_CHARS} characters`)
    } finally {
      editor.destroy()
      await agent.close()
    }
  }, 120_000)
})
