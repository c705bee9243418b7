/**
 * save_version of a large document (its stored content past EXPORT_INLINE_BYTES) is merged on the
 * documents' worker as a compaction that takes the named version (documents/service.ts
 * `saveNamedVersion`): decoding the state, the newest version and the outline on the event loop held
 * everyone ~160-210 ms for a 5 MB document. Asserted: nothing of it is decoded on the event loop (the
 * inline path's `fragmentOfState` is not called, as it is for a small document), and the version is the
 * same as the inline one would be: named, of the whole stored content, with the log merged into the
 * snapshot, its summary of what changed since the version before (the inline path's own), and an
 * outline with section totals.
 * Real server (PGlite, or PostgreSQL with TEST_DATABASE_URL), real MCP SDK client, the real worker.
 */
import { describe, expect, spyOn, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, userWithToken } from '@collab/test-support/server'
import * as Y from 'yjs'
import { EXPORT_INLINE_BYTES } from '../documents/export-markdown.ts'
import * as historyDiff from '../documents/history-diff.ts'
import { findVersionState } from '../documents/history-store.ts'
import {
  sliceSizedDocument,
  sliceSizedWithAgent,
  useHistoryServer,
  useRestoredSpies,
  versionId,
} from './history-support.ts'

const history = useHistoryServer()
const track = useRestoredSpies()

describe('a named version of a large document', () => {
  test('is merged on the worker, with its summary and outline, the log merged into the snapshot', async () => {
    const { server } = history
    const { user, token } = await userWithToken(server, 'named-large')
    const created = await sliceSizedDocument(
      server,
      user.id,
      'Large Named',
      1,
      'A long paragraph of an ordinary manual, repeated to make the document large. ',
    )
    const agent = await connectClient(mcpUrlOf(server), token)
    try {
      // A change after the document was built, typed by an editor and stored in the log.
      const editor = connectProvider(server.url, created.room, token)
      await editor.ready
      const first = (editor.doc.getXmlFragment(FRAGMENT_NAME).get(1) as Y.XmlElement).get(0) as Y.XmlText
      first.insert(0, 'Typed before the checkpoint. ')
      const documentId = (await server.services.documents.loadState(created.room))!.documentId
      const prisma = server.services.db.prisma
      const logged = async () =>
        Number(
          (
            await prisma.$queryRaw<Array<{ n: number }>>`
              SELECT count(*)::int AS n FROM document_updates WHERE document_id = ${documentId}::uuid`
          )[0]!.n,
        )
      await eventually(async () => expect(await logged()).toBeGreaterThan(0), 10_000, 'the store')
      editor.destroy()
      const stored = await server.services.documents.loadStored(created.room)
      expect((stored?.snapshot?.byteLength ?? 0) + stored!.updateBytes).toBeGreaterThan(EXPORT_INLINE_BYTES)

      const before = await server.services.documents.newestVersionState(documentId)
      const decoded = track(spyOn(historyDiff, 'fragmentOfState'))
      const saved = await callText(agent, 'save_version', { slug: created.slug, version_name: 'checkpoint' })
      expect(saved.isError, saved.text).toBeFalsy()
      expect(decoded).not.toHaveBeenCalled()
      const id = BigInt(versionId(saved.text, /version:? (\d+)/))

      const version = await findVersionState(prisma, documentId, { id })
      expect(version).toMatchObject({ reason: 'named', name: 'checkpoint' })
      // What changed since the version before it, as the inline path summarises it.
      const { diffFragments, fragmentOfState, summarize } = historyDiff
      expect(version!.summary).toEqual(
        summarize(diffFragments(fragmentOfState(before?.state ?? null), fragmentOfState(version!.state))),
      )
      // The whole stored content, the log merged into the snapshot.
      const holds = new Y.Doc()
      Y.applyUpdate(holds, version!.state)
      expect(holds.getXmlFragment(FRAGMENT_NAME).toString()).toContain('Typed before the checkpoint. ')
      expect(await logged()).toBe(0)
      const [row] = await prisma.$queryRaw<Array<{ outline: Array<{ size?: number }> | null }>>`
        SELECT outline FROM document_states WHERE document_id = ${documentId}::uuid`
      expect(row?.outline?.length).toBeGreaterThan(0)
      for (const node of row!.outline!) expect(node.size).toBeGreaterThanOrEqual(0)
    } finally {
      await agent.close()
    }
  }, 120_000)

  test('of a small document is made inline, as before', async () => {
    const { server } = history
    const { created, agent } = await sliceSizedWithAgent(server, 'named-small', 'Small Named', 0.05)
    try {
      const decoded = track(spyOn(historyDiff, 'fragmentOfState'))
      const saved = await callText(agent, 'save_version', { slug: created.slug, version_name: 'small' })
      expect(saved.isError, saved.text).toBeFalsy()
      expect(decoded).toHaveBeenCalled()
    } finally {
      await agent.close()
    }
  }, 60_000)
})
