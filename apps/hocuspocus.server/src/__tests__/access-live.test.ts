/**
 * Attack: keep access after losing it. Access used to be checked only when a WebSocket connected, so after
 * `token revoke`, `doc unshare`, `doc set --read-only`, a role change to viewer or a soft delete, an open
 * socket kept editing. Each test here opens real providers on a real server, changes access through the
 * services (as the CLI does, in-process through the admin socket or directly on the database), and then
 * checks that the socket is closed or read-only: its further typing reaches neither another editor nor
 * the stored state. Runs on PGlite, or PostgreSQL with TEST_DATABASE_URL; the two-instance part needs
 * TEST_REDIS_URL and TEST_DATABASE_URL too.
 */
import { describe, expect, test } from 'bun:test'
import { DATABASE_KIND, TEST_DATABASE_URL, type TestDatabase } from '@collab/test-support/database'
import { appendParagraph, createDocument, textOf } from '@collab/test-support/documents'
import { runCli } from '@collab/test-support/process'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import {
  eventually,
  TEST_REDIS_URL,
  TWO_INSTANCES,
  userWithToken,
  useTestServer,
  useTwoTestServers,
} from '@collab/test-support/server'
import * as Y from 'yjs'
import { ACCESS_REVOKED_CODE, AccessWatch } from '../collab/access-watch.ts'
import type { RunningServer } from '../server.ts'
import { createServices } from '../services.ts'

/** Long enough for a loopback update to arrive if it were going to (it is not a measurement). */
const GRACE_MS = 300

/** The stored text, read from the tables themselves (also for a deleted document): snapshot, then log. */
async function storedText(server: RunningServer, documentId: string): Promise<string> {
  const { prisma } = server.services.db
  const row = await prisma.documentState.findUnique({ where: { documentId } })
  const logged = await prisma.documentUpdate.findMany({ where: { documentId }, orderBy: { id: 'asc' } })
  const doc = new Y.Doc()
  if (row) Y.applyUpdate(doc, new Uint8Array(row.state))
  for (const update of logged) Y.applyUpdate(doc, new Uint8Array(update.update))
  return textOf(doc)
}

/** This server's open connections to a room, for one user (or everyone). */
function connectionsOf(server: RunningServer, room: string, userId?: string) {
  const document = server.collab.hocuspocus.documents.get(room)
  return (document?.getConnections() ?? []).filter(
    (c) => userId === undefined || c.context?.principal?.user.id === userId,
  )
}

function watchOf(server: RunningServer): AccessWatch {
  const found = server.collab.hocuspocus.configuration.extensions.find((e) => e instanceof AccessWatch)
  if (!found) throw new Error('no AccessWatch among the extensions')
  return found as AccessWatch
}

/** Every close the provider saw (the server's close message, then the socket's close event). */
function closesOf(client: TestProvider): Array<{ code: number; reason: string }> {
  const seen: Array<{ code: number; reason: string }> = []
  client.provider.on('close', ({ event }: { event: { code: number; reason: string } }) => {
    seen.push({ code: event.code, reason: event.reason })
  })
  return seen
}

type Setup = {
  owner: Awaited<ReturnType<typeof userWithToken>>
  bob: Awaited<ReturnType<typeof userWithToken>>
  slug: string
  room: string
  documentId: string
}

type Editors = Setup & { ownerClient: TestProvider; bobClient: TestProvider }

/** Owner and bob (an editor member), a document, and both typing once so both are live editors. */
async function twoEditors(
  server: RunningServer,
  name: string,
  bobOn: RunningServer = server,
): Promise<Editors> {
  const owner = await userWithToken(server, `${name}-owner`)
  const bob = await userWithToken(server, `${name}-bob`)
  const created = await createDocument(server, owner.user.id, { title: `Access ${name}` })
  const { slug, room, id: documentId } = created
  const shared = await server.services.documents.share(slug, bob.user.id, 'editor')
  if (shared.kind === 'error') throw new Error(shared.message)
  const ownerClient = connectProvider(server.url, room, owner.token)
  const bobClient = connectProvider(bobOn.url, room, bob.token)
  await Promise.all([ownerClient.ready, bobClient.ready])
  appendParagraph(bobClient.doc, 'bob before')
  await eventually(() => expect(textOf(ownerClient.doc)).toContain('bob before'))
  return { owner, bob, slug, room, documentId, ownerClient, bobClient }
}

