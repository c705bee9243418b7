/**
 * A large live document's sync answers are made on the documents' worker (collab/boundary.ts
 * answerOnWorker, documents/worker/sync-answer.ts), from the updates it was built from
 * (collab/persistence/loaded-updates.ts): the parts of its load and every change since. Before, each
 * editor opening it had the whole state encoded on the event loop (~100-235 ms for 5 MiB, held from
 * everyone). Asserted: an editor opening it after others typed, deleted and an agent wrote gets exactly
 * the live document, answered on the worker; an editor coming back with a copy of its own far behind is
 * sent what it lacks, diffed on the worker (struct bytes past its vector), and then holds the live
 * document; a raw step 1 gets one answer (Hocuspocus does not answer it
 * again) and the server's own step 1; a document whose updates are not kept is kept from its state at its
 * first large answer; and kept updates that do not cover the live document are found out and given up.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME, ok } from '@collab/doc-schema'
import { DATABASE_KIND } from '@collab/test-support/database'
import { buildDocument, paragraph } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, TWO_INSTANCES, userWithToken, useTwoTestServers } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import { MessageType } from '@hocuspocus/server'
import * as Y from 'yjs'
import { SYNC_ANSWER_WORKER_BYTES } from '../collab/limits.ts'
import {
  answerFromLoadedUpdates,
  LoadedUpdates,
  MERGE_CHANGES,
} from '../collab/persistence/loaded-updates.ts'
import { varUint } from '../documents/worker/frames.ts'
import { answerSync } from '../documents/worker/sync-answer.ts'
import type { RunningServer } from '../server.ts'
import { prose, readVarUint } from './reliability/red-team-support.ts'

const SENTENCE = 'A long paragraph of an ordinary manual, repeated to make the document large. '

const textOf = (doc: Y.Doc) => doc.getXmlFragment(FRAGMENT_NAME).toString()

/** A sync message's sync type and payload (after its address and type); undefined for other messages. */
function syncMessage(message: Uint8Array): { syncType: number; payload: Uint8Array } | undefined {
  const [addressLength, addressAt] = readVarUint(message, 0)
  const at = addressAt + addressLength
  if (message[at] !== MessageType.Sync) return undefined
  const [length, payloadAt] = readVarUint(message, at + 2)
  return { syncType: message[at + 1]!, payload: message.slice(payloadAt, payloadAt + length) }
}

/** The Yjs update a sync step 2 message carries. */
function stepTwoUpdate(message: Uint8Array): Uint8Array {
  const sync = syncMessage(message)
  expect(sync?.syncType).toBe(1)
  return sync!.payload
}

/**
 * An editor's socket on `room` without a provider, open: each sync message it receives goes to
 * `received`; `authenticate` sends the auth message with `token`, `step1` a sync step 1 of `vector`.
 */
async function rawSyncSocket(
  url: string,
  room: string,
  token: string,
  received: Array<{ syncType: number; payload: Uint8Array }>,
) {
  const socket = new WebSocket(url.replace('http', 'ws'))
  socket.binaryType = 'arraybuffer'
  const address = new TextEncoder().encode(room)
  const prefix = [...varUint(address.length), ...address]
  socket.onmessage = (event) => {
    const sync = syncMessage(new Uint8Array(event.data as ArrayBuffer))
    if (sync) received.push(sync)
  }
  await new Promise((resolve) => {
    socket.onopen = resolve
  })
  return {
    socket,
    authenticate() {
      const bytes = new TextEncoder().encode(token)
      socket.send(new Uint8Array([...prefix, MessageType.Auth, 0, ...varUint(bytes.length), ...bytes]))
    },
    step1(vector: Uint8Array) {
      socket.send(new Uint8Array([...prefix, MessageType.Sync, 0, ...varUint(vector.length), ...vector]))
    },
  }
}

