/**
 * Issue 27, first increment: every stored change carries who made it, versions say when, who and what,
 * and agents read them through list_versions and changes_since. Real server (PGlite, or PostgreSQL with
 * TEST_DATABASE_URL), real MCP SDK clients over HTTP with named API tokens, a real provider typing.
 */
import { describe, expect, test } from 'bun:test'
import { createDocumentUpdate, FRAGMENT_NAME } from '@collab/doc-schema'
import { Browser, signInAndConsent, TestOAuthProvider } from '@collab/test-support/browser'
import { callText, mcpUrlOf } from '@collab/test-support/mcp'
import { eventually } from '@collab/test-support/server'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import * as Y from 'yjs'
import { diffFragments, fragmentOfState, summarize } from '../documents/history-diff.ts'
import { applyRetention } from '../documents/history-store.ts'
import { MAX_NAMED_VERSIONS, VERSION_RETENTION } from '../limits.ts'
import { agentAppends, editorOnPlan, useHistoryPlan } from './history-support.ts'

const plan = useHistoryPlan()

async function textOf(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  return (await callText(client, name, args)).text
}

function bodyOf(text: string): string[] {
  const lines = text.split('\n')
  const open = lines.findIndex((line) => line.startsWith('⟦data: '))
  const end = lines.indexOf('⟦end of data⟧')
  return lines.slice(open + 1, end)
}

function cursorOf(text: string): string | undefined {
  return /cursor: "([^"]+)"/.exec(text.split('⟦end of data⟧')[1] ?? '')?.[1]
}

