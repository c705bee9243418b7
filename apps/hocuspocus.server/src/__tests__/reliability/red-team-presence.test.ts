/**
 * Presence that one user cannot turn into everyone's load (issue 24). Found by the red team: an awareness
 * message is small, and the server sends what it changes to every connection of the document. Sixteen
 * sockets of one user sending four states of ~7 KB seventy times a second each (inside every per-socket
 * limit) to a document 40 others had open held everyone's /health at p99 235-358 ms (floor 7) and grew the
 * server by 130-180 MiB; and nothing capped how many connections one user opened to a document, each one
 * more receiver of everyone's presence and edits.
 *
 * Asserted: what a presence flood makes the server send is within the user's share at every moment
 * (PRESENCE_FANOUT_*, priced at a state's bytes times the document's connections); the newest state of
 * each of the flooder's clients still arrives (presence is shown late, never lost); the server keeps at
 * most one waiting state per client; states that wait are parsed once, when applied, not as they arrive
 * (Hocuspocus parsed every one sent); another person's presence is not queued behind the flood; a user's
 * connections to one document stop at MAX_DOCUMENT_CONNECTIONS_PER_USER, with the reason; the bytes
 * arriving on all of one user's sockets draw from one share (USER_BYTES_PER_SECOND); and a user's
 * connections are opened at OPENS_PER_SECOND, past the wait refused with the reason.
 */
import { describe, expect, test } from 'bun:test'
import { createDocument } from '@collab/test-support/documents'
import { readMetric } from '@collab/test-support/metrics'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import { MessageType } from '@hocuspocus/server'
import { USER_FLOOD_CLOSE_REASON } from '../../collab/flood.ts'
import {
  EDITOR_BYTE_BURST,
  MAX_AWARENESS_CLIENTS_PER_CONNECTION,
  MAX_DOCUMENT_CONNECTIONS_PER_USER,
  MAX_OPEN_WAIT_MS,
  MAX_PENDING_SOCKETS_PER_ADDRESS,
  OPEN_BURST,
  OPENS_PER_SECOND,
  PRESENCE_FANOUT_BYTE_BURST,
  PRESENCE_FANOUT_BYTES_PER_SECOND,
  USER_BYTE_BURST,
  USER_BYTES_PER_SECOND,
} from '../../collab/limits.ts'
import type { RunningServer } from '../../server.ts'
import { readVarUint, varBytes, varString, varUint } from './red-team-support.ts'

/** The message type of a Hocuspocus message (after its document name). */
function typeOf(data: Uint8Array): number {
  const [length, at] = readVarUint(data, 0)
  return data[at + length]!
}

/** A raw socket authenticated to `room` by `token`; `onMessage` sees every message it receives. */
async function rawSocket(url: string, room: string, token: string, onMessage?: (data: Uint8Array) => void) {
  const socket = new WebSocket(url.replace('http', 'ws'))
  socket.binaryType = 'arraybuffer'
  const authenticated = new Promise<void>((resolve) => {
    socket.onmessage = (event) => {
      const data = new Uint8Array(event.data as ArrayBuffer)
      if (typeOf(data) === MessageType.Auth) resolve()
      onMessage?.(data)
    }
  })
  await new Promise((resolve) => {
    socket.onopen = resolve
  })
  socket.send(new Uint8Array([...varString(room), ...varUint(MessageType.Auth), 0, ...varString(token)]))
  await authenticated
  return socket
}

