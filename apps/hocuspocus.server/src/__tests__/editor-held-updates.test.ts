/**
 * An editor update that builds on content the server does not have yet is held until the editor's sync
 * step 2 brings that content, then checked and applied (collab/boundary.ts, `hold`). It happens after a
 * kill -9 behind a balancer (reliability/balancer-restart.test.ts): an editor whose instance died before
 * passing its last changes on reconnects elsewhere and types during the handshake. It used to be refused,
 * closing the editor's connection to the document while its socket stayed open: it synced with no one.
 * What never comes is still refused, and nothing of it is applied.
 *
 * And what a connection's queue still holds once Hocuspocus has closed it (shutdown's closeConnections, a
 * revoke): its socket stays open until the client reads the close, and messages queued behind one paced
 * for the flood or user share go on being handled. None may be applied: applied and acknowledged on an
 * instance that is stopping, they were typing it could no longer store, and a rolling restart exited 1 with
 * "document not stored" (reliability/balancer-restart.test.ts). boundary.ts makes such a connection
 * read-only for whatever comes after the close.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { FRAGMENT_NAME, readPlainText } from '@collab/doc-schema'
import { element, paragraph, storedText } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import { IncomingMessage, MessageType, OutgoingMessage } from '@hocuspocus/server'
import * as Y from 'yjs'
import { EDITOR_MESSAGE_BURST } from '../collab/limits.ts'
import type { RunningServer } from '../server.ts'

let server: RunningServer
useTestServer((s) => {
  server = s
})
let owner: Awaited<ReturnType<typeof userWithToken>>
const providers: TestProvider[] = []

beforeAll(async () => {
  owner = await userWithToken(server, 'hana')
}, 60_000)
afterAll(() => {
  for (const p of providers) p.destroy()
})

async function open(room: string) {
  const p = connectProvider(server.url, room, owner.token)
  providers.push(p)
  const closes: string[] = []
  p.provider.on('close', ({ event }: { event: { reason: string } }) => closes.push(event.reason))
  await p.ready
  return { ...p, closes }
}

async function newRoom(title: string): Promise<string> {
  const created = await server.services.documents.create(owner.user.id, { title, isPrivate: true })
  if (created.kind === 'error') throw new Error(created.message)
  return created.value.room
}

function serverText(room: string): string {
  const document = server.collab.hocuspocus.documents.get(room)
  if (!document) throw new Error('document not loaded')
  return readPlainText(document.getXmlFragment(FRAGMENT_NAME))
}

test('typing on content the server lacks waits for the sync step 2 that brings it, then lands', async () => {
  const room = await newRoom('Held')
  const editor = await open(room)
  const heldBefore = server.metrics.editorHeld.get()
  // A paragraph the editor has and the server never got (as if the instance it came from died first):
  // applied with the provider as origin, which the provider does not send.
  const elsewhere = new Y.Doc()
  Y.applyUpdate(elsewhere, Y.encodeStateAsUpdate(editor.doc))
  const line = new Y.XmlText('from the dead instance')
  elsewhere.getXmlFragment(FRAGMENT_NAME).push([element('paragraph', {}, [line])])
  Y.applyUpdate(
    editor.doc,
    Y.encodeStateAsUpdate(elsewhere, Y.encodeStateVector(editor.doc)),
    editor.provider,
  )
  // Typing into that paragraph: an update that builds on it, sent at once.
  const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
  const text = (fragment.get(fragment.length - 1) as Y.XmlElement).get(0) as Y.XmlText
  text.insert(text.length, ', typed on')

  await eventually(
    () => expect(serverText(room)).toContain('from the dead instance, typed on'),
    10_000,
    'both on the server',
  )
  await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'acknowledged')
  expect(editor.closes).toEqual([])
  expect(server.metrics.editorHeld.get()).toBeGreaterThan(heldBefore)
  // And the connection goes on: the next word lands as usual.
  text.insert(0, 'Then: ')
  await eventually(() => expect(serverText(room)).toContain('Then: from the dead'), 10_000, 'next word')
})

test('an update built on content that never comes is refused, and nothing of it is applied', async () => {
  const room = await newRoom('Never')
  const editor = await open(room)
  // Built on a paragraph this editor does not have either, so its sync step 2 cannot bring it.
  const forger = new Y.Doc()
  Y.applyUpdate(forger, Y.encodeStateAsUpdate(editor.doc))
  const base = new Y.XmlText('base nobody sends')
  forger.getXmlFragment(FRAGMENT_NAME).push([element('paragraph', {}, [base])])
  const before = Y.encodeStateVector(forger)
  base.insert(base.length, ' smuggled words')
  const update = Y.encodeStateAsUpdate(forger, before)
  // Sent on the editor's socket as its provider would send an update.
  editor.provider.configuration.websocketProvider.send(
    new OutgoingMessage(room).createSyncMessage().writeUpdate(update).toUint8Array(),
  )

  await eventually(
    () => expect(editor.closes.join('\n')).toContain('depends on content this server does not have'),
    10_000,
    'refused',
  )
  // The connection was its only one, so the document unloaded after storing what it held.
  const live = server.collab.hocuspocus.documents.get(room)
  expect(live ? serverText(room) : await storedText(server, room)).not.toContain('smuggled')
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

const plainTextOf = (document: Y.Doc) => readPlainText(document.getXmlFragment(FRAGMENT_NAME))

test('after the server closed the connection, the messages queued behind a paced one are neither applied nor acknowledged', async () => {
  const room = await newRoom('Closing')
  const { seen, Socket } = closeUnread()
  const editor = connectProvider(server.url, room, owner.token, { socket: Socket })
  providers.push(editor)
  await editor.ready
  // Kept here: the document unloads once its last connection is closed.
  const onServer = server.collab.hocuspocus.documents.get(room)!
  const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
  fragment.push([paragraph('')])
  await eventually(() => expect(editor.provider.unsyncedChanges).toBe(0), 10_000, 'paragraph acknowledged')
  // One keystroke a message, past the connection's burst of messages: the rest are paced, one each
  // 1/EDITOR_MESSAGES_PER_SECOND, and wait in the connection's queue.
  const keystrokes = EDITOR_MESSAGE_BURST + 300
  const text = (fragment.get(0) as Y.XmlElement).get(0) as Y.XmlText
  for (let i = 0; i < keystrokes; i++) text.insert(i, 'x')
  await eventually(
    () => expect(plainTextOf(onServer).length).toBeGreaterThan(EDITOR_MESSAGE_BURST),
    10_000,
    'pacing begun',
  )
  server.collab.hocuspocus.closeConnections(room)
  const atClose = plainTextOf(onServer)
  expect(atClose.length).toBeLessThan(keystrokes) // some were still queued
  // Hocuspocus unloads the document once the connection's queue has been handled to its end.
  await eventually(
    () => expect(server.collab.hocuspocus.documents.has(room)).toBe(false),
    20_000,
    'queue handled, document unloaded',
  )
  // What came after the close is not in the document and was not acknowledged: answered "not applied" on
  // the same socket while it was open, or not answered when the socket closed first (seen twice on a
  // loaded CI machine: no answer came in 10 s). Answers may still be on their way: a short wait for them.
  expect(seen.closed).toBe(true)
  await eventually(
    () => expect(seen.after.length).toBeGreaterThan(0),
    3_000,
    'answers after the close',
  ).catch(() => {})
  expect(seen.after.filter((applied) => applied)).toEqual([])
  expect(plainTextOf(onServer)).toBe(atClose)
  expect(editor.provider.unsyncedChanges).toBeGreaterThan(0) // still owed to the next server
})
