/**
 * Slugs reveal nothing about other people's documents. The attack: a stranger creates a document with the
 * title they guess (create_document, the CLI's doc import) and reads the slug back; a tail only on
 * collision says "someone already has a document called that". A stranger who asks REST for a private
 * slug gets the very answer a missing slug gets, by the same statements answering the same rows, so the
 * same steps follow (a private slug answered ~60 µs slower than a missing one, z = -4.8: issue 24).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DATABASE_KIND } from '@collab/test-support/database'
import { call, connectClient } from '@collab/test-support/mcp'
import { userWithToken } from '@collab/test-support/server'
import { useSharedServer } from '@collab/test-support/shared-server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { PrismaClient } from '../db/generated/client.ts'
import { createResolver } from '../documents/resolve.ts'
import { SLUG_TAIL_CHARS } from '../documents/slug.ts'
import type { RunningServer } from '../server.ts'

const tailed = (base: string) => new RegExp(`^${base}-[a-z0-9]{${SLUG_TAIL_CHARS}}$`)

describe(`slugs reveal nothing (${DATABASE_KIND})`, () => {
  let server: RunningServer
  let handle: (base: string) => string
  useSharedServer((share) => {
    ;({ server, handle } = share)
  })
  let alice: Awaited<ReturnType<typeof userWithToken>>
  let mallory: Awaited<ReturnType<typeof userWithToken>>
  let malloryMcp: Client
  let secretSlug: string
  beforeAll(async () => {
    alice = await userWithToken(server, handle('alice'))
    mallory = await userWithToken(server, handle('mallory'))
    const secret = await server.services.documents.create(alice.user.id, { title: 'Alice Secret Plan' })
    if (secret.kind === 'error') throw new Error(secret.message)
    secretSlug = secret.value.slug
    malloryMcp = await connectClient(`${server.url}/mcp`, mallory.token)
  }, 60_000)
  afterAll(async () => {
    await malloryMcp?.close()
  })

  const slugOf = (text: string) => /^slug: (\S+)/.exec(text)?.[1] ?? ''

  test('create_document gives a used and an unused title the same shape of slug', async () => {
    const guessed = await call(malloryMcp, 'create_document', { title: 'Alice Secret Plan' })
    const unused = await call(malloryMcp, 'create_document', { title: 'Nobody Has This Title' })
    expect(guessed.isError).toBe(false)
    expect(unused.isError).toBe(false)
    expect(slugOf(guessed.text)).toMatch(tailed('alice-secret-plan'))
    expect(slugOf(unused.text)).toMatch(tailed('nobody-has-this-title'))
    expect(secretSlug).toMatch(tailed('alice-secret-plan'))
    expect(slugOf(guessed.text)).not.toBe(secretSlug)
  })

  test("REST answers another person's private slug exactly as it answers a missing one", async () => {
    const get = async (slug: string) => {
      const res = await fetch(`${server.url}/api/documents/${slug}`, {
        headers: { Authorization: `Bearer ${mallory.token}` },
      })
      return { status: res.status, body: (await res.text()).replaceAll(slug, '<slug>') }
    }
    const missing = `alice-secret-plan-${'z'.repeat(SLUG_TAIL_CHARS)}`
    const hidden = await get(secretSlug)
    const absent = await get(missing)
    expect(hidden.status).toBe(404)
    expect(hidden).toEqual(absent)
    // A deleted document answers alike too; so does the WebSocket hook's lookup by room name.
    const gone = await server.services.documents.create(alice.user.id, { title: 'Gone soon' })
    if (gone.kind === 'error') throw new Error(gone.message)
    await server.services.documents.softDelete(gone.value.slug)
    expect(await get(gone.value.slug)).toEqual(absent)
    const principal = await server.services.tokens.verify(mallory.token)
    const secret = await server.services.documents.bySlugForAdmin(secretSlug)
    if (secret.kind === 'error' || !principal) throw new Error('setup')
    const byRoom = await server.services.documents.resolveRoom(secret.value.room, principal)
    const noRoom = await server.services.documents.resolveRoom('no-such-room', principal)
    expect(byRoom.kind === 'error' && byRoom.message.replace(secret.value.room, '<room>')).toBe(
      noRoom.kind === 'error' && noRoom.message.replace('no-such-room', '<room>'),
    )
    // The owner still reads it, with the whole row.
    const own = await fetch(`${server.url}/api/documents/${secretSlug}`, {
      headers: { Authorization: `Bearer ${alice.token}` },
    })
    expect(own.status).toBe(200)
    expect(await own.json()).toMatchObject({
      slug: secretSlug,
      title: 'Alice Secret Plan',
      whose: 'yours',
      private: true,
      readOnly: false,
      canWrite: true,
    })
    // A member reads it as shared, with the role's rights (the membership comes from the same query).
    await server.services.documents.share(secretSlug, mallory.user.id, 'viewer')
    const shared = await fetch(`${server.url}/api/documents/${secretSlug}`, {
      headers: { Authorization: `Bearer ${mallory.token}` },
    })
    expect(shared.status).toBe(200)
    expect(await shared.json()).toMatchObject({ whose: 'shared with you', canWrite: false })
    await server.services.documents.unshare(secretSlug, mallory.user.id)
    expect(await get(secretSlug)).toEqual(absent)
  })

  test('a private slug and a missing one cost the same: the same statements, answered by the same rows', async () => {
    // The resolver the server uses, on the server's real database client, with every raw statement it
    // sends and every row it gets back written down (the slug asked for shown as <slug>).
    const trace: string[] = []
    const prisma = server.services.db.prisma
    const recording = new Proxy(prisma, {
      get(target, key, receiver) {
        if (key !== '$queryRaw') return Reflect.get(target, key, receiver)
        return async (strings: TemplateStringsArray, ...values: unknown[]) => {
          const rows = await target.$queryRaw(strings, ...values)
          trace.push(JSON.stringify({ sql: strings.join('?'), values, rows }))
          return rows
        }
      },
    }) as PrismaClient
    const resolver = createResolver(recording)
    const principal = await server.services.tokens.verify(mallory.token)
    if (!principal) throw new Error('setup: mallory has no principal')
    const traced = async (slug: string) => {
      trace.length = 0
      const answer = await resolver.resolve(slug, principal)
      return {
        trace: trace.map((line) => line.replaceAll(slug, '<slug>')),
        answer: JSON.stringify(answer).replaceAll(slug, '<slug>'),
      }
    }
    const hidden = await traced(secretSlug)
    const absent = await traced(`alice-secret-plan-${'y'.repeat(SLUG_TAIL_CHARS)}`)
    expect(hidden.trace).toHaveLength(1)
    // Before, the private document's whole row came back (and was parsed and decided on); a missing slug
    // got a row of nulls.
    expect(hidden).toEqual(absent)
    const { rows } = JSON.parse(hidden.trace[0]!) as { rows: Array<Record<string, unknown>> }
    expect(Object.values(rows[0]!).every((value) => value === null)).toBe(true)
    // The owner's resolution through the same statement still gets the row.
    const owner = await server.services.tokens.verify(alice.token)
    if (!owner) throw new Error('setup: alice has no principal')
    expect(await resolver.resolve(secretSlug, owner)).toMatchObject({
      kind: 'ok',
      value: { document: { slug: secretSlug }, access: { whose: 'yours' } },
    })
  })

  test('a slug made before tails were always added keeps working', async () => {
    const made = await server.services.documents.create(alice.user.id, { title: 'Legacy notes' })
    if (made.kind === 'error') throw new Error(made.message)
    await server.services.db.prisma.document.update({
      where: { id: made.value.id },
      data: { slug: 'legacy-notes' },
    })
    const res = await fetch(`${server.url}/api/documents/legacy-notes`, {
      headers: { Authorization: `Bearer ${alice.token}` },
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { slug: string }).slug).toBe('legacy-notes')
    const read = await call(
      await connectClient(`${server.url}/mcp`, alice.token).then((c) => {
        clients.push(c)
        return c
      }),
      'get_outline',
      { slug: 'legacy-notes' },
    )
    expect(read.isError).toBe(false)
  })
})

const clients: Client[] = []
afterAll(async () => {
  for (const c of clients) await c.close()
})