describe(`a large document's sync answers are made on the documents' worker (${DATABASE_KIND})`, () => {
  let server: RunningServer
  let handle: (base: string) => string
  useSharedServer((share) => {
    ;({ server, handle } = share)
  })

  /** A stored document past SYNC_ANSWER_WORKER_BYTES, not loaded, and a user who owns it. */
  async function largeDocument(title: string) {
    const owner = await userWithToken(server, handle(title.toLowerCase().replaceAll(' ', '-')))
    const created = await buildDocument(server, owner.user.id, { title }, (fragment) => {
      fragment.push(
        Array.from({ length: Math.ceil((SYNC_ANSWER_WORKER_BYTES * 1.3) / (SENTENCE.length * 10)) }, (_, i) =>
          paragraph(`${i}: ${SENTENCE.repeat(10)}`),
        ),
      )
    })
    return { owner, room: created.room, slug: created.slug }
  }

  const answered = (where: string) => server.metrics.largeSyncAnswers.get({ where })

  test('an editor opening it after others typed, deleted and an agent wrote gets exactly the live document', async () => {
    const { owner, room } = await largeDocument('Sync Manual')
    const providers: TestProvider[] = []
    try {
      const first = connectProvider(server.url, room, owner.token)
      providers.push(first)
      await first.ready
      // Changes after the load: typed, deleted, a paragraph removed, many small ones (merged as they go).
      const fragment = first.doc.getXmlFragment(FRAGMENT_NAME)
      for (let i = 0; i < 300; i++) {
        const text = (fragment.get(i % 20) as Y.XmlElement).get(0) as Y.XmlText
        text.insert(0, `t${i} `)
        if (i % 3 === 0) text.delete(5, 4)
      }
      fragment.delete(30, 2)
      fragment.insert(10, [paragraph('inserted after the load')])
      const live = server.collab.hocuspocus.documents.get(room)!
      await eventually(() => expect(textOf(live)).toBe(textOf(first.doc)))
      // And a change made on the server (as an agent's write is): it reaches the kept updates too.
      live.transact(() => {
        const text = (live.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement).get(0) as Y.XmlText
        text.insert(0, 'server wrote this. ')
      })

      const onWorker = answered('worker')
      const second = connectProvider(server.url, room, owner.token)
      providers.push(second)
      await second.ready
      await eventually(() => expect(textOf(second.doc)).toBe(textOf(live)))
      expect(Y.encodeStateVector(second.doc)).toEqual(Y.encodeStateVector(live))
      expect(answered('worker')).toBe(onWorker + 1)
      // Both editors go on as usual.
      ;((second.doc.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(
        0,
        'second ',
      )
      await eventually(() => expect(textOf(first.doc)).toBe(textOf(second.doc)))
    } finally {
      for (const p of providers) p.destroy()
    }
  }, 60_000)

  test('an editor coming back with a state of its own is sent what it lacks, made on the worker', async () => {
    const { owner, room } = await largeDocument('Sync Return')
    const keeper = connectProvider(server.url, room, owner.token)
    await keeper.ready
    // The returning editor's copy: the document as it was. While it was away, people typed into it and
    // an agent wrote more than it held (an answer past SYNC_ANSWER_WORKER_BYTES is made on the worker).
    const away = new Y.Doc()
    Y.applyUpdate(away, Y.encodeStateAsUpdate(keeper.doc))
    const fragment = keeper.doc.getXmlFragment(FRAGMENT_NAME)
    for (let i = 0; i < 120; i++) {
      const text = (fragment.get(i % 15) as Y.XmlElement).get(0) as Y.XmlText
      text.insert(3 + (i % 7), `r${i}😀`)
      if (i % 4 === 0) text.delete(0, 2)
    }
    const live = server.collab.hocuspocus.documents.get(room)!
    await eventually(() => expect(textOf(live)).toBe(textOf(keeper.doc)))
    live.transact(() => {
      live
        .getXmlFragment(FRAGMENT_NAME)
        .push(
          Array.from(
            { length: Math.ceil((SYNC_ANSWER_WORKER_BYTES * 1.2) / (SENTENCE.length * 10)) },
            (_, i) => paragraph(`added ${i}: ${SENTENCE.repeat(10)}`),
          ),
        )
    })
    const stateBytes = Y.encodeStateAsUpdate(live).length
    const received: Array<{ syncType: number; payload: Uint8Array }> = []
    const raw = await rawSyncSocket(server.url, room, owner.token, received)
    try {
      const onWorker = answered('worker')
      raw.authenticate()
      raw.step1(Y.encodeStateVector(away))
      const answers = () => received.filter((message) => message.syncType === 1)
      await eventually(() => expect(answers().length).toBe(1), 20_000, 'the answer')
      expect(answered('worker')).toBe(onWorker + 1)
      // Only what it lacks (not the document again), and with it the copy is the live document.
      const answer = answers()[0]!.payload
      expect(answer.length).toBeLessThan(stateBytes * 0.6)
      Y.applyUpdate(away, answer)
      expect(textOf(away)).toBe(textOf(live))
      expect(Y.encodeStateVector(away)).toEqual(Y.encodeStateVector(live))
    } finally {
      raw.socket.close()
      keeper.destroy()
    }
  }, 60_000)

  test('a raw step 1 gets one answer and the server’s own step 1, and the answer is the whole document', async () => {
    const { owner, room } = await largeDocument('Raw Sync')
    const keeper = connectProvider(server.url, room, owner.token)
    await keeper.ready
    const received: Array<{ syncType: number; payload: Uint8Array }> = []
    const raw = await rawSyncSocket(server.url, room, owner.token, received)
    try {
      const onWorker = answered('worker')
      raw.authenticate()
      const empty = Y.encodeStateVector(new Y.Doc())
      raw.step1(empty)
      await eventually(
        () => expect(received.map((m) => m.syncType)).toEqual([1, 0]),
        20_000,
        'the answer and the server’s step 1',
      )
      // Nothing more comes for it (Hocuspocus would have answered it again): a later message is answered
      // after it, so everything for the step 1 has arrived by then.
      raw.step1(empty)
      await eventually(() => expect(received.length).toBe(4), 20_000, 'the second answer')
      expect(received.map((m) => m.syncType)).toEqual([1, 0, 1, 0])
      expect(answered('worker')).toBe(onWorker + 2)
      const fresh = new Y.Doc()
      Y.applyUpdate(fresh, received[0]!.payload)
      const live = server.collab.hocuspocus.documents.get(room)!
      expect(textOf(fresh)).toBe(textOf(live))
      expect(Y.encodeStateVector(fresh)).toEqual(Y.encodeStateVector(live))
    } finally {
      raw.socket.close()
      keeper.destroy()
    }
  }, 60_000)

  test("an editor opening it while someone's import is built on the worker is answered on the worker's short lane", async () => {
    // Before the short lane, sync answers were taken only by an idle worker: during an import or an
    // export every editor opening a large document was answered on the event loop (~100-235 ms for 5 MiB).
    const { owner, room } = await largeDocument('Lane Manual')
    const keeper = connectProvider(server.url, room, owner.token)
    await keeper.ready
    const importer = await userWithToken(server, handle('lane-importer'))
    let imported = false
    const importing = fetch(`${server.url}/api/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${importer.token}`, 'content-type': 'text/markdown' },
      body: prose(4 << 20),
    }).then(async (response) => {
      imported = true
      return { status: response.status, body: await response.text() }
    })
    await eventually(() => expect(server.services.documents.workerJobs().long).toBeGreaterThan(0))
    const onLoop = answered('event_loop')
    const onWorker = answered('worker')
    const other = connectProvider(server.url, room, owner.token)
    try {
      await other.ready
      await eventually(() => expect(textOf(other.doc)).toBe(textOf(keeper.doc)))
      // Answered while the import was still being built (a 4 MiB file takes seconds there).
      expect(imported).toBe(false)
      expect(answered('worker')).toBe(onWorker + 1)
      expect(answered('event_loop')).toBe(onLoop)
      expect(Y.encodeStateVector(other.doc)).toEqual(Y.encodeStateVector(keeper.doc))
      expect((await importing).status).toBe(201)
    } finally {
      other.destroy()
      keeper.destroy()
    }
  }, 90_000)

  test("a burst of one user's editors opening it at once waits for the short lane, none answered on the event loop", async () => {
    // Until 2026-12-05 a sync answer that found its user's answer already on the short lane (or the lane
    // full) was refused at once and encoded by Hocuspocus on the event loop: of four tabs opened together,
    // three held everyone's event loop for the whole state's encode.
    const { owner, room } = await largeDocument('Burst Manual')
    const keeper = connectProvider(server.url, room, owner.token)
    await keeper.ready
    const live = server.collab.hocuspocus.documents.get(room)!
    const onLoop = answered('event_loop')
    const onWorker = answered('worker')
    const tabs = Array.from({ length: 4 }, () => connectProvider(server.url, room, owner.token))
    try {
      await Promise.all(tabs.map((tab) => tab.ready))
      for (const tab of tabs) {
        await eventually(() => expect(textOf(tab.doc)).toBe(textOf(live)))
        expect(Y.encodeStateVector(tab.doc)).toEqual(Y.encodeStateVector(live))
      }
      expect(answered('worker')).toBe(onWorker + tabs.length)
      expect(answered('event_loop')).toBe(onLoop)
    } finally {
      for (const tab of tabs) tab.destroy()
      keeper.destroy()
    }
  }, 60_000)

  test('a document whose updates are not kept is kept from its state at its first large answer, and answered on the worker', async () => {
    // Until 2026-12-05 only a document loaded in parts kept its updates: one loaded whole, grown past the
    // size while loaded, or given up had every editor answered on the event loop until its next load.
    const { owner, room } = await largeDocument('Not Kept')
    const keeper = connectProvider(server.url, room, owner.token)
    await keeper.ready
    const live = server.collab.hocuspocus.documents.get(room)!
    server.collab.persistence.loadedUpdates.forget(live)
    expect(server.collab.persistence.loadedUpdates.of(live)).toBeUndefined()
    const onLoop = answered('event_loop')
    const onWorker = answered('worker')
    const opened: TestProvider[] = []
    try {
      for (let i = 0; i < 2; i++) {
        // Typed between the opens: the second answer covers it through the updates kept since.
        ;((keeper.doc.getXmlFragment(FRAGMENT_NAME).get(0) as Y.XmlElement).get(0) as Y.XmlText).insert(
          0,
          `before open ${i} `,
        )
        await eventually(() => expect(textOf(live)).toBe(textOf(keeper.doc)))
        const other = connectProvider(server.url, room, owner.token)
        opened.push(other)
        await other.ready
        await eventually(() => expect(textOf(other.doc)).toBe(textOf(live)))
        expect(Y.encodeStateVector(other.doc)).toEqual(Y.encodeStateVector(live))
        expect(server.collab.persistence.loadedUpdates.of(live)).toBeDefined()
      }
      expect(answered('worker')).toBe(onWorker + 2)
      expect(answered('event_loop')).toBe(onLoop)
    } finally {
      for (const p of opened) p.destroy()
      keeper.destroy()
    }
  }, 60_000)
})