let checkpoints = 0

/**
 * After bob lost write access: bob types, the owner types a marker; once the marker is stored, bob's
 * words are neither in the owner's document nor in the stored state.
 */
async function expectBobsTypingGoesNowhere(server: RunningServer, s: Editors, words: string) {
  appendParagraph(s.bobClient.doc, words)
  await Bun.sleep(GRACE_MS)
  const marker = `owner checkpoint ${++checkpoints}`
  appendParagraph(s.ownerClient.doc, marker)
  await eventually(async () => expect(await storedText(server, s.documentId)).toContain(marker))
  expect(textOf(s.ownerClient.doc)).not.toContain(words)
  expect(await storedText(server, s.documentId)).not.toContain(words)
}

/** Bob's later typing reaches no one, while the owner's own connection was not concerned; both close. */
async function expectOnlyBobShutOut(server: RunningServer, s: Editors, words: string) {
  await expectBobsTypingGoesNowhere(server, s, words)
  expect(connectionsOf(server, s.room, s.owner.user.id)).toHaveLength(1)
  closeBoth(s)
}

function closeBoth(s: Editors) {
  s.ownerClient.destroy()
  s.bobClient.destroy()
}

describe(`access follows changes on open WebSockets (${DATABASE_KIND})`, () => {
  let server: RunningServer
  useTestServer((s) => {
    server = s
    // Only the change events may close or downgrade here; the periodic pass has its own test below.
    watchOf(server).stopPeriodicRecheck()
  })

  test('token revoke closes the open socket; its later typing reaches no one and is not stored', async () => {
    const s = await twoEditors(server, 'revoke')
    const closes = closesOf(s.bobClient)
    const revoked = await server.services.tokens.revoke(s.bob.tokenId)
    expect(revoked.kind).toBe('ok')
    await eventually(() => expect(connectionsOf(server, s.room, s.bob.user.id)).toHaveLength(0))
    await eventually(() =>
      expect(closes.some((c) => c.code === ACCESS_REVOKED_CODE || c.reason.startsWith('Forbidden'))).toBe(
        true,
      ),
    )
    await expectOnlyBobShutOut(server, s, 'bob after revoke')
  })

  test('doc unshare closes the member’s open socket; its later typing reaches no one', async () => {
    const s = await twoEditors(server, 'unshare')
    const unshared = await server.services.documents.unshare(s.slug, s.bob.user.id)
    expect(unshared).toEqual({ kind: 'ok', value: { removed: true } })
    await eventually(() => expect(connectionsOf(server, s.room, s.bob.user.id)).toHaveLength(0))
    await expectOnlyBobShutOut(server, s, 'bob after unshare')
  })

  test('doc set --read-only makes the member read-only: cannot change the document, still reads', async () => {
    const s = await twoEditors(server, 'readonly')
    const flagged = await server.services.documents.setFlags(s.slug, { readOnly: true })
    expect(flagged.kind).toBe('ok')
    await eventually(() => {
      const [connection] = connectionsOf(server, s.room, s.bob.user.id)
      expect(connection?.readOnly).toBe(true)
      expect(connection?.context.canWrite).toBe(false)
    })
    await eventually(() => expect(s.bobClient.provider.authorizedScope).toBe('readonly'))
    await expectBobsTypingGoesNowhere(server, s, 'bob after read-only')
    // Still open and still reading what the owner writes.
    appendParagraph(s.ownerClient.doc, 'owner writes on')
    await eventually(() => expect(textOf(s.bobClient.doc)).toContain('owner writes on'))
    expect(connectionsOf(server, s.room, s.bob.user.id)).toHaveLength(1)
    closeBoth(s)
  })

  test('doc share --role viewer makes an editor read-only; back to editor, the same socket writes again', async () => {
    const s = await twoEditors(server, 'viewer')
    const shared = await server.services.documents.share(s.slug, s.bob.user.id, 'viewer')
    expect(shared.kind).toBe('ok')
    await eventually(() => expect(connectionsOf(server, s.room, s.bob.user.id)[0]?.readOnly).toBe(true))
    await expectBobsTypingGoesNowhere(server, s, 'bob as viewer')
    appendParagraph(s.ownerClient.doc, 'owner to the viewer')
    await eventually(() => expect(textOf(s.bobClient.doc)).toContain('owner to the viewer'))

    // Editor again: the open socket is told read-write and its typing reaches the owner, without a reconnect.
    await server.services.documents.share(s.slug, s.bob.user.id, 'editor')
    await eventually(() => expect(s.bobClient.provider.authorizedScope).toBe('read-write'))
    expect(connectionsOf(server, s.room, s.bob.user.id)[0]?.readOnly).toBe(false)
    appendParagraph(s.bobClient.doc, 'bob editor again')
    await eventually(() => expect(textOf(s.ownerClient.doc)).toContain('bob editor again'))
    closeBoth(s)
  })

  test('a drop begun after a raise wins, whichever answer comes back first', async () => {
    const s = await twoEditors(server, 'order')
    await server.services.documents.share(s.slug, s.bob.user.id, 'viewer')
    await eventually(() => expect(connectionsOf(server, s.room, s.bob.user.id)[0]?.readOnly).toBe(true))
    // The raise's answer is held until the later drop's has come back: arriving last, it gives nothing back.
    const { documents } = server.services
    const accessMany = documents.accessMany.bind(documents)
    let releaseRaise: () => void = () => {}
    const raiseHeld = new Promise<void>((resolve) => {
      releaseRaise = resolve
    })
    let calls = 0
    documents.accessMany = async (...args) => {
      const answer = await accessMany(...args)
      if (++calls === 1) await raiseHeld
      return answer
    }
    try {
      await documents.share(s.slug, s.bob.user.id, 'editor')
      await eventually(() => expect(calls).toBe(1))
      await documents.share(s.slug, s.bob.user.id, 'viewer')
      await eventually(() => expect(calls).toBe(2))
      await Bun.sleep(GRACE_MS)
      releaseRaise()
      await Bun.sleep(GRACE_MS)
    } finally {
      documents.accessMany = accessMany
    }
    expect(connectionsOf(server, s.room, s.bob.user.id)[0]?.readOnly).toBe(true)
    expect(s.bobClient.provider.authorizedScope).toBe('readonly')
    await expectBobsTypingGoesNowhere(server, s, 'bob after the late raise')
    closeBoth(s)
  })

  test('doc set --private closes a reader of the public document who is not a member', async () => {
    const owner = await userWithToken(server, 'private-owner')
    const carol = await userWithToken(server, 'private-carol')
    const created = await createDocument(server, owner.user.id, {
      title: 'Public',
      isPrivate: false,
    })
    const { room, slug } = created
    const ownerClient = connectProvider(server.url, room, owner.token)
    const carolClient = connectProvider(server.url, room, carol.token)
    await Promise.all([ownerClient.ready, carolClient.ready])
    expect(connectionsOf(server, room, carol.user.id)[0]?.readOnly).toBe(true) // public: read only
    await server.services.documents.setFlags(slug, { isPrivate: true })
    await eventually(() => expect(connectionsOf(server, room, carol.user.id)).toHaveLength(0))
    appendParagraph(ownerClient.doc, 'owner after private')
    await eventually(async () =>
      expect(await storedText(server, created.id)).toContain('owner after private'),
    )
    await Bun.sleep(GRACE_MS)
    expect(textOf(carolClient.doc)).not.toContain('owner after private') // no longer reads either
    expect(connectionsOf(server, room, owner.user.id)).toHaveLength(1)
    ownerClient.destroy()
    carolClient.destroy()
  })

  test('doc delete closes every socket on the document, the owner’s too', async () => {
    const s = await twoEditors(server, 'delete')
    const deleted = await server.services.documents.softDelete(s.slug)
    expect(deleted.kind).toBe('ok')
    await eventually(() => expect(connectionsOf(server, s.room)).toHaveLength(0))
    appendParagraph(s.bobClient.doc, 'bob after delete')
    appendParagraph(s.ownerClient.doc, 'owner after delete')
    await Bun.sleep(GRACE_MS)
    const stored = await storedText(server, s.documentId)
    expect(stored).not.toContain('bob after delete')
    expect(stored).not.toContain('owner after delete')
    closeBoth(s)
  })

  test('a change this server is not told of (another process on the database) is found by the periodic pass', async () => {
    const s = await twoEditors(server, 'silent')
    // Services of their own on the same database: like a CLI process writing PostgreSQL directly
    // without REDIS_URL, nothing reaches this server's watch.
    const elsewhere = createServices(server.services.db)
    const revoked = await elsewhere.tokens.revoke(s.bob.tokenId)
    expect(revoked.kind).toBe('ok')
    await Bun.sleep(GRACE_MS)
    expect(connectionsOf(server, s.room, s.bob.user.id)).toHaveLength(1) // not told: still open
    await watchOf(server).recheckAll() // what ACCESS_RECHECK_MS runs on its own
    expect(connectionsOf(server, s.room, s.bob.user.id)).toHaveLength(0)
    // The pass dropped the cached principal too: requests refuse the token at once.
    expect(await server.services.tokens.verify(s.bob.token)).toBeNull()
    await expectBobsTypingGoesNowhere(server, s, 'bob after a silent revoke')
    closeBoth(s)
  })

  test('the periodic pass runs on its own (ACCESS_RECHECK_MS) and closes an expired token’s socket', async () => {
    const owner = await userWithToken(server, 'expiry-owner')
    const created = await createDocument(server, owner.user.id, { title: 'Expiry' })
    const client = connectProvider(server.url, created.room, owner.token)
    await client.ready
    // The token expires now (no event exists for that); a watch with a short period finds it.
    await server.services.db.prisma.apiToken.update({
      where: { id: owner.tokenId },
      data: { expiresAt: new Date() },
    })
    const watch = new AccessWatch({
      services: server.services,
      logger: (await import('../logger.ts')).createLogger('silent'),
      recheckMs: 50,
    })
    await watch.onConfigure({ instance: server.collab.hocuspocus })
    try {
      await eventually(() => expect(connectionsOf(server, created.room)).toHaveLength(0))
    } finally {
      await watch.onDestroy()
      client.destroy()
    }
  })
})

