/**
 * A restore's "before" version holds the document as it is, typing not yet stored included: the stored
 * content is what is merged on the documents' worker (documents/history-before.ts), so what the live
 * document holds unstored is stored first (the writer's storePending). Stores are debounced for a minute
 * here, so the person's typing is in memory only when the restore starts.
 */
import { expect, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { paragraph } from '@collab/test-support/documents'
import { connectProvider } from '@collab/test-support/provider'
import { eventually, useTestServer } from '@collab/test-support/server'
import type { RunningServer } from '../server.ts'
import { planWithAgent } from './history-support.ts'

let server: RunningServer
useTestServer(
  (s) => {
    server = s
  },
  { storeDebounceMs: 60_000, storeMaxDebounceMs: 60_000, versionMinIntervalMs: 0 },
)

async function api(path: string, token: string, init: RequestInit = {}) {
  const response = await fetch(`${server.url}/api${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

test("the 'before' version holds typing not yet stored, and restoring it brings that typing back", async () => {
  const { owner, slug, room } = await planWithAgent(server)
  const versions = await api(`/documents/${slug}/versions`, owner.token)
  const [created] = (versions.body.versions as Array<{ id: string }>).slice(-1)
  const editor = connectProvider(server.url, room, owner.token)
  try {
    await editor.ready
    editor.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph('Typed just before the restore.')])
    const live = () => server.collab.hocuspocus.documents.get(room)
    await eventually(() =>
      expect(live()?.getXmlFragment(FRAGMENT_NAME).toString()).toContain('Typed just before the restore.'),
    )
    // Not stored yet: the stored content lacks it.
    const stored = await fetch(`${server.url}/api/documents/${slug}/markdown`, {
      headers: { authorization: `Bearer ${owner.token}` },
    })
    expect(await stored.text()).not.toContain('Typed just before the restore.')

    const restored = await api(`/documents/${slug}/versions/${created!.id}/restore`, owner.token, {
      method: 'POST',
    })
    expect(restored.status, JSON.stringify(restored.body)).toBe(200)
    const beforeId = restored.body.beforeVersionId as string
    const before = await api(`/documents/${slug}/versions/${beforeId}`, owner.token)
    expect(before.body.markdown).toContain('Typed just before the restore.')
    await eventually(() =>
      expect(live()?.getXmlFragment(FRAGMENT_NAME).toString()).not.toContain(
        'Typed just before the restore.',
      ),
    )

    const undone = await api(`/documents/${slug}/versions/${beforeId}/restore`, owner.token, {
      method: 'POST',
    })
    expect(undone.status, JSON.stringify(undone.body)).toBe(200)
    await eventually(() =>
      expect(editor.doc.getXmlFragment(FRAGMENT_NAME).toString()).toContain('Typed just before the restore.'),
    )
  } finally {
    editor.destroy()
  }
})