describe('attribution and versions', () => {
  test("an agent's write becomes a version naming the user and the token's app", async () => {
    await agentAppends(plan, '## Notes\n\nAdded by the agent.')
    const listed = await eventually(async () => {
      const text = await textOf(plan.ownerClient, 'list_versions', { slug: plan.slug })
      expect(text).toContain("after an agent's write")
      return text
    })
    const line = bodyOf(listed).find((l) => l.includes("after an agent's write"))!
    expect(line).toContain(`olive's agent via API token "ci-bot"`)
    expect(line).toContain('1 added, 0 removed, 0 changed')
    expect(line).toContain('"Notes"')
    // The first version: the server created it for its owner.
    expect(bodyOf(listed).at(-1)).toContain('server (created for olive) · the first version')
  })

  test('a person typing through a provider is attributed, after a pause', async () => {
    const { provider } = await editorOnPlan(plan, 'pat', 'pat desktop')
    try {
      await provider.ready
      const fragment = provider.doc.getXmlFragment(FRAGMENT_NAME)
      // The paragraph under "Intro".
      const paragraph = fragment
        .toArray()
        .find(
          (node) => node instanceof Y.XmlElement && node.toString().includes('Hello there.'),
        ) as Y.XmlElement
      const text = paragraph.get(0) as Y.XmlText
      for (const word of [' Typed', ' by', ' Pat.']) {
        text.insert(text.length, word)
        await Bun.sleep(30)
      }
      const listed = await eventually(async () => {
        const answer = await textOf(plan.ownerClient, 'list_versions', { slug: plan.slug })
        expect(answer).toContain('after a pause in editing')
        return answer
      })
      const line = bodyOf(listed).find((l) => l.includes('after a pause in editing'))!
      expect(line).toContain('pat (editor via API token "pat desktop")')
      expect(line).toContain('0 added, 0 removed, 1 changed')
    } finally {
      provider.destroy()
    }
    // Stored per append with its authors, not per keystroke.
    const rows = await plan.server.services.db.prisma.$queryRaw<Array<{ authors: unknown }>>`
      SELECT v.authors FROM document_versions v JOIN documents d ON d.id = v.document_id
       WHERE d.room = ${plan.room} AND v.reason = 'pause'`
    expect(rows.length).toBeGreaterThan(0)
  })

  test('list_versions paged to the end shows every version once, newest first', async () => {
    const whole = await textOf(plan.ownerClient, 'list_versions', { slug: plan.slug })
    const total = Number(/^versions: (\d+)$/m.exec(whole)![1])
    expect(total).toBeGreaterThanOrEqual(3)
    const ids: number[] = []
    let cursor: string | undefined
    for (let page = 0; page < total + 1; page++) {
      const text = await textOf(plan.ownerClient, 'list_versions', {
        slug: plan.slug,
        limit: 1,
        ...(cursor ? { cursor } : {}),
      })
      for (const line of bodyOf(text)) ids.push(Number(/^version (\d+)/.exec(line)![1]))
      cursor = cursorOf(text)
      if (!cursor) {
        expect(text).toContain('No older versions')
        break
      }
    }
    expect(ids.length).toBe(total)
    expect(new Set(ids).size).toBe(total)
    expect([...ids].sort((a, b) => b - a)).toEqual(ids)
  })

  test('a page of versions and its counts come from one read, equal to each read apart', async () => {
    const { documents } = plan.server.services
    const row = await plan.server.services.db.prisma.document.findUnique({ where: { slug: plan.slug } })
    const id = row!.id
    const all = await documents.listVersions(id, { limit: 100 })
    expect(all.length).toBeGreaterThanOrEqual(3)
    const before = all[1]!.id
    const page = await documents.listVersionsCounted(id, { before, limit: 1 })
    expect(page.versions).toEqual(await documents.listVersions(id, { before, limit: 1 }))
    expect(page.total).toBe(all.length)
    expect(page.newer).toBe(2) // versions 0 and 1 of the newest-first list are at or after `before`
    const past = await documents.listVersionsCounted(id, { before: all.at(-1)!.id, limit: 5 })
    expect(past).toEqual({ versions: [], total: all.length, newer: all.length })
  })

  test('changes_since paged by a small max_chars shows every change line once', async () => {
    const listed = await textOf(plan.ownerClient, 'list_versions', { slug: plan.slug })
    const first = Number(/^version (\d+)/.exec(bodyOf(listed).at(-1)!)![1])
    const whole = await textOf(plan.ownerClient, 'changes_since', { slug: plan.slug, since_version: first })
    expect(whole).toContain('changes: 1 sections added, 0 removed, 1 changed')
    const wholeBody = bodyOf(whole)
    expect(wholeBody[0]).toContain(`olive's agent via API token "ci-bot"`)
    expect(wholeBody[0]).toContain('pat (editor via API token "pat desktop")')
    expect(wholeBody.join('\n')).toContain('+ [1] Hello there. Typed by Pat.')
    expect(wholeBody.join('\n')).toContain('- [1] Hello there.')
    // Paged: 40 characters a call, continued by the cursor each answer names, to the end.
    let joined = ''
    let cursor: string | undefined
    let calls = 0
    do {
      const text = await textOf(plan.ownerClient, 'changes_since', {
        slug: plan.slug,
        max_chars: 40,
        ...(cursor ? { cursor } : { since_version: first }),
      })
      const body = bodyOf(text).join('\n')
      joined += joined === '' ? body : `\n${body}`
      cursor = cursorOf(text)
      calls++
    } while (cursor && calls < 500)
    expect(cursor).toBeUndefined()
    // Each page ends on a line or continues inside one ("…" marks the continuation): put back together,
    // the pages hold exactly the lines of the whole answer, each once.
    expect(joined.replaceAll('\n…', '')).toBe(wholeBody.join('\n'))
  })

  test('changes_since by time and by a section rev finds the version to start from', async () => {
    const byTime = await textOf(plan.ownerClient, 'changes_since', {
      slug: plan.slug,
      since_time: new Date().toISOString(),
    })
    expect(byTime).toMatch(/^since: version \d+/)
    const tooEarly = await textOf(plan.ownerClient, 'changes_since', {
      slug: plan.slug,
      since_time: '2000-01-01T00:00:00Z',
    })
    expect(tooEarly).toContain('since_time: no version of')
    // The rev an agent's write answered is in the version taken after it: changes since then are none.
    const wrote = (await agentAppends(plan, '## Later\n\nMore.')).text
    const rev = /^rev: (\S+)$/m.exec(wrote)![1]!
    const sinceRev = await eventually(async () => {
      const text = await textOf(plan.ownerClient, 'changes_since', { slug: plan.slug, since_rev: rev })
      expect(text).toMatch(/^since: version \d+/)
      return text
    })
    const newestId = /^version (\d+)/.exec(
      bodyOf(await textOf(plan.ownerClient, 'list_versions', { slug: plan.slug }))[0]!,
    )![1]
    expect(sinceRev).toContain(`since: version ${newestId} `)
    expect(sinceRev).toContain('No changes since')
    const unknownRev = await textOf(plan.ownerClient, 'changes_since', {
      slug: plan.slug,
      since_rev: 'ffffffffffffffff',
    })
    expect(unknownRev).toContain('since_rev: no kept version')
    const newest = await textOf(plan.ownerClient, 'changes_since', { slug: plan.slug })
    expect(newest).toContain(
      `since: version ${/^version (\d+)/m.exec(bodyOf(await textOf(plan.ownerClient, 'list_versions', { slug: plan.slug }))[0]!)![1]} `,
    )
    const two = await textOf(plan.ownerClient, 'changes_since', {
      slug: plan.slug,
      since_version: 1,
      since_time: '2026-01-01T00:00:00Z',
    })
    expect(two).toContain(
      'pass at most one of since_version, since_time, since_rev or cursor (got since_version, since_time)',
    )
  })
})