describe('kept updates are checked against the live document', () => {
  test('a later answer is sent only the parts added since; a worker that let them go is sent all, once', async () => {
    const doc = new Y.Doc()
    const text = doc.getText('t')
    text.insert(0, 'loaded. ')
    const updates = new LoadedUpdates()
    updates.keep(doc, [Y.encodeStateAsUpdate(doc)])
    const asked: Array<{ base: number; parts: number; changes: number }> = []
    let lose = false
    const documents = {
      syncAnswer: async (_user: string, input: Parameters<typeof answerSync>[0]) => {
        asked.push({ base: input.base, parts: input.parts.length, changes: input.changes.length })
        if (lose && input.base > 0) {
          lose = false
          return ok({ stale: true as const })
        }
        return ok(answerSync(input))
      },
    }
    const logger = { warn: () => {} } as unknown as Parameters<typeof answerFromLoadedUpdates>[4]['logger']
    const answer = async () => {
      const update = await answerFromLoadedUpdates(doc, Y.encodeStateVector(new Y.Doc()), 'u', 'room', {
        updates,
        documents,
        logger,
      })
      const fresh = new Y.Doc()
      Y.applyUpdate(fresh, stepTwoUpdate(update!))
      return fresh.getText('t').toString()
    }
    for (let i = 0; i < MERGE_CHANGES + 10; i++) text.insert(text.length, `${i} `)
    expect(await answer()).toBe(text.toString())
    // The load's part and one merged part of changes, and the changes after it.
    expect(asked.at(-1)).toEqual({ base: 0, parts: 2, changes: 10 })
    text.delete(0, 3)
    expect(await answer()).toBe(text.toString())
    expect(asked.at(-1)).toEqual({ base: 2, parts: 0, changes: 11 })
    for (let i = 0; i < MERGE_CHANGES; i++) text.insert(0, 'x')
    lose = true
    expect(await answer()).toBe(text.toString())
    expect(asked.slice(-2)).toEqual([
      { base: 2, parts: 1, changes: 11 },
      { base: 0, parts: 3, changes: 11 },
    ])
  })

  test('updates that miss a change of the document are found out and given up, and kept again from the state', async () => {
    const doc = new Y.Doc()
    doc.getText('t').insert(0, 'loaded')
    const updates = new LoadedUpdates()
    updates.keep(doc, [Y.encodeStateAsUpdate(doc)])
    doc.getText('t').insert(6, ' and typed')
    const documents = {
      syncAnswer: async (_user: string, input: Parameters<typeof answerSync>[0]) => ok(answerSync(input)),
    }
    const logger = { warn: () => {} } as unknown as Parameters<typeof answerFromLoadedUpdates>[4]['logger']
    const empty = Y.encodeStateVector(new Y.Doc())
    const answer = await answerFromLoadedUpdates(doc, empty, 'u', 'room', { updates, documents, logger })
    const fresh = new Y.Doc()
    Y.applyUpdate(fresh, stepTwoUpdate(answer!))
    expect(fresh.getText('t').toString()).toBe('loaded and typed')

    // A change the kept updates never saw (as if applied past the listener): the answer would lack it.
    const other = new Y.Doc()
    Y.applyUpdate(other, Y.encodeStateAsUpdate(doc))
    other.getText('t').insert(0, 'unseen ')
    updates.forget(doc)
    updates.keep(doc, [Y.encodeStateAsUpdate(doc)])
    const listeners = doc._observers.get('update')
    doc._observers.delete('update')
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(other, Y.encodeStateVector(doc)))
    if (listeners) doc._observers.set('update', listeners)
    expect(await answerFromLoadedUpdates(doc, empty, 'u', 'room', { updates, documents, logger })).toBeNull()
    expect(updates.of(doc)).toBeUndefined()
    // The next answer keeps them again, from the live document's state: it has the change.
    const again = await answerFromLoadedUpdates(doc, empty, 'u', 'room', { updates, documents, logger })
    const whole = new Y.Doc()
    Y.applyUpdate(whole, stepTwoUpdate(again!))
    expect(whole.getText('t').toString()).toBe('unseen loaded and typed')
    expect(updates.of(doc)).toBeDefined()
  })
})