/** PGlite: the CLI runs its command inside the server (admin socket). PostgreSQL: it writes directly. */
describe(`token revoke from a real CLI process (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: RunningServer
  useTestServer(
    (s, d) => {
      server = s
      db = d
      watchOf(server).stopPeriodicRecheck()
    },
    { redisUrl: TEST_REDIS_URL },
  )

  test('closes the open socket: in-process, through Redis, or by the periodic pass', async () => {
    const s = await twoEditors(server, 'cli')
    const run = await runCli(['token', 'revoke', s.bob.tokenId], {
      DATABASE_URL: db.databaseUrl ?? '',
      DATA_DIR: db.dataDir,
      REDIS_URL: TEST_REDIS_URL ?? '',
    })
    expect(run.stderr).toBe('')
    expect(run.exitCode).toBe(0)
    // PostgreSQL without Redis: nothing tells the server; its periodic pass (stopped here) finds it.
    if (TEST_DATABASE_URL && !TEST_REDIS_URL) await watchOf(server).recheckAll()
    await eventually(() => expect(connectionsOf(server, s.room, s.bob.user.id)).toHaveLength(0))
    expect(await server.services.tokens.verify(s.bob.token)).toBeNull()
    await expectBobsTypingGoesNowhere(server, s, 'bob after the CLI revoke')
    closeBoth(s)
  })
})

describe.skipIf(!TWO_INSTANCES)('two instances through Redis (postgres)', () => {
  const pair = useTwoTestServers({}, (a, b) => {
    // Only the Redis message can close anything on B.
    watchOf(a).stopPeriodicRecheck()
    watchOf(b).stopPeriodicRecheck()
  })

  test('a revoke through instance A closes the socket open on instance B and clears B’s token cache', async () => {
    const s = await twoEditors(pair.a, 'redis-revoke', pair.b)
    expect(await pair.b.services.tokens.verify(s.bob.token)).not.toBeNull() // cached on B
    const revoked = await pair.a.services.tokens.revoke(s.bob.tokenId)
    expect(revoked.kind).toBe('ok')
    await eventually(() => expect(connectionsOf(pair.b, s.room, s.bob.user.id)).toHaveLength(0))
    expect(await pair.b.services.tokens.verify(s.bob.token)).toBeNull()
    await expectBobsTypingGoesNowhere(pair.a, s, 'bob on B after revoke')
    closeBoth(s)
  })

  test('a revoke through instance A: B refuses the token at once for requests too (no socket on B)', async () => {
    const carol = await userWithToken(pair.a, 'redis-cache-carol')
    expect(await pair.b.services.tokens.verify(carol.token)).not.toBeNull() // cached on B for 10 s
    const heard = new Promise<void>((resolve) => {
      pair.b.services.accessChanges.on((change, source) => {
        if (source === 'remote' && change.kind === 'token' && change.tokenId === carol.tokenId) resolve()
      })
    })
    await pair.a.services.tokens.revoke(carol.tokenId)
    await heard // B heard it through Redis; its cache entry went before this listener ran
    expect(await pair.b.services.tokens.verify(carol.token)).toBeNull()
  })

  test('an unshare through instance A closes the member’s socket on instance B', async () => {
    const s = await twoEditors(pair.a, 'redis-unshare', pair.b)
    const unshared = await pair.a.services.documents.unshare(s.slug, s.bob.user.id)
    expect(unshared.kind).toBe('ok')
    await eventually(() => expect(connectionsOf(pair.b, s.room, s.bob.user.id)).toHaveLength(0))
    await expectBobsTypingGoesNowhere(pair.a, s, 'bob on B after unshare')
    closeBoth(s)
  })

  test('viewer and back to editor through instance A: the socket on instance B is read-only, then writes', async () => {
    const s = await twoEditors(pair.a, 'redis-raise', pair.b)
    await pair.a.services.documents.share(s.slug, s.bob.user.id, 'viewer')
    await eventually(() => expect(connectionsOf(pair.b, s.room, s.bob.user.id)[0]?.readOnly).toBe(true))
    await pair.a.services.documents.share(s.slug, s.bob.user.id, 'editor')
    await eventually(() => expect(s.bobClient.provider.authorizedScope).toBe('read-write'))
    appendParagraph(s.bobClient.doc, 'bob on B, editor again')
    await eventually(() => expect(textOf(s.ownerClient.doc)).toContain('bob on B, editor again'))
    closeBoth(s)
  })

  test('read-only through instance A makes the member read-only on instance B', async () => {
    const s = await twoEditors(pair.a, 'redis-readonly', pair.b)
    await pair.a.services.documents.setFlags(s.slug, { readOnly: true })
    await eventually(() => expect(connectionsOf(pair.b, s.room, s.bob.user.id)[0]?.readOnly).toBe(true))
    await expectBobsTypingGoesNowhere(pair.a, s, 'bob on B after read-only')
    closeBoth(s)
  })
})