describe('attribution through OAuth', () => {
  test("an OAuth app's write names the app as the person registered it", async () => {
    const password = 'correct horse battery staple'
    const set = await plan.server.auth.accounts.setPassword(plan.owner.user.id, password)
    if (set.kind === 'error') throw new Error(set.message)
    const url = new URL(mcpUrlOf(plan.server))
    const provider = new TestOAuthProvider('http://127.0.0.1:33418/callback', 'Notes Helper')
    const first = new Client({ name: 'history-test', version: '1.0.0' })
    await expect(
      first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })),
    ).rejects.toThrow(UnauthorizedError)
    const back = await signInAndConsent(
      new Browser(plan.server.url),
      provider.authorizationUrl!,
      { handle: 'olive', password },
      { access: 'read write' },
    )
    await new StreamableHTTPClientTransport(url, { authProvider: provider }).finishAuth(
      back.searchParams.get('code')!,
    )
    const app = new Client({ name: 'history-test', version: '1.0.0' })
    await app.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
    try {
      await textOf(app, 'append_to_document', { slug: plan.slug, markdown: 'Written through OAuth.' })
      const listed = await eventually(async () => {
        const text = await textOf(plan.ownerClient, 'list_versions', { slug: plan.slug })
        expect(bodyOf(text)[0]).toContain(`olive's agent via OAuth app "Notes Helper"`)
        return text
      })
      expect(bodyOf(listed)[0]).toContain("after an agent's write")
    } finally {
      await app.close()
    }
  })
})