describe.skipIf(!TWO_INSTANCES)('across instances (postgres, Redis)', () => {
  const pair = useTwoTestServers()

  test("an editor opening on B gets what is typed on A, through B's kept updates", async () => {
    const owner = await userWithToken(pair.a, 'sync-pair')
    const created = await buildDocument(pair.a, owner.user.id, { title: 'Pair manual' }, (fragment) => {
      fragment.push(
        Array.from({ length: Math.ceil((SYNC_ANSWER_WORKER_BYTES * 1.3) / (SENTENCE.length * 10)) }, (_, i) =>
          paragraph(`${i}: ${SENTENCE.repeat(10)}`),
        ),
      )
    })
    const providers: TestProvider[] = []
    try {
      const onA = connectProvider(pair.a.url, created.room, owner.token)
      providers.push(onA)
      await onA.ready
      const onB = connectProvider(pair.b.url, created.room, owner.token)
      providers.push(onB)
      await onB.ready
      // Typed on A after B loaded: B's document takes it from Redis, and keeps it.
      const text = (onA.doc.getXmlFragment(FRAGMENT_NAME).get(3) as Y.XmlElement).get(0) as Y.XmlText
      for (let i = 0; i < 50; i++) text.insert(0, `a${i} `)
      text.delete(0, 8)
      const liveB = pair.b.collab.hocuspocus.documents.get(created.room)!
      await eventually(() => expect(textOf(liveB)).toBe(textOf(onA.doc)))
      const onWorker = pair.b.metrics.largeSyncAnswers.get({ where: 'worker' })
      const second = connectProvider(pair.b.url, created.room, owner.token)
      providers.push(second)
      await second.ready
      await eventually(() => expect(textOf(second.doc)).toBe(textOf(onA.doc)))
      expect(pair.b.metrics.largeSyncAnswers.get({ where: 'worker' })).toBe(onWorker + 1)
    } finally {
      for (const p of providers) p.destroy()
    }
  }, 60_000)
})
