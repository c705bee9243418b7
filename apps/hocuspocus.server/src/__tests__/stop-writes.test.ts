/**
 * The server's own writes (MCP tools, history restores) and the stop (server.ts `stop`, the SIGTERM path):
 * a write that has begun applying when the stop begins is waited for, and its last change is stored with
 * the rest; one that has applied nothing yet is refused and applies nothing. Before, a write under way went
 * on applying after the stop's last store: the change was in the live document of an instance that could
 * no longer store it, and the rolling restart behind nginx exited 1 with "document not stored"
 * (reliability/balancer-restart.test.ts). collab/persistence/write-gate.ts.
 */
import { expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { paragraph, storedText } from '@collab/test-support/documents'
import { eventually, useRestartableServer } from '@collab/test-support/server'
import type * as Y from 'yjs'
import { createDocumentWriter, STOPPING_MESSAGE } from '../modules/mcp/infra/writer.ts'
import type { RunningServer } from '../server.ts'

const setup = useRestartableServer('wren')

async function newRoom(server: RunningServer, title: string): Promise<string> {
  const created = await server.services.documents.create(setup.owner.user.id, { title, isPrivate: true })
  if (created.kind === 'error') throw new Error(created.message)
  return created.value.room
}

/** Resolves once the stop has closed the write gate: a write admitted now would be refused. */
async function gateClosed(server: RunningServer): Promise<void> {
  await eventually(() => {
    const probe = server.collab.persistence.beginWrite()
    probe?.()
    expect(probe).toBeUndefined()
  })
}

const push = (text: string) => (fragment: Y.XmlFragment) => {
  fragment.push([paragraph(text)])
  return { kind: 'ok' as const, value: undefined }
}

test('a write under way when the stop begins is waited for: what it applies after is stored', async () => {
  const { server } = setup
  const room = await newRoom(server, 'Under way')
  // A write admitted before the stop, on its own direct connection, as writer.ts holds one.
  const leave = server.collab.persistence.beginWrite()
  expect(leave).toBeDefined()
  const direct = await server.collab.hocuspocus.openDirectConnection(room, {})
  await direct.transact((doc) => push('first part')(doc.getXmlFragment(FRAGMENT_NAME)))
  // When the stop's last store is over (the stop itself also waits for documents to unload, so it
  // cannot tell).
  const persistence = server.collab.persistence
  const flush = persistence.flush.bind(persistence)
  let lastStoreOver = false
  persistence.flush = async (deadlineMs) => {
    const unstored = await flush(deadlineMs)
    lastStoreOver = true
    return unstored
  }
  const stopping = server.stop()
  await gateClosed(server)
  // The last store waits for the write (with nothing to wait for, it is over well within this second).
  await Bun.sleep(1_000)
  expect(lastStoreOver).toBe(false)
  // Its last part lands after the stop began, before the write ends.
  await direct.transact((doc) => push('last part')(doc.getXmlFragment(FRAGMENT_NAME)))
  await direct.disconnect()
  leave?.()
  expect(await stopping).toEqual({ unstored: [] })
  expect(lastStoreOver).toBe(true)
  await setup.restart()
  const stored = await storedText(setup.server, room)
  expect(stored).toContain('first part')
  expect(stored).toContain('last part')
})

test('a write that has applied nothing when the stop begins is refused, names the restart and applies nothing', async () => {
  const { server } = setup
  const room = await newRoom(server, 'Not yet')
  const writer = createDocumentWriter({
    hocuspocus: server.collab.hocuspocus,
    documents: server.services.documents,
    confirmations: server.collab.persistence,
  })
  let release = () => {}
  let held = false
  const writing = writer.write(room, {}, push('never applied'), {
    // Held where an MCP call waits for its document to load, before anything is applied.
    beforeApply: () =>
      new Promise<void>((resolve) => {
        held = true
        release = resolve
      }),
  })
  await eventually(() => expect(held).toBe(true))
  const live = server.collab.hocuspocus.documents.get(room)
  const stopping = server.stop()
  await gateClosed(server)
  release()
  expect(await writing).toEqual({
    kind: 'error',
    code: 'unavailable',
    field: 'slug',
    message: STOPPING_MESSAGE,
  })
  expect(readPlainText(live!.getXmlFragment(FRAGMENT_NAME))).not.toContain('never applied')
  expect(await stopping).toEqual({ unstored: [] })
  await setup.restart()
  expect(await storedText(setup.server, room)).not.toContain('never applied')
})