describe('retention', () => {
  test('thins 40 days of versions to the tiers, keeps named ones, and hands dropped authors on', async () => {
    const created = await plan.server.services.documents.create(plan.owner.user.id, { title: 'Thinned' })
    if (created.kind === 'error') throw new Error(created.message)
    const id = created.value.id
    const prisma = plan.server.services.db.prisma
    const now = Math.floor(Date.now() / 1000) * 1000
    // A version every 10 minutes for 40 days (5760), each by author "a<n>"; every 500th is named.
    await prisma.$executeRaw`
      INSERT INTO document_versions (document_id, state, byte_size, reason, name, authors, created_at)
      SELECT ${id}::uuid, '\\x00'::bytea, 1, 'pause', CASE WHEN n % 500 = 0 THEN 'name ' || n END,
             jsonb_build_array(jsonb_build_object('k', 'person', 'v', 'editor', 'u', 'a' || n)),
             to_timestamp(${Math.floor(now / 1000)}::float8 - n * 600)
        FROM generate_series(1, 5760) AS n`
    // The author of a version 3 h 5 min old: not the newest of its hour, so thinned away.
    const dropped = `a${Math.round((3 * 3600 + 5 * 60) / 600)}`
    // One run over all of them (in production each new version drops a few): a longer transaction.
    await prisma.$transaction((tx) => applyRetention(tx, id, now), { timeout: 60_000 })
    const kept = await prisma.$queryRaw<
      Array<{ name: string | null; authors: Array<{ u: string }>; createdAt: Date }>
    >`
      SELECT name, authors, created_at AS "createdAt" FROM document_versions
       WHERE document_id = ${id}::uuid ORDER BY created_at DESC`
    const [recent, hourly, daily] = VERSION_RETENTION
    const unnamed = kept.filter((v) => v.name === null)
    const bound =
      recent!.youngerThanMs / 600_000 +
      hourly!.youngerThanMs / hourly!.everyMs +
      daily!.youngerThanMs / daily!.everyMs +
      2
    expect(unnamed.length).toBeLessThanOrEqual(bound)
    expect(unnamed.length).toBeGreaterThan(bound - 10)
    // Named versions stay past the tiers (11 of them, under MAX_NAMED_VERSIONS).
    expect(kept.filter((v) => v.name !== null).length).toBe(Math.min(11, MAX_NAMED_VERSIONS))
    expect(kept.every((v) => v.name !== null || now - v.createdAt.getTime() < daily!.youngerThanMs)).toBe(
      true,
    )
    // Nobody's change loses its name: the dropped version's author is on a kept one.
    expect(kept.some((v) => v.authors.some((a) => a.u === dropped))).toBe(true)
  })
})

describe('comparison', () => {
  function fragmentOf(markdown: string) {
    const built = createDocumentUpdate('Doc', markdown)
    if (built.kind === 'error') throw new Error(built.message)
    return fragmentOfState(built.value)
  }

  test('sections added, removed and changed, with the blocks and characters that differ', () => {
    const before = fragmentOf('## Keep\n\nSame.\n\n## Edit\n\nOld words here.\n\n## Drop\n\nGone soon.\n')
    // Same heading ids: the second state is the first with edits applied to its own fragment's copy.
    const after = fragmentOfState(Y.encodeStateAsUpdate(before.doc!))
    const edited = after.toArray()[4] as Y.XmlElement // "Old words here." under "Edit"
    ;(edited.get(0) as Y.XmlText).insert(4, 'new ')
    after.delete(5, 2) // "## Drop" and its paragraph
    const changes = diffFragments(before, after)
    expect(changes.map((c) => [c.kind, c.title])).toEqual([
      ['changed', 'Edit'],
      ['removed', 'Drop'],
    ])
    expect(changes[0]!.blocks).toEqual([
      { op: '-', block: 1, text: 'Old words here.' },
      { op: '+', block: 1, text: 'Old new words here.' },
    ])
    expect([changes[0]!.charsIn, changes[0]!.charsOut]).toEqual([4, 0])
    expect(summarize(changes)).toMatchObject({ added: 0, removed: 1, changed: 1, charsIn: 4, charsOut: 17 })
  })

  test('past MAX_DIFF_RENDER_CHARS sections are named, not compared', () => {
    const before = fragmentOf('## A\n\nOne.\n')
    const after = fragmentOf('## B\n\nTwo, a longer paragraph.\n\n## C\n\nThree.\n')
    const changes = diffFragments(before, after, 20)
    expect(changes.filter((c) => !c.compared).length).toBeGreaterThan(0)
    // Built apart, even the title headings have other ids: every section is added or removed.
    expect(changes.map((c) => c.kind).sort()).toEqual(['added', 'added', 'added', 'removed', 'removed'])
  })
})