describe('red team: presence floods and connection counts', () => {
  let server: RunningServer
  let handle: (base: string) => string
  useSharedServer((share) => {
    ;({ server, handle } = share)
  })
  /** The room of a new document of `userId`'s. */
  const roomOf = async (userId: string, title: string) =>
    (await createDocument(server, userId, { title })).room

  test('a presence flood reaches others within the user share at every moment; the newest states arrive; others are not queued behind it; states that wait are parsed only when applied', async () => {
    const owner = await userWithToken(server, handle('presence-owner'))
    const flooder = await userWithToken(server, handle('presence-flooder'))
    const listener = await userWithToken(server, handle('presence-listener'))
    const made = await server.services.documents.create(owner.user.id, { title: 'Presence flood' })
    if (made.kind === 'error') throw new Error(made.message)
    const { room, slug } = made.value
    for (const user of [flooder, listener])
      expect((await server.services.documents.share(slug, user.user.id, 'viewer')).kind).toBe('ok')

    const providers: TestProvider[] = []
    const keeper = connectProvider(server.url, room, owner.token)
    const watcher = connectProvider(server.url, room, listener.token)
    providers.push(keeper, watcher)
    await Promise.all(providers.map((p) => p.ready))
    // Listeners count the presence bytes they are sent, from when the flood starts.
    let started = Number.POSITIVE_INFINITY
    const received: Array<Array<{ at: number; total: number }>> = []
    const listeners = await Promise.all(
      Array.from({ length: 4 }, () => {
        const seen: Array<{ at: number; total: number }> = []
        received.push(seen)
        let total = 0
        return rawSocket(server.url, room, listener.token, (data) => {
          const at = performance.now() - started
          if (at < 0 || typeOf(data) !== MessageType.Awareness) return
          total += data.byteLength
          seen.push({ at, total })
        })
      }),
    )
    const flooders = await Promise.all(
      Array.from({ length: 4 }, () => rawSocket(server.url, room, flooder.token)),
    )
    const document = server.collab.hocuspocus.documents.get(room)!
    const connections = document.getConnectionsCount()
    expect(connections).toBe(providers.length + listeners.length + flooders.length)

    // Each flooder sends its four clients' states of ~7 KB fifty times a second for 3 s: ~5.6 MB/s to
    // each listener unpaced, against a share of ~0.2 MB/s each.
    const pad = `flood-pad-${'x'.repeat(6_990)}`
    const clientsOf = (s: number) =>
      Array.from({ length: MAX_AWARENESS_CLIENTS_PER_CONNECTION }, (_, c) => 1_000_000 + s * 10 + c)
    let clock = 0
    let waitingSeen = 0
    let othersSeenWhileWaiting = false
    let moved = false
    // The flood's states parsed by the server (the providers in this process parse what they are sent):
    // Hocuspocus parses every state of every message it handles, so before states past the share were
    // kept as their text, each state sent was parsed.
    const parse = JSON.parse
    let floodParses = 0
    JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
      if (typeof text === 'string' && text.includes('flood-pad-')) {
        const stack = new Error().stack ?? ''
        if (/hocuspocus-server|awareness-guard/.test(stack)) floodParses++
      }
      return parse(text, reviver)
    }) as typeof JSON.parse
    started = performance.now()
    // At least 150 rounds: parses are bounded by the share's time, so a loaded machine that sends fewer
    // rounds in the 3 s could not tell them from one parse per state sent.
    while (performance.now() - started < 3_000 || clock < 150) {
      clock++
      const json = varString(JSON.stringify({ cursor: { pad, n: clock } }))
      for (const [s, socket] of flooders.entries()) {
        const states: number[] = [...varUint(MAX_AWARENESS_CLIENTS_PER_CONNECTION)]
        for (const clientId of clientsOf(s)) states.push(...varUint(clientId), ...varUint(clock), ...json)
        socket.send(
          new Uint8Array([
            ...varString(room),
            ...varUint(MessageType.Awareness),
            ...varBytes(new Uint8Array(states)),
          ]),
        )
      }
      waitingSeen = Math.max(waitingSeen, server.collab.awareness.waitingPresence(flooder.user.id))
      // A second in, the owner moves: their presence is theirs, not queued behind the flooder's. (By time,
      // not by the flood's count: on a loaded machine a count of 60 came after the 3 s, and the owner
      // never moved.)
      if (!moved && performance.now() - started >= 1_000) {
        moved = true
        keeper.provider.setAwarenessField('cursor', { at: 'midway' })
      }
      if (!othersSeenWhileWaiting && server.collab.awareness.waitingPresence(flooder.user.id) > 0) {
        const ownerState = [...watcher.provider.awareness!.getStates().values()].find(
          (state) => (state.cursor as { at?: string } | undefined)?.at === 'midway',
        )
        othersSeenWhileWaiting = ownerState !== undefined
      }
      await Bun.sleep(20)
    }
    const last = clock
    const sentStates = last * flooders.length * MAX_AWARENESS_CLIENTS_PER_CONNECTION

    // Every state the server keeps waiting is the newest of its client: one per client at most.
    expect(waitingSeen).toBeGreaterThan(0)
    expect(waitingSeen).toBeLessThanOrEqual(flooders.length * MAX_AWARENESS_CLIENTS_PER_CONNECTION)
    // The newest state of every flooding client reaches everyone: late, not lost.
    await eventually(
      () => {
        for (const s of flooders.keys())
          for (const clientId of clientsOf(s))
            expect((watcher.provider.awareness!.getStates().get(clientId)?.cursor as { n?: number })?.n).toBe(
              last,
            )
      },
      20_000,
      'the newest presence of every flooding client',
    )
    expect(othersSeenWhileWaiting).toBe(true)
    JSON.parse = parse
    // States past the share were kept as their text and parsed once each, when applied: the burst's
    // messages and one connection's four states a release (~150 in 3 s by the share), not every one sent.
    expect(floodParses).toBeGreaterThan(0)
    expect(floodParses).toBeLessThan(sentStates / 4)

    // At every moment, what a listener was sent times the connections it was sent to is within the share
    // (the burst, then its rate), give or take one message (the last one applied may overdraw it) and the
    // framing and server-set `user` each state carries beyond what was priced.
    const message = MAX_AWARENESS_CLIENTS_PER_CONNECTION * 7_400
    for (const seen of received) {
      expect(seen.length).toBeGreaterThan(0)
      for (const { at, total } of seen) {
        const allowed =
          (PRESENCE_FANOUT_BYTE_BURST + (PRESENCE_FANOUT_BYTES_PER_SECOND * at) / 1000) / connections
        expect(total).toBeLessThanOrEqual(allowed * 1.1 + message)
      }
    }
    expect(await readMetric(server.url, 'collab_editor_paced_total{by="presence"}')).toBeGreaterThan(0)
    for (const socket of [...listeners, ...flooders]) socket.close()
    for (const p of providers) p.destroy()
  }, 60_000)

  test(`a user's connections to one document stop at ${MAX_DOCUMENT_CONNECTIONS_PER_USER}, with the reason; one closed makes room`, async () => {
    const owner = await userWithToken(server, handle('tabs-owner'))
    const made = await server.services.documents.create(owner.user.id, { title: 'Many tabs' })
    if (made.kind === 'error') throw new Error(made.message)
    const { room } = made.value
    const open: TestProvider[] = []
    for (let i = 0; i < MAX_DOCUMENT_CONNECTIONS_PER_USER; i++) {
      const tab = connectProvider(server.url, room, owner.token)
      open.push(tab)
      await tab.ready
    }
    expect(server.collab.hocuspocus.documents.get(room)?.getConnectionsCount()).toBe(
      MAX_DOCUMENT_CONNECTIONS_PER_USER,
    )
    const refused = connectProvider(server.url, room, owner.token)
    expect(refused.ready).rejects.toThrow(
      `authentication failed: too many connections: you have ${MAX_DOCUMENT_CONNECTIONS_PER_USER} open to this document here; close some tabs`,
    )
    await refused.ready.catch(() => {})
    refused.destroy()
    // Another document of theirs is not counted against this one.
    const other = await server.services.documents.create(owner.user.id, { title: 'Another tab' })
    if (other.kind === 'error') throw new Error(other.message)
    const elsewhere = connectProvider(server.url, other.value.room, owner.token)
    await elsewhere.ready
    // One closed makes room for one more.
    open.shift()!.destroy()
    await eventually(
      () =>
        expect(server.collab.hocuspocus.documents.get(room)?.getConnectionsCount()).toBe(
          MAX_DOCUMENT_CONNECTIONS_PER_USER - 1,
        ),
      10_000,
      'a tab closed',
    )
    const again = connectProvider(server.url, room, owner.token)
    await again.ready
    for (const p of [...open, elsewhere, again]) p.destroy()
  }, 60_000)

  test("one user's sockets, each within its own rates, are closed past the user's share of bytes across them; another user's socket is served", async () => {
    // Until 2026-12-05 only each socket's bytes were counted: a user with many sockets (to many documents)
    // could make the server receive and read 2 MiB a second on each (16 sockets of presence: ~3 s of the
    // server's CPU in 8 s). Stateless messages here: nothing in this server handles them, so what is
    // measured is the arrival alone.
    const flooder = await userWithToken(server, handle('inflow-flooder'))
    const other = await userWithToken(server, handle('inflow-other'))
    // Each socket sends its own burst (EDITOR_BYTE_BURST) less a little: no socket is over its rates.
    const messages = Math.floor(EDITOR_BYTE_BURST / (1 << 20)) - 1
    const sockets = Math.ceil((USER_BYTE_BURST + USER_BYTES_PER_SECOND * 4) / (messages << 20)) + 1
    const closes: string[] = []
    const flooding = await Promise.all(
      Array.from({ length: sockets }, async (_, i) => {
        const room = await roomOf(flooder.user.id, `Inflow ${i}`)
        const socket = await rawSocket(server.url, room, flooder.token)
        socket.onclose = (event) => closes.push(event.reason)
        return { socket, room }
      }),
    )
    const otherRoom = await roomOf(other.user.id, 'Inflow other')
    let otherClosed = ''
    const answers: number[] = []
    const bystander = await rawSocket(server.url, otherRoom, other.token, (data) =>
      answers.push(typeOf(data)),
    )
    bystander.onclose = (event) => {
      otherClosed = event.reason || String(event.code)
    }
    // A stateless message of 1 MiB of text to `room`, made once per room.
    const text = varString('x'.repeat(1 << 20))
    const stateless = (room: string) => {
      const head = [...varString(room), ...varUint(MessageType.Stateless)]
      const message = new Uint8Array(head.length + text.length)
      message.set(head)
      message.set(text, head.length)
      return message
    }
    const refusedBefore = server.metrics.editorRefusals.get({ kind: 'user_flood' })
    const made = flooding.map(({ socket, room }) => ({ socket, message: stateless(room) }))
    for (let m = 0; m < messages; m++)
      for (const { socket, message } of made) if (socket.readyState === WebSocket.OPEN) socket.send(message)
    await eventually(() => expect(closes).toContain(USER_FLOOD_CLOSE_REASON), 30_000, 'the flooder closed')
    expect(server.metrics.editorRefusals.get({ kind: 'user_flood' })).toBeGreaterThan(refusedBefore)
    // The other user sends as much as one of the flooder's sockets did, and is still served.
    const otherMessage = stateless(otherRoom)
    for (let m = 0; m < messages; m++) bystander.send(otherMessage)
    const seen = answers.length
    bystander.send(
      new Uint8Array([
        ...varString(otherRoom),
        ...varUint(MessageType.Sync),
        0,
        ...varBytes(new Uint8Array([0])),
      ]),
    )
    await eventually(
      () => expect(answers.slice(seen)).toContain(MessageType.Sync),
      20_000,
      'the other user answered',
    )
    expect(otherClosed).toBe('')
    for (const { socket } of flooding) socket.close()
    bystander.close()
  }, 90_000)

  test('one user opening connections past their share waits for it, past the wait is refused with the reason; another user opens at once', async () => {
    // Until 2026-12-05 nothing bounded how fast one user opened connections: 16 loops reopening sockets
    // authenticated ~1,100 a second, ~75% of a core.
    const opener = await userWithToken(server, handle('opens-opener'))
    const other = await userWithToken(server, handle('opens-other'))
    // More than the burst and the wait's worth of the rate, all at once, spread over enough documents that
    // none reaches MAX_DOCUMENT_CONNECTIONS_PER_USER; all from this address, so within the sockets one
    // address may have waiting to authenticate (one left for the bystander below).
    const count = Math.min(
      OPEN_BURST + (OPENS_PER_SECOND * MAX_OPEN_WAIT_MS) / 1000 + 100,
      MAX_PENDING_SOCKETS_PER_ADDRESS - 1,
    )
    expect(count).toBeGreaterThan(OPEN_BURST + (OPENS_PER_SECOND * MAX_OPEN_WAIT_MS) / 1000)
    const rooms = await Promise.all(
      Array.from({ length: Math.ceil(count / (MAX_DOCUMENT_CONNECTIONS_PER_USER - 2)) }, (_, i) =>
        roomOf(opener.user.id, `Opens ${i}`),
      ),
    )
    const pacedBefore = server.metrics.editorPaced.get({ by: 'opens' })
    /** Opens a socket to `room`: whether it was authenticated, or the reason it was refused. */
    const open = async (room: string, token: string) => {
      const socket = new WebSocket(server.url.replace('http', 'ws'))
      socket.binaryType = 'arraybuffer'
      const answer = new Promise<{ authenticated: boolean; reason: string }>((resolve) => {
        socket.onmessage = (event) => {
          const data = new Uint8Array(event.data as ArrayBuffer)
          if (typeOf(data) !== MessageType.Auth) return
          const [nameLength, nameAt] = readVarUint(data, 0)
          const at = nameAt + nameLength + 1
          const kind = data[at]! // 0 token, 1 permission denied, 2 authenticated
          const [reasonLength, reasonAt] = readVarUint(data, at + 1)
          resolve({
            authenticated: kind === 2,
            reason: kind === 1 ? new TextDecoder().decode(data.slice(reasonAt, reasonAt + reasonLength)) : '',
          })
        }
      })
      await new Promise((resolve) => {
        socket.onopen = resolve
      })
      socket.send(new Uint8Array([...varString(room), ...varUint(MessageType.Auth), 0, ...varString(token)]))
      return { socket, ...(await answer) }
    }
    const rush = Array.from({ length: count }, (_, i) => open(rooms[i % rooms.length]!, opener.token))
    // Another person opens a document meanwhile: their own share, not queued behind the rush.
    const bystander = await open(await roomOf(other.user.id, 'Opens other'), other.token)
    expect(bystander.authenticated).toBe(true)
    const results = await Promise.all(rush)
    const authenticated = results.filter((r) => r.authenticated).length
    const refused = results.filter((r) => !r.authenticated)
    expect(authenticated).toBeGreaterThanOrEqual(OPEN_BURST)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused[0]!.reason).toMatch(
      /^too many connections opened: more than \d+ a second from this account; try again in \d+ s$/,
    )
    expect(server.metrics.editorPaced.get({ by: 'opens' })).toBeGreaterThan(pacedBefore)
    for (const { socket } of [...results, bystander]) socket.close()
  }, 60_000)

  test('many connections of one user authenticating at once: no more than the limit stay connected', async () => {
    const owner = await userWithToken(server, handle('rush-owner'))
    const made = await server.services.documents.create(owner.user.id, { title: 'A rush of tabs' })
    if (made.kind === 'error') throw new Error(made.message)
    const { room } = made.value
    // Raw sockets, all sent their authentication in the same turn: they pass its check together, and the
    // ones over the limit are closed once connected.
    const sockets = await Promise.all(
      Array.from({ length: MAX_DOCUMENT_CONNECTIONS_PER_USER + 6 }, () =>
        rawSocket(server.url, room, owner.token),
      ),
    )
    await eventually(
      () =>
        expect(server.collab.hocuspocus.documents.get(room)?.getConnectionsCount()).toBe(
          MAX_DOCUMENT_CONNECTIONS_PER_USER,
        ),
      10_000,
      'the connections over the limit closed',
    )
    for (const socket of sockets) socket.close()
  }, 60_000)
})
