/**
 * A connection Hocuspocus has closed (shutdown's closeConnections, a revoke) keeps its socket until the
 * client reads the close, and messages already on their way (sent before it, or queued behind one paced
 * for the flood or user share) still reach the server. None of them may be applied: applied and
 * acknowledged on an instance that is stopping, they were typing it could no longer store, and a rolling
 * restart exited 1 with "document not stored" (reliability/balancer-restart.test.ts). collab/boundary.ts
 * makes such a connection read-only for whatever comes after the close.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { paragraph } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import { IncomingMessage, MessageType } from '@hocuspocus/server'
import type * as Y from 'yjs'
import { EDITOR_MESSAGE_BURST } from '../collab/limits.ts'
import type { RunningServer } from '../server.ts'

let server: RunningServer
useTestServer((s) => {
  server = s
})
let owner: Awaited<ReturnType<typeof userWithToken>>
const providers: TestProvider[] = []
beforeAll(async () => {
  owner = await userWithToken(server, 'ines')
}, 60_000)
afterAll(() => {
  for (const p of providers) p.destroy()
})

/**
 * A WebSocket whose client never reads the server's close message (as if it were still on the wire), and
 * that records the sync statuses the server answers after the close: true for an update applied, false
 * for one not applied.
 */
function closeUnread() {
  const seen = { closed: false, after: [] as boolean[] }
  class Socket extends WebSocket {
    override addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: unknown) {
      if (type !== 'message')
        return super.addEventListener(type, listener, options as AddEventListenerOptions)
      const wrapped = (event: Event) => {
        const message = new IncomingMessage(new Uint8Array((event as MessageEvent).data as ArrayBuffer))
        message.readVarString()
        const kind = message.readVarUint()
        if (kind === MessageType.CLOSE) {
          seen.closed = true
          return // never read
        }
        // A varint of 0 or 1 reads the same as a var uint.
        if (seen.closed && kind === MessageType.SyncStatus) seen.after.push(message.readVarUint() === 1)
        if (typeof listener === 'function') listener(event)
        else listener.handleEvent(event)
      }
      super.addEventListener(type, wrapped, options as AddEventListenerOptions)
    }
  }
  return { seen, Socket }
}

/** The server's live copy of `room` (kept by the test: unloaded once its last connection closed). */
function live(room: string): Y.Doc {
  const document = server.collab.hocuspocus.documents.get(room)
  if (!document) throw new Error('document not loaded')
  return document
}
const textOf = (document: Y.Doc) => readPlainText(document.getXmlFragment(FRAGMENT_NAME))

test('after the server closed the connection, the messages queued behind a paced one are neither applied nor acknowledged', async () => {
  const created = await server.services.documents.create(owner.user.id, { title: 'Closing', isPrivate: true })
  if (created.kind === 'error') throw new Error(created.message)
  const { room } = created.value
  const { seen, Socket } = closeUnread()
  const editor = connectProvider(server.url, room, owner.token, { socket: Socket })
  providers.push(editor)
  await editor.ready
  const onServer = live(room)
  const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
  fragment.push([paragraph('')])
  await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'paragraph acknowledged')
  // One keystroke a message, past the connection's burst of messages: the rest are paced, one each
  // 1/EDITOR_MESSAGES_PER_SECOND, and wait in the connection's queue.
  const keystrokes = EDITOR_MESSAGE_BURST + 300
  const text = (fragment.get(0) as Y.XmlElement).get(0) as Y.XmlText
  for (let i = 0; i < keystrokes; i++) text.insert(i, 'x')
  await eventually(
    () => expect(textOf(onServer).length).toBeGreaterThan(EDITOR_MESSAGE_BURST),
    10_000,
    'pacing begun',
  )
  server.collab.hocuspocus.closeConnections(room)
  const atClose = textOf(onServer)
  expect(atClose.length).toBeLessThan(keystrokes) // some were still queued
  // Hocuspocus unloads the document once the connection's queue has been handled to its end.
  await eventually(
    () => expect(server.collab.hocuspocus.documents.has(room)).toBe(false),
    20_000,
    'queue handled, document unloaded',
  )
  // What came after the close was answered on the same socket, "not applied", and is not in the document.
  expect(seen.closed).toBe(true)
  expect(seen.after.length).toBeGreaterThan(0)
  expect(seen.after.filter((applied) => applied)).toEqual([])
  expect(textOf(onServer)).toBe(atClose)
  expect(editor.provider.unsyncedChanges).toBeGreaterThan(0) // still owed to the next server
})
