/**
 * Who may read and write, decided by the documents service against a real database. Expected outcomes
 * come from the rules in documents/access.ts, written out here as one table.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { startTestServer } from '@collab/test-support/server'
import type { Principal } from '../auth/tokens.ts'
import type { RunningServer } from '../server.ts'

type Who = 'owner' | 'editor' | 'viewer' | 'stranger'
type Kind = 'private' | 'public' | 'read-only' | 'deleted'
type Outcome = 'none' | 'read' | 'write'

// Read: owner, members, anyone signed in on a public document. Write: owner, editors unless read-only.
// Deleted: nobody. (With a read-only token, every 'write' below becomes 'read'.)
const EXPECTED: Record<Kind, Record<Who, Outcome>> = {
  private: { owner: 'write', editor: 'write', viewer: 'read', stranger: 'none' },
  public: { owner: 'write', editor: 'write', viewer: 'read', stranger: 'read' },
  'read-only': { owner: 'write', editor: 'read', viewer: 'read', stranger: 'none' },
  deleted: { owner: 'none', editor: 'none', viewer: 'none', stranger: 'none' },
}

describe(`access rules (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: RunningServer
  const people = {} as Record<Who, { id: string; handle: string }>
  const slugs = {} as Record<Kind, string>

  beforeAll(async () => {
    db = await createTestDatabase()
    server = await startTestServer(db)
    const { users, documents } = server.services
    for (const who of ['owner', 'editor', 'viewer', 'stranger'] as const) {
      const u = await users.add(`${who}-user`)
      if (u.kind === 'error') throw new Error(u.message)
      people[who] = u.value
    }
    for (const kind of ['private', 'public', 'read-only', 'deleted'] as const) {
      const created = await documents.create(people.owner.id, {
        title: `Doc ${kind}`,
        isPrivate: kind !== 'public',
      })
      if (created.kind === 'error') throw new Error(created.message)
      slugs[kind] = created.value.slug
      await documents.share(created.value.slug, people.editor.id, 'editor')
      await documents.share(created.value.slug, people.viewer.id, 'viewer')
      if (kind === 'read-only') await documents.setFlags(created.value.slug, { readOnly: true })
      if (kind === 'deleted') await documents.softDelete(created.value.slug)
    }
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await db?.cleanup()
  }, 60_000)

  const principal = (who: Who, scopes: Principal['scopes']): Principal => ({
    user: { ...people[who], name: null, createdAt: new Date() },
    tokenId: 'test',
    scopes,
  })

  async function outcome(who: Who, kind: Kind, scopes: Principal['scopes']): Promise<Outcome> {
    const resolved = await server.services.documents.resolve(slugs[kind], principal(who, scopes))
    if (resolved.kind === 'error') return 'none'
    return resolved.value.access.canWrite ? 'write' : 'read'
  }

  for (const kind of ['private', 'public', 'read-only', 'deleted'] as const) {
    for (const who of ['owner', 'editor', 'viewer', 'stranger'] as const) {
      const expected = EXPECTED[kind][who]
      test(`${who} on a ${kind} document: ${expected} (read+write token), ${expected === 'write' ? 'read' : expected} (read token)`, async () => {
        expect(await outcome(who, kind, ['read', 'write'])).toBe(expected)
        expect(await outcome(who, kind, ['read'])).toBe(expected === 'write' ? 'read' : expected)
      })
    }
  }

  test('"no access" and "not found" give the same refusal text', async () => {
    const forbidden = await server.services.documents.resolve(slugs.private, principal('stranger', ['read']))
    const missing = await server.services.documents.resolve('never-existed', principal('stranger', ['read']))
    const deleted = await server.services.documents.resolve(slugs.deleted, principal('owner', ['read']))
    if (forbidden.kind !== 'error' || missing.kind !== 'error' || deleted.kind !== 'error') {
      throw new Error('expected three refusals')
    }
    const norm = (m: string, slug: string) => m.replace(slug, 'SLUG')
    expect(norm(forbidden.message, slugs.private)).toBe(norm(missing.message, 'never-existed'))
    expect(norm(deleted.message, slugs.deleted)).toBe(norm(missing.message, 'never-existed'))
    expect(forbidden.code).toBe(missing.code)
  })

  test('whose: yours, shared with you, another person’s', async () => {
    const whose = async (who: Who) => {
      const r = await server.services.documents.resolve(slugs.public, principal(who, ['read']))
      return r.kind === 'ok' ? r.value.access.whose : null
    }
    expect(await whose('owner')).toBe('yours')
    expect(await whose('editor')).toBe('shared with you')
    expect(await whose('stranger')).toBe("another person's")
  })
})
