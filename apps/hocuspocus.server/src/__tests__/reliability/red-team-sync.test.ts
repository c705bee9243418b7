/**
 * Sync step 1s that are cheap to send and dear to answer (issue 24): a step 1 is a few bytes, and its
 * answer (what the sender lacks) is the whole document for an empty state vector: a 5 MiB document's is
 * ~100-200 ms of the event loop to encode. Before, they were paced like any message (200 a second): forty
 * from one socket on a 5 MiB document held everyone's /health 8.7 s. Now each answer is priced by what it
 * sends and drawn from the user's share of sync answers (SYNC_ANSWER_BYTES_PER_SECOND, collab/limits.ts):
 * past the burst a step 1 waits, and one that would wait longer than MAX_SYNC_ANSWER_WAIT_MS closes its
 * connection unanswered. Asserted: the answers a flood gets never exceed what the share allows in the time
 * it took, the flood's connection is closed with the reason, and another person opens the document meanwhile.
 * The same share prices a read-only connection's step 2 (checked against a snapshot of the whole document)
 * and a query of everyone's presence (every state encoded).
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { readCounter, readMetric } from '@collab/test-support/metrics'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import { MessageType } from '@hocuspocus/server'
import * as Y from 'yjs'
import { syncAnswerBytes } from '../../collab/boundary.ts'
import {
  MAX_AWARENESS_STATE_BYTES,
  MAX_DOCUMENT_CONNECTIONS_PER_USER,
  MAX_SYNC_ANSWER_WAIT_MS,
  READ_ONLY_STEP2_PRICE_DIVISOR,
  SYNC_ANSWER_BYTE_BURST,
  SYNC_ANSWER_BYTES_PER_SECOND,
} from '../../collab/limits.ts'
import type { RunningServer } from '../../server.ts'
import { prose, readVarUint, varBytes, varString, varUint } from './red-team-support.ts'

describe('a sync answer is priced by what the sender lacks', () => {
  test('an empty state vector lacks the whole state, an up-to-date one nothing, a stale one its share', () => {
    const doc = new Y.Doc()
    const text = doc.getText('t')
    text.insert(0, 'a'.repeat(300))
    const half = Y.encodeStateVector(doc)
    const other = new Y.Doc()
    other.getText('t').insert(0, 'b'.repeat(300))
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other))
    expect(syncAnswerBytes(doc, Y.encodeStateVector(new Y.Doc()), 1000)).toBe(1000)
    expect(syncAnswerBytes(doc, Y.encodeStateVector(doc), 1000)).toBe(0)
    expect(syncAnswerBytes(doc, half, 1000)).toBe(500)
    expect(syncAnswerBytes(doc, new Uint8Array([0xff, 0xff]), 1000)).toBe(1000) // unreadable: priced whole
  })
})

describe(`red team: sync and presence messages dear to answer (${DATABASE_KIND})`, () => {
  let server: RunningServer
  let handle: (base: string) => string
  useSharedServer((share) => {
    ;({ server, handle } = share)
  })

  /**
   * A 3 MiB document of `owner`'s that `viewerId` may read (a read-only connection's step 1 is answered
   * too), kept open by the owner's editor: what a flood asks is answered from the live document.
   */
  async function viewedDocument(owner: { token: string }, viewerId: string) {
    const response = await fetch(`${server.url}/api/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${owner.token}`, 'content-type': 'text/markdown' },
      body: prose(3 * 1024 * 1024),
    })
    expect(response.status).toBe(201)
    const { room, slug } = (await response.json()) as { room: string; slug: string }
    expect((await server.services.documents.share(slug, viewerId, 'viewer')).kind).toBe('ok')
    const keeper = connectProvider(server.url, room, owner.token)
    await keeper.ready
    return { room, keeper }
  }

  test('answers stay within the user share, the flood is closed with its reason, others open the document', async () => {
    const owner = await userWithToken(server, handle('sync-owner'))
    const reader = await userWithToken(server, handle('sync-reader'))
    // One step 1 with an empty state vector on each of enough sockets at once that the last would wait
    // past MAX_SYNC_ANSWER_WAIT_MS (one socket's messages are handled one by one, so one socket is only
    // paced: each waits for the one before). A user has at most MAX_DOCUMENT_CONNECTIONS_PER_USER
    // connections to one document, so they are spread over documents of the same size: the share is the
    // user's, across documents.
    const count =
      Math.ceil(
        (SYNC_ANSWER_BYTE_BURST + (SYNC_ANSWER_BYTES_PER_SECOND * MAX_SYNC_ANSWER_WAIT_MS) / 1000) /
          (3 * 1024 * 1024),
      ) + 4
    const rooms: string[] = []
    const keepers: TestProvider[] = []
    for (let i = 0; i < Math.ceil(count / MAX_DOCUMENT_CONNECTIONS_PER_USER); i++) {
      const { room, keeper } = await viewedDocument(owner, reader.user.id)
      rooms.push(room)
      keepers.push(keeper)
    }

    /** A Hocuspocus message for `room`: its name, then `fields`. */
    const message = (room: string, ...fields: number[][]) =>
      new Uint8Array([...varString(room), ...fields.flat()])
    const answers: Array<{ at: number; bytes: number }> = []
    const closes: string[] = []
    let started = 0
    /** A socket of the reader's to `room`, authenticated (its messages are handled one by one). */
    const flooder = async (room: string) => {
      const socket = new WebSocket(server.url.replace('http', 'ws'))
      socket.binaryType = 'arraybuffer'
      socket.onmessage = (event) => {
        const data = new Uint8Array(event.data as ArrayBuffer)
        const [nameLength, name] = readVarUint(data, 0)
        const [type, next] = readVarUint(data, name + nameLength)
        // A sync message (0) of type step 2 (1): an answer to a step 1.
        if (type === 0 && readVarUint(data, next)[0] === 1)
          answers.push({ at: performance.now() - started, bytes: data.byteLength })
        // Hocuspocus closes a document's connection with a close message on the socket (it multiplexes).
        if (type === MessageType.CLOSE) {
          const [length, at] = readVarUint(data, next)
          closes.push(new TextDecoder().decode(data.subarray(at, at + length)))
        }
      }
      await new Promise((resolve) => {
        socket.onopen = resolve
      })
      socket.send(message(room, varUint(2), varUint(0), varString(reader.token))) // auth, by token
      return { socket, room }
    }
    const sockets = await Promise.all(
      Array.from({ length: count }, (_, i) => flooder(rooms[i % rooms.length]!)),
    )
    await Bun.sleep(300)
    started = performance.now()
    // Sync, step 1, an empty state vector.
    for (const { socket, room } of sockets)
      socket.send(message(room, varUint(0), varUint(0), varBytes(Y.encodeStateVector(new Y.Doc()))))

    // Meanwhile another person opens the document: their share is their own.
    const other = connectProvider(server.url, rooms[0]!, owner.token)
    await other.ready
    expect(other.doc.getXmlFragment(FRAGMENT_NAME).length).toBeGreaterThan(100)
    other.destroy()

    // A refusal is decided as a step 1 arrives, an answer once the worker has made it: on a loaded machine
    // the first close can come before the first answer.
    await eventually(() => expect(closes.length).toBeGreaterThan(0), 30_000, 'a flooding socket closed')
    await eventually(() => expect(answers.length).toBeGreaterThan(0), 30_000, 'a step 1 answered')
    expect(closes[0]).toMatch(/^sync refused: over \d+ MiB\/s of documents sent to you; reconnect in \d+ s$/)
    // Never more answers by any moment than the share allowed by then (the burst, then its rate), each
    // answer priced at the smallest one seen; a slow machine only answers fewer.
    const each = Math.min(...answers.map((a) => a.bytes))
    for (const [i, answer] of answers.entries()) {
      const allowed = (SYNC_ANSWER_BYTE_BURST + (SYNC_ANSWER_BYTES_PER_SECOND * answer.at) / 1000) / each
      expect(i).toBeLessThanOrEqual(Math.ceil(allowed))
    }
    expect(answers.length).toBeLessThan(sockets.length) // not every step 1 was answered
    expect(await readMetric(server.url, 'collab_editor_paced_total{by="sync"}')).toBeGreaterThan(0)
    expect(await readMetric(server.url, 'collab_editor_refusals_total{kind="sync"}')).toBeGreaterThan(0)
    for (const { socket } of sockets) socket.close()
    for (const keeper of keepers) keeper.destroy()
  }, 90_000)

  test("a viewer's flood of sync step 2s (each checked against a snapshot of the whole document) is paced on the same share", async () => {
    const owner = await userWithToken(server, handle('step2-owner'))
    const viewer = await userWithToken(server, handle('step2-viewer'))
    const { room, keeper } = await viewedDocument(owner, viewer.user.id)
    const pacedBefore = await readCounter(server.url, 'collab_editor_paced_total{by="sync"}')

    const message = (...fields: number[][]) => new Uint8Array([...varString(room), ...fields.flat()])
    let stateAnswer = 0
    const statuses: number[] = []
    let started = 0
    const socket = new WebSocket(server.url.replace('http', 'ws'))
    socket.binaryType = 'arraybuffer'
    socket.onmessage = (event) => {
      const data = new Uint8Array(event.data as ArrayBuffer)
      const [nameLength, name] = readVarUint(data, 0)
      const [type, next] = readVarUint(data, name + nameLength)
      if (type === 0 && readVarUint(data, next)[0] === 1) stateAnswer = data.byteLength
      if (type === MessageType.SyncStatus) statuses.push(performance.now() - started)
    }
    await new Promise((resolve) => {
      socket.onopen = resolve
    })
    socket.send(message(varUint(2), varUint(0), varString(viewer.token))) // auth, by token
    await Bun.sleep(300)
    // One step 1 first (the whole state: its size prices the step 2s), then the flood.
    socket.send(message(varUint(0), varUint(0), varBytes(Y.encodeStateVector(new Y.Doc()))))
    await eventually(() => expect(stateAnswer).toBeGreaterThan(1024 * 1024), 30_000, 'the state')
    const flood = 400
    started = performance.now()
    for (let i = 0; i < flood; i++)
      // Sync, step 2, an update holding nothing: answered with whether the document holds it.
      socket.send(message(varUint(0), varUint(1), varBytes(Y.encodeStateAsUpdate(new Y.Doc()))))
    await Bun.sleep(2_000)
    socket.close()
    // The share never allowed more checks by any moment than its burst and rate (less what the state's
    // answer took), each priced at a sixteenth of the state (the answer's size, less 10% for framing and
    // the estimate).
    const price = (0.9 * stateAnswer) / READ_ONLY_STEP2_PRICE_DIVISOR
    for (const [i, at] of statuses.entries())
      expect(i).toBeLessThanOrEqual(
        Math.ceil((SYNC_ANSWER_BYTE_BURST + (SYNC_ANSWER_BYTES_PER_SECOND * at) / 1000) / price),
      )
    expect(statuses.length).toBeGreaterThan(0)
    expect(statuses.length).toBeLessThan(flood)
    const pacedAfter = await readCounter(server.url, 'collab_editor_paced_total{by="sync"}')
    expect(pacedAfter).toBeGreaterThan(pacedBefore)
    keeper.destroy()
  }, 90_000)

  test('a flood of presence queries (each encodes every state in the document) is paced on the same share', async () => {
    // Hocuspocus 4.7 encodes every presence state of the document for a client's query and sends nothing
    // back (it answers only over its Redis replies), so what a flood costs is not seen by its sender: the
    // pacing is seen in the server's count of messages held back for the share.
    const owner = await userWithToken(server, handle('query-owner'))
    const viewer = await userWithToken(server, handle('query-viewer'))
    const made = await server.services.documents.create(owner.user.id, { title: 'Presence' })
    if (made.kind === 'error') throw new Error(made.message)
    expect((await server.services.documents.share(made.value.slug, viewer.user.id, 'viewer')).kind).toBe('ok')
    const room = made.value.room
    const present = Array.from({ length: 8 }, () => connectProvider(server.url, room, owner.token))
    await Promise.all(present.map((p) => p.ready))
    // Each present with a state (a caret), as an editor page is.
    for (const [i, p] of present.entries()) p.provider.awareness?.setLocalStateField('cursor', { at: i })
    await eventually(
      () =>
        expect(server.collab.hocuspocus.documents.get(room)?.awareness.getStates().size).toBe(present.length),
      10_000,
      'the states present',
    )
    const paced = () => readCounter(server.url, 'collab_editor_paced_total{by="sync"}')
    const before = await paced()

    const message = (...fields: number[][]) => new Uint8Array([...varString(room), ...fields.flat()])
    const socket = new WebSocket(server.url.replace('http', 'ws'))
    socket.binaryType = 'arraybuffer'
    await new Promise((resolve) => {
      socket.onopen = resolve
    })
    socket.send(message(varUint(2), varUint(0), varString(viewer.token))) // auth, by token
    await Bun.sleep(500)
    // Twice what the burst allows at the least a query is priced (the eight present, at their largest).
    const flood = 2 * Math.ceil(SYNC_ANSWER_BYTE_BURST / (present.length * MAX_AWARENESS_STATE_BYTES))
    for (let i = 0; i < flood; i++) socket.send(message(varUint(MessageType.QueryAwareness)))
    await eventually(async () => expect(await paced()).toBeGreaterThan(before), 10_000, 'queries paced')
    socket.close()
    for (const p of present) p.destroy()
  }, 60_000)
})
