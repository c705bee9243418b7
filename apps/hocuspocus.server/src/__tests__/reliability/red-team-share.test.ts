/**
 * One user's share of the server across all their connections (issue 24, "fair share per user"): a user who
 * opens many documents and sockets gets no more editing work done per second than USER_STRUCTS_PER_SECOND,
 * while everyone else's share stays whole. Each connection alone stays within its own flood rates here, so
 * only the per-user share can pace it. Asserted on the share's own count of held messages (the
 * `collab_editor_paced_total` metric, by user), never on timings.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { element, paragraph } from '@collab/test-support/documents'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import * as Y from 'yjs'
import {
  EDITOR_MS_BURST,
  EDITOR_MS_PER_SECOND,
  EDITOR_STRUCT_BURST,
  USER_STRUCT_BURST,
  USER_STRUCTS_PER_SECOND,
} from '../../collab/limits.ts'
import type { RunningServer } from '../../server.ts'
import { UserShares } from '../../user-shares.ts'

const DOCUMENTS = 7
const ROUNDS = 4
/** Structs of one paste, `list(2_200)`. */
const STRUCTS_PER_PASTE = 2_200 * 4 + 1

/** A bullet list of `items` one-letter items: 4 structs an item, 1 for the list. */
function list(items: number): Y.XmlElement {
  return element(
    'bulletList',
    {},
    Array.from({ length: items }, () => element('listItem', {}, [paragraph('x')])),
  )
}

test(`a user's share: past the burst, each ${USER_STRUCTS_PER_SECOND} structs cost one second of waiting`, () => {
  let now = 0
  const shares = new UserShares(USER_STRUCTS_PER_SECOND, USER_STRUCT_BURST, () => now)
  expect(shares.spend('u', USER_STRUCT_BURST)).toBe(0)
  expect(shares.spend('u', USER_STRUCTS_PER_SECOND)).toBe(1_000)
  expect(shares.owedMs('other')).toBe(0)
  now += 1_000
  expect(shares.owedMs('u')).toBe(0)
})

describe('a user editing through many connections is paced as one', () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
  })
  const providers: TestProvider[] = []

  test('seven documents, 246,428 structs: all applied, some held back for the user share, none for others', async () => {
    const mallory = await userWithToken(server, 'mallory')
    const bob = await userWithToken(server, 'bob')
    const rooms: string[] = []
    for (let i = 0; i < DOCUMENTS; i++) {
      const created = await server.services.documents.create(mallory.user.id, { title: `Paste ${i}` })
      if (created.kind === 'error') throw new Error(created.message)
      rooms.push(created.value.room)
    }
    const editors = rooms.map((room) => connectProvider(server.url, room, mallory.token))
    providers.push(...editors)
    await Promise.all(editors.map((e) => e.ready))
    const pacedBefore = server.metrics.editorPaced.get({ by: 'user' })
    const closes: string[] = []
    for (const e of editors)
      e.provider.on('close', ({ event }: { event: { reason: string } }) => closes.push(event.reason))
    // Four pastes of 2,200 items per document: 8,801 structs each, 35,204 per connection (under its burst
    // of EDITOR_STRUCT_BURST), 246,428 for the user: over USER_STRUCT_BURST by more than the share refills
    // while a server doing at least 30,000 structs a second applies them.
    expect(ROUNDS * STRUCTS_PER_PASTE).toBeLessThan(EDITOR_STRUCT_BURST)
    const total = DOCUMENTS * ROUNDS * STRUCTS_PER_PASTE
    expect(total - USER_STRUCT_BURST).toBeGreaterThan((total / 30_000) * USER_STRUCTS_PER_SECOND)
    for (let round = 0; round < ROUNDS; round++)
      for (const e of editors) e.doc.transact(() => e.doc.getXmlFragment(FRAGMENT_NAME).push([list(2_200)]))
    await eventually(
      () => {
        for (const room of rooms) {
          const live = server.collab.hocuspocus.documents.get(room)
          const lists = live
            ?.getXmlFragment(FRAGMENT_NAME)
            .toArray()
            .filter((n) => n instanceof Y.XmlElement && n.nodeName === 'bulletList')
          expect(lists?.length).toBe(ROUNDS)
        }
      },
      60_000,
      'every paste applied',
    )
    expect(closes).toEqual([]) // paced, never refused
    // Some of mallory's messages waited for her share; bob, who sent nothing, owes nothing.
    expect(server.metrics.editorPaced.get({ by: 'user' })).toBeGreaterThan(pacedBefore)
    expect(server.collab.boundary.userDebtMs(bob.user.id)).toBe(0)
    for (const p of providers) p.destroy()
  }, 90_000)
  test("the time a user's messages take to handle draws from their share of the event loop; past it they wait, others do not", async () => {
    // Until 2026-12-05 editors' shares counted structs and bytes: a keystroke is one struct however dear
    // it is to handle (a paragraph of 10,000 marks: ~0.5-1 ms each, ~30x a plain one). Here the share is
    // made small (a test's keystrokes are cheap), so one typist's plain keystrokes run it dry.
    const boundary = server.collab.boundary
    // 10 ms a second, burst 1 ms: a hundred plain messages (each well over 0.01 ms to handle) run it dry,
    // and wait a few seconds in all.
    boundary.useEditorTimeShare(10, 1)
    try {
      const typist = await userWithToken(server, 'time-typist')
      const other = await userWithToken(server, 'time-other')
      const rooms: string[] = []
      for (const [owner, title] of [
        [typist, 'Typed'],
        [other, 'Elsewhere'],
      ] as const) {
        const made = await server.services.documents.create(owner.user.id, { title })
        if (made.kind === 'error') throw new Error(made.message)
        rooms.push(made.value.room)
      }
      const [typed, elsewhere] = rooms as [string, string]
      const editor = connectProvider(server.url, typed, typist.token)
      const closed: string[] = []
      editor.provider.on('close', ({ event }: { event: { reason: string } }) => closed.push(event.reason))
      const watcher = connectProvider(server.url, typed, typist.token)
      const writer = connectProvider(server.url, elsewhere, other.token)
      const reader = connectProvider(server.url, elsewhere, other.token)
      providers.push(editor, watcher, writer, reader)
      await Promise.all([editor, watcher, writer, reader].map((p) => p.ready))
      const pacedBefore = server.metrics.editorPaced.get({ by: 'time' })
      const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
      for (let i = 0; i < 100; i++) fragment.push([paragraph(`line ${i}`)])
      await eventually(
        () => expect(server.metrics.editorPaced.get({ by: 'time' })).toBeGreaterThan(pacedBefore),
        30_000,
        "the typist's messages waiting for their share of time",
      )
      expect(boundary.userTimeLeftMs(typist.user.id)).toBeLessThan(1)
      // Someone else's typing meanwhile is theirs: it reaches the other editor, their share untouched by
      // the typist's.
      writer.doc.getXmlFragment(FRAGMENT_NAME).push([paragraph('typed elsewhere')])
      await eventually(
        () => expect(reader.doc.getXmlFragment(FRAGMENT_NAME).toString()).toContain('typed elsewhere'),
        20_000,
        "the other user's keystroke",
      )
      // Paced, not refused: every line of the typist arrives.
      await eventually(
        () => expect(watcher.doc.getXmlFragment(FRAGMENT_NAME).toString()).toContain('line 99'),
        60_000,
        "every one of the typist's lines",
      )
      expect(closed).toEqual([])
    } finally {
      boundary.useEditorTimeShare(EDITOR_MS_PER_SECOND, EDITOR_MS_BURST)
      for (const p of providers.splice(0)) p.destroy()
    }
  }, 90_000)
})
