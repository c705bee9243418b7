/**
 * A resolution that found a readable document is reused for RESOLVE_CACHE_MS (documents/resolve.ts), so
 * every change of who may read must drop it at once: unshare, a document made private, a delete, a role
 * made viewer, and (from another instance) a change heard through AccessChanges. A title written by the
 * content refresh shows at the next call too. And a document in steady use never lapses: concurrent
 * calls share one query, and an entry is renewed in the background before RESOLVE_CACHE_MS (at each lapse
 * 50 concurrent reads queued 50 queries on PGlite's one session, ~60-160 ms every 2 s).
 */
import { afterEach, describe, expect, setSystemTime, test } from 'bun:test'
import { countingRawQueries, DATABASE_KIND, settled } from '@collab/test-support/database'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import { createResolver, RESOLVE_CACHE_MS, RESOLVE_REFRESH_AFTER_MS } from '../documents/resolve.ts'
import type { RunningServer } from '../server.ts'

describe(`cached resolutions follow access changes at once (${DATABASE_KIND})`, () => {
  let server: RunningServer
  let handle: (base: string) => string
  useSharedServer((share) => {
    ;({ server, handle } = share)
  })

  async function setup(owner: string, other: string) {
    const a = await userWithToken(server, handle(owner))
    const b = await userWithToken(server, handle(other))
    const made = await server.services.documents.create(a.user.id, { title: 'Cached', isPrivate: true })
    if (made.kind === 'error') throw new Error(made.message)
    const principal = (await server.services.tokens.verify(b.token))!
    return { owner: a, other: b, principal, slug: made.value.slug, id: made.value.id, room: made.value.room }
  }

  const canRead = async (
    slug: string,
    principal: Parameters<RunningServer['services']['documents']['resolve']>[1],
  ) => (await server.services.documents.resolve(slug, principal)).kind === 'ok'

  test('unshare, private, delete and a lowered role take effect on the very next resolution', async () => {
    const { other, principal, slug } = await setup('cache-owner', 'cache-reader')
    const documents = server.services.documents
    expect(await canRead(slug, principal)).toBe(false)

    await documents.share(slug, other.user.id, 'editor')
    expect(await canRead(slug, principal)).toBe(true) // now cached
    const writable = await documents.resolve(slug, principal)
    expect(writable.kind === 'ok' && writable.value.access.canWrite).toBe(true)
    await documents.share(slug, other.user.id, 'viewer')
    const lowered = await documents.resolve(slug, principal)
    expect(lowered.kind === 'ok' && lowered.value.access.canWrite).toBe(false)

    await documents.unshare(slug, other.user.id)
    expect(await canRead(slug, principal)).toBe(false)

    await documents.setFlags(slug, { isPrivate: false })
    expect(await canRead(slug, principal)).toBe(true)
    await documents.setFlags(slug, { isPrivate: true })
    expect(await canRead(slug, principal)).toBe(false)

    await documents.setFlags(slug, { isPrivate: false })
    expect(await canRead(slug, principal)).toBe(true)
    await documents.softDelete(slug)
    expect(await canRead(slug, principal)).toBe(false)
  })

  test('a change heard from another instance (AccessChanges) drops cached resolutions', async () => {
    const { other, principal, slug, id } = await setup('cache-owner-2', 'cache-reader-2')
    await server.services.documents.share(slug, other.user.id, 'viewer')
    expect(await canRead(slug, principal)).toBe(true)
    // Another instance removed the membership: the row goes behind this one's back, the change comes by Redis.
    await server.services.db.prisma.documentMember.deleteMany({ where: { documentId: id } })
    server.services.accessChanges.emit({ kind: 'document', documentId: id }, 'remote')
    expect(await canRead(slug, principal)).toBe(false)
  })

  test('a title written by the content refresh is in the next resolution', async () => {
    const { owner, slug, id } = await setup('cache-owner-3', 'cache-reader-3')
    const principal = (await server.services.tokens.verify(owner.token))!
    const before = await server.services.documents.resolve(slug, principal)
    expect(before.kind === 'ok' && before.value.document.title).toBe('Cached')
    await server.services.documents.refreshDerived(id, { title: 'Renamed', text: 'Renamed' })
    const after = await server.services.documents.resolve(slug, principal)
    expect(after.kind === 'ok' && after.value.document.title).toBe('Renamed')
  })

  afterEach(() => setSystemTime())

  test('concurrent calls share one query; an entry in use is renewed before it lapses, in the background', async () => {
    const { owner, slug } = await setup('flight-owner', 'flight-reader')
    const principal = (await server.services.tokens.verify(owner.token))!
    const { client, sent } = countingRawQueries(server.services.db.prisma)
    const resolver = createResolver(client)
    const burst = () => Promise.all(Array.from({ length: 50 }, () => resolver.resolve(slug, principal)))

    const first = await burst()
    expect(first.every((r) => r.kind === 'ok')).toBe(true)
    expect(sent.count).toBe(1) // one query for 50 calls, not 50
    // After the answer: the entry is at most this old (a loaded machine's query may take long).
    const start = Date.now()

    setSystemTime(start + RESOLVE_REFRESH_AFTER_MS + 10)
    expect((await burst()).every((r) => r.kind === 'ok')).toBe(true) // answered from the entry...
    await settled(() => sent.answered === 2)
    expect(sent.count).toBe(2) // ...which one query renews meanwhile

    // Past the first answer's lapse: the renewed entry answers; no call waits on a query.
    setSystemTime(start + RESOLVE_CACHE_MS + 10)
    expect((await burst()).every((r) => r.kind === 'ok')).toBe(true)
    expect(sent.count).toBe(2)
  })

  test('a renewal that finds the access gone refuses from then on; a query under way at a change is not kept', async () => {
    const { other, principal, slug, id } = await setup('renew-owner', 'renew-reader')
    await server.services.documents.share(slug, other.user.id, 'viewer')
    const { client, sent } = countingRawQueries(server.services.db.prisma)
    const resolver = createResolver(client)
    expect((await resolver.resolve(slug, principal)).kind).toBe('ok')
    const start = Date.now() // after the answer: the entry is at most this old

    // The membership goes behind this resolver's back (no change told): the renewal finds it gone.
    await server.services.db.prisma.documentMember.deleteMany({ where: { documentId: id } })
    setSystemTime(start + RESOLVE_REFRESH_AFTER_MS + 10)
    expect((await resolver.resolve(slug, principal)).kind).toBe('ok') // within the bound, from the entry
    await settled(() => sent.answered === 2)
    expect((await resolver.resolve(slug, principal)).kind).toBe('error') // the renewal dropped it
    expect(sent.count).toBe(3)

    // A change told while a query is under way: its answer (read before the change) is not kept.
    await server.services.documents.share(slug, other.user.id, 'viewer')
    const inFlight = resolver.resolve(slug, principal)
    resolver.accessChanged({ kind: 'document', documentId: id })
    expect((await inFlight).kind).toBe('ok')
    expect((await resolver.resolve(slug, principal)).kind).toBe('ok')
    expect(sent.count).toBe(5) // asked again after the change: the one under way was neither kept nor shared
  })
})
