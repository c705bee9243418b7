/**
 * Issue 27, second increment: the history panel's REST routes (http/api-history.ts), restoring a version
 * and reverting changes (documents/history-undo.ts) through MCP and REST. Real server (PGlite, or
 * PostgreSQL with TEST_DATABASE_URL), real MCP SDK clients with named API tokens, a real provider typing.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import {
  appendMarkdown,
  createDocumentUpdate,
  documentToMarkdown,
  FRAGMENT_NAME,
  ok,
  type Result,
} from '@collab/doc-schema'
import { callText } from '@collab/test-support/mcp'
import { connectProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { type HistoryActionDeps, revertAuthor, revertVersion } from '../documents/history-actions.ts'
import type { Author } from '../documents/history-authors.ts'
import { tooLarge, type UndoInput } from '../documents/history-undo.ts'
import { WorkerPool } from '../documents/worker/pool.ts'
import { MAX_HISTORY_STATE_BYTES } from '../limits.ts'
import { agentAppends, editorOnPlan, useHistoryPlan, userWithLabelledToken } from './history-support.ts'

const plan = useHistoryPlan()

async function api(path: string, token: string, init: RequestInit = {}) {
  const response = await fetch(`${plan.server.url}/api${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

describe('REST for the history panel: reads', () => {
  test('versions list names the agent and its app, newest first, paged by cursor', async () => {
    await agentAppends(plan, '## Notes\n\nAdded by the agent.')
    const listed = await eventually(async () => {
      const got = await api(`/documents/${plan.slug}/versions`, plan.owner.token)
      expect(got.status).toBe(200)
      expect(got.body.versions[0].reason).toBe('agent')
      return got.body
    })
    const newest = listed.versions[0]
    expect(newest.kind).toBe('auto')
    expect(newest.authors).toContainEqual(
      expect.objectContaining({ kind: 'agent', name: 'olive', app: 'ci-bot', via: 'token' }),
    )
    expect(newest.summary).toMatchObject({ added: 1, removed: 0, changed: 0 })
    expect(newest.summary.sections[0]).toMatchObject({ kind: 'added', title: 'Notes' })
    expect(listed.versions.at(-1).reason).toBe('created')
    // One a page, to the end: every version once.
    const ids: string[] = []
    let cursor: string | null = null
    do {
      const page: { body: Record<string, any> } = await api(
        `/documents/${plan.slug}/versions?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        plan.owner.token,
      )
      ids.push(...page.body.versions.map((v: { id: string }) => v.id))
      cursor = page.body.nextCursor
    } while (cursor && ids.length <= listed.total)
    expect(ids).toEqual(listed.versions.map((v: { id: string }) => v.id))
    expect(ids.length).toBe(listed.total)
  })

  test('a version preview is its Markdown; changes from it to now name the section and blocks', async () => {
    const listed = await api(`/documents/${plan.slug}/versions`, plan.owner.token)
    const first = listed.body.versions.at(-1)
    const preview = await api(`/documents/${plan.slug}/versions/${first.id}`, plan.owner.token)
    expect(preview.status).toBe(200)
    expect(preview.body.complete).toBe(true)
    expect(preview.body.markdown).toContain('Hello there.')
    expect(preview.body.markdown).not.toContain('Added by the agent.')
    const changes = await api(`/documents/${plan.slug}/versions/${first.id}/changes`, plan.owner.token)
    expect(changes.status).toBe(200)
    expect(changes.body.counts).toMatchObject({ added: 1, removed: 0, changed: 0 })
    expect(changes.body.sections[0]).toMatchObject({ kind: 'added', title: 'Notes', compared: true })
    expect(changes.body.sections[0].blocks).toContainEqual({ op: '+', block: 1, text: 'Added by the agent.' })
    expect(changes.body.authors).toContainEqual(expect.objectContaining({ kind: 'agent', app: 'ci-bot' }))
  })

  test('unknown versions, bad ids and other people are refused, naming what is wrong', async () => {
    const missing = await api(`/documents/${plan.slug}/versions/999999`, plan.owner.token)
    expect(missing.status).toBe(404)
    expect(missing.body.message).toContain('no version 999999')
    const bad = await api(`/documents/${plan.slug}/versions?cursor=abc`, plan.owner.token)
    expect(bad.status).toBe(400)
    expect(bad.body.field).toBe('cursor')
    const stranger = await userWithLabelledToken(plan.server, 'sam', 'sam laptop')
    const hidden = await api(`/documents/${plan.slug}/versions`, stranger.token)
    expect(hidden.status).toBe(404)
  })
})

/** The newest version whose reason is `reason` (REST list), once there is one newer than `after`. */
/** The newest version taken for `reason` after version `after`. */
async function newestVersion(reason: string, after = 0): Promise<Record<string, any>> {
  return eventually(async () => {
    const got = await api(`/documents/${plan.slug}/versions`, plan.owner.token)
    const found = got.body.versions.find((v: { reason: string }) => v.reason === reason)
    expect(found).toBeDefined()
    expect(Number(found.id)).toBeGreaterThan(after)
    return found
  }, 40_000) // taken on the documents' worker, which may start cold (see versionWithChangesBy)
}

/**
 * The newest version after version `after` that holds changes by `app`: the version an app's write landed
 * in. Not found by its reason: a pause version of a person's typing just before may be taken after the
 * write and hold it, leaving the "after an agent's write" version with nothing to undo.
 */
async function versionWithChangesBy(app: string, after: number): Promise<Record<string, any>> {
  // Versions are taken by a compaction on the documents' worker, which may first start a worker (seconds,
  // cold, on a loaded machine): a generous wait, where 10 s timed out once in a clean-clone PostgreSQL run.
  return eventually(async () => {
    const got = await api(`/documents/${plan.slug}/versions`, plan.owner.token)
    const found = got.body.versions.find(
      (v: { id: string; authors: Array<{ app?: string }>; summary: { charsIn: number } | null }) =>
        Number(v.id) > after && v.authors.some((a) => a.app === app) && (v.summary?.charsIn ?? 0) > 0,
    )
    expect(found).toBeDefined()
    return found
  }, 40_000)
}

function paragraphWith(doc: Y.Doc, text: string): Y.XmlText {
  // The first paragraph holding `text`.
  const element = doc
    .getXmlFragment(FRAGMENT_NAME)
    .toArray()
    .find((node) => node instanceof Y.XmlElement && node.toString().includes(text)) as Y.XmlElement
  return element.get(0) as Y.XmlText
}

/** The document now: the live one when loaded, else the stored content (the export), trimmed. */
async function liveMarkdown(): Promise<string> {
  const live = plan.server.collab.hocuspocus.documents.get(plan.room)
  if (live) return documentToMarkdown(live.getXmlFragment(FRAGMENT_NAME)).trim()
  const exported = await fetch(`${plan.server.url}/api/documents/${plan.slug}/markdown`, {
    headers: { authorization: `Bearer ${plan.owner.token}` },
  })
  return (await exported.text()).trim()
}

describe('revert and restore', () => {
  test("the owner reverts an agent's version while a person types; the person's text stays", async () => {
    const { provider } = await editorOnPlan(plan, 'pat', 'pat desktop')
    try {
      await provider.ready
      const before = await newestVersion('agent')
      // The agent's change: a new paragraph in Body, and a word into its first paragraph.
      await agentAppends(plan, 'Agent paragraph.')
      const agentVersion = await versionWithChangesBy('ci-bot', Number(before.id))
      expect(agentVersion.authors).toEqual([
        expect.objectContaining({ kind: 'agent', name: 'olive', app: 'ci-bot' }),
      ])
      // Who and which app, as the owner's agent reads it.
      const listed = (await callText(plan.ownerClient, 'list_versions', { slug: plan.slug })).text
      expect(listed).toContain(`version ${agentVersion.id} `)
      expect(listed).toContain(`olive's agent via API token "ci-bot"`)
      // The person types into Intro while the revert runs.
      const intro = paragraphWith(provider.doc, 'Hello there.')
      const words = [' One', ' two', ' three', ' four', ' five', ' six']
      let typed = 0
      const typing = (async () => {
        for (const word of words) {
          intro.insert(intro.length, word)
          typed++
          await Bun.sleep(15)
        }
      })()
      const reverted = await callText(plan.ownerClient, 'revert_changes', {
        slug: plan.slug,
        version_id: Number(agentVersion.id),
      })
      await typing
      expect(reverted.isError).toBeFalsy()
      expect(reverted.text).toContain(`reverted: the changes of version ${agentVersion.id}`)
      expect(typed).toBe(words.length)
      const expected = `Hello there.${words.join('')}`
      await eventually(async () => {
        const markdown = await liveMarkdown()
        expect(markdown).toContain(expected)
        expect(markdown).not.toContain('Agent paragraph.')
        // The person's editor converges on the same content.
        expect(documentToMarkdown(provider.doc.getXmlFragment(FRAGMENT_NAME)).trim()).toBe(markdown)
      })
      // Earlier changes by the agent (the Notes section) were not part of that version: they stay.
      expect(await liveMarkdown()).toContain('Added by the agent.')
      // History names the revert and its author.
      const after = (await callText(plan.ownerClient, 'list_versions', { slug: plan.slug })).text
      expect(after).toContain(`"Before revert of version ${agentVersion.id}"`)
      await eventually(async () => {
        const text = (await callText(plan.ownerClient, 'list_versions', { slug: plan.slug })).text
        expect(text).toContain('olive\'s agent via API token "olive laptop", reverting changes')
      })
    } finally {
      provider.destroy()
    }
  })

  test('a revert where someone changed the same block since is refused, naming the block', async () => {
    const before = await newestVersion('agent')
    await agentAppends(plan, 'Agent draft sentence.')
    const agentVersion = await versionWithChangesBy('ci-bot', Number(before.id))
    const pat = await plan.server.services.users.byHandle('pat')
    if (pat.kind === 'error') throw new Error(pat.message)
    const person = await plan.server.services.tokens.issue(pat.value.id, {
      scopes: ['read', 'write'],
      label: 'pat laptop',
    })
    if (person.kind === 'error') throw new Error(person.message)
    const provider = connectProvider(plan.server.url, plan.room, person.value.token)
    try {
      await provider.ready
      paragraphWith(provider.doc, 'Agent draft sentence.').insert(5, ' (edited by Pat)')
      await eventually(async () =>
        expect(await liveMarkdown()).toContain('Agent (edited by Pat) draft sentence.'),
      )
      const markdown = await liveMarkdown()
      const refused = await callText(plan.ownerClient, 'revert_changes', {
        slug: plan.slug,
        version_id: Number(agentVersion.id),
      })
      expect(refused.isError, refused.text).toBe(true)
      expect(refused.text).toContain(
        'version_id: 1 block these changes touched was changed since by someone else',
      )
      expect(refused.text).toMatch(
        /section "Notes" \[section_id: [\w-]+\] block \d+ \("Agent \(edited by Pat\) draft/,
      )
      // Nothing changed.
      expect(await liveMarkdown()).toBe(markdown)
    } finally {
      provider.destroy()
    }
  })

  test("restoring a version makes the content its Markdown, and restoring the 'before' version undoes it", async () => {
    const listed = await api(`/documents/${plan.slug}/versions`, plan.owner.token)
    const first = listed.body.versions.at(-1)
    const preview = await api(`/documents/${plan.slug}/versions/${first.id}`, plan.owner.token)
    const now = await liveMarkdown()
    const restored = await callText(plan.ownerClient, 'restore_version', {
      slug: plan.slug,
      version_id: Number(first.id),
    })
    expect(restored.isError).toBeFalsy()
    const beforeId = Number(/^before_version: (\d+)/m.exec(restored.text)![1])
    await eventually(async () => expect(await liveMarkdown()).toBe(preview.body.markdown.trim()))
    // Stored too: the export reads the stored content.
    await eventually(async () => {
      const exported = await fetch(`${plan.server.url}/api/documents/${plan.slug}/markdown`, {
        headers: { authorization: `Bearer ${plan.owner.token}` },
      })
      expect((await exported.text()).trim()).toBe(preview.body.markdown.trim())
    })
    // Undo the restore through REST.
    const undone = await api(`/documents/${plan.slug}/versions/${beforeId}/restore`, plan.owner.token, {
      method: 'POST',
    })
    expect(undone.status).toBe(200)
    expect(undone.body).toMatchObject({ restored: String(beforeId), changed: true })
    await eventually(async () => expect(await liveMarkdown()).toBe(now))
  })

  test("reverting one agent's changes since a version, through REST; refusals name what is wrong", async () => {
    const start = await newestVersion('named')
    await agentAppends(plan, '## Agent section\n\nBy the bot.')
    await newestVersion('agent', Number(start.id))
    expect(await liveMarkdown()).toContain('By the bot.')
    const reverted = await api(`/documents/${plan.slug}/revert`, plan.owner.token, {
      method: 'POST',
      body: JSON.stringify({ versionId: start.id, author: 'olive', app: 'ci-bot' }),
    })
    expect(reverted.status).toBe(200)
    expect(reverted.body.changed).toBe(true)
    expect(reverted.body.reverted.length).toBeGreaterThan(0)
    await eventually(async () => expect(await liveMarkdown()).not.toContain('By the bot.'))
    // Refusals: no such version, no write access, a bad body.
    const missing = await callText(plan.ownerClient, 'restore_version', {
      slug: plan.slug,
      version_id: 999999,
    })
    expect(missing.isError).toBe(true)
    expect(missing.text).toContain('version_id: no version 999999')
    const viewer = await userWithLabelledToken(plan.server, 'vera', 'vera laptop')
    await plan.server.services.documents.share(plan.slug, viewer.user.id, 'viewer')
    const forbidden = await api(`/documents/${plan.slug}/versions/${start.id}/restore`, viewer.token, {
      method: 'POST',
    })
    expect(forbidden.status).toBe(403)
    const bad = await api(`/documents/${plan.slug}/revert`, plan.owner.token, {
      method: 'POST',
      body: JSON.stringify({ versionId: start.id, app: 'ci-bot' }),
    })
    expect(bad.status).toBe(400)
    expect(bad.body.field).toBe('app')
  })
})

describe("an author's revert since a time", () => {
  test("reverting one agent's changes since a time takes out what it wrote after it", async () => {
    const start = await newestVersion('named')
    await Bun.sleep(20)
    const since = new Date().toISOString()
    await agentAppends(plan, '## Timed\n\nWritten after the time.')
    await versionWithChangesBy('ci-bot', Number(start.id))
    const reverted = await callText(plan.ownerClient, 'revert_changes', {
      slug: plan.slug,
      author: 'olive',
      app: 'ci-bot',
      since_time: since,
    })
    expect(reverted.isError, reverted.text).toBeFalsy()
    expect(reverted.text).toContain(`reverted: olive's changes through "ci-bot" in versions`)
    await eventually(async () => expect(await liveMarkdown()).not.toContain('Written after the time.'))
  })

  test('since_time is refused without author, beside version_id, when not a time; one of the two is needed', async () => {
    const refusal = async (args: Record<string, unknown>) => {
      const answer = await callText(plan.ownerClient, 'revert_changes', { slug: plan.slug, ...args })
      expect(answer.isError).toBe(true)
      return answer.text
    }
    const at = '2026-12-01T09:30:00Z'
    expect(await refusal({ since_time: at })).toContain('since_time: only with author')
    expect(await refusal({ author: 'olive', since_time: at, version_id: 1 })).toContain(
      'since_time: pass version_id or since_time, not both.',
    )
    expect(await refusal({ author: 'olive' })).toContain('version_id: with author, pass version_id')
    expect(await refusal({})).toContain('version_id: the version whose changes to undo')
    expect(await refusal({ author: 'olive', since_time: 'yesterday' })).toContain(
      'since_time: "yesterday" is not an ISO 8601 time; pass one such as 2026-12-01T09:30:00Z',
    )
    // REST: the same rules, in its field names.
    const rest = await api(`/documents/${plan.slug}/revert`, plan.owner.token, {
      method: 'POST',
      body: JSON.stringify({ sinceTime: at }),
    })
    expect(rest.status).toBe(400)
    expect(rest.body.field).toBe('sinceTime')
    const badTime = await api(`/documents/${plan.slug}/revert`, plan.owner.token, {
      method: 'POST',
      body: JSON.stringify({ author: 'olive', sinceTime: 'soon' }),
    })
    expect(badTime.status).toBe(400)
    expect(badTime.body.message).toContain('sinceTime: "soon" is not an ISO 8601 time')
  })
})

describe("an author's revert, on the documents' own path (versions in memory, a local live document)", () => {
  const agent: Author = { k: 'agent', u: 'u1', h: 'olive', v: 'token', a: 'ci-bot' }
  const person: Author = { k: 'person', u: 'u2', h: 'pat', v: 'editor' }
  const owner = { user: 'u0', context: {} }
  /** The documents' worker, as the server runs it: the edit is worked out there. */
  const pool = new WorkerPool()
  afterAll(() => pool.close())

  /** `meanwhile`: run after the worker answered, before the edit is applied (someone typing then). */
  function setup(meanwhile: () => void = () => {}) {
    const live = new Y.Doc()
    const created = createDocumentUpdate('Plan', '## Intro\n\nHello there.\n')
    if (created.kind === 'error') throw new Error(created.message)
    Y.applyUpdate(live, created.value)
    const fragment = live.getXmlFragment(FRAGMENT_NAME)
    const versions: Array<{ id: bigint; authors: Author[]; state: Uint8Array }> = []
    let saved = 0
    const take = (authors: Author[]) =>
      versions.push({ id: BigInt(versions.length + 1), authors, state: Y.encodeStateAsUpdate(live) })
    take([])
    const row = (v: (typeof versions)[number]) => ({
      ...v,
      createdAt: new Date(0),
      reason: 'agent' as const,
      name: null,
      summary: null,
      byteSize: v.state.byteLength,
    })
    const deps: HistoryActionDeps = {
      history: {
        findVersion: async (_id, lookup) => {
          const found =
            'id' in lookup
              ? versions.find((v) => v.id === lookup.id)
              : 'before' in lookup
                ? versions.findLast((v) => v.id < lookup.before)
                : undefined
          return found ? row(found) : null
        },
        versionsAfter: async (_id, since, limit) =>
          versions
            .filter((v) => 'afterId' in since && v.id > since.afterId)
            .slice(0, limit)
            .map(row),
      },
      write: async <T>(
        _room: string,
        _context: Record<string, unknown>,
        edit: (f: Y.XmlFragment) => Result<T>,
      ) => {
        let result: Result<T> | undefined
        live.transact(() => {
          result = edit(fragment)
        })
        return result!
      },
      saveBefore: async () => {
        saved++
        return ok({ id: 1000n, state: Y.encodeStateAsUpdate(live) })
      },
      planUndo: async (user: string, input: UndoInput) => {
        const planned = await pool.undo(user, input)
        meanwhile()
        return planned
      },
    }
    const document = { id: 'd1', slug: 'plan', room: 'r1' } as never
    return { live, fragment, take, deps, document, savedVersions: () => saved }
  }

  test("undoes the agent's versions on either side of a person's, keeping the person's text", async () => {
    const { fragment, take, deps, document } = setup()
    appendMarkdown(fragment, 'Agent one.')
    take([agent])
    paragraphWith(fragment.doc!, 'Hello there.').insert(12, ' Pat was here.')
    take([person])
    appendMarkdown(fragment, 'Agent two.')
    take([agent])
    const done = await revertAuthor(
      deps,
      document,
      { handle: 'olive', app: 'ci-bot' },
      { versionId: 1n },
      owner,
    )
    expect(done).toMatchObject({ kind: 'ok', value: { changed: true, reverted: [2n, 4n] } })
    const markdown = documentToMarkdown(fragment)
    expect(markdown).toContain('Hello there. Pat was here.')
    expect(markdown).not.toContain('Agent one.')
    expect(markdown).not.toContain('Agent two.')
  })

  test('refuses a version that mixes the author with someone else, naming it', async () => {
    const { fragment, take, deps, document, savedVersions } = setup()
    appendMarkdown(fragment, 'Agent one.')
    take([agent, person])
    const before = documentToMarkdown(fragment)
    const done = await revertAuthor(deps, document, { handle: 'olive' }, { versionId: 1n }, owner)
    expect(done.kind).toBe('error')
    if (done.kind !== 'error') return
    expect(done.code).toBe('conflict')
    expect(done.message).toContain("author: olive's changes share a version with other people's")
    expect(done.message).toContain(
      `version 2 (1970-01-01T00:00:00.000Z: olive's agent via API token "ci-bot"; pat (editor))`,
    )
    expect(documentToMarkdown(fragment)).toBe(before)
    // Refused on what was kept: no "Before revert" version is left behind.
    expect(savedVersions()).toBe(0)
  })

  /** The agent's paragraph appended as version 2, and a person's edit run while its revert is worked out. */
  async function revertWhile(edit: (doc: Y.Doc) => void) {
    let doc: Y.Doc | undefined
    const { fragment, take, deps, document } = setup(() => edit(doc!))
    doc = fragment.doc!
    appendMarkdown(fragment, 'Agent one.')
    take([agent])
    return { fragment, done: await revertVersion(deps, document, 2n, owner) }
  }

  test("someone typing meanwhile into the block the worker's edit deletes: refused, their text stays", async () => {
    const { fragment, done } = await revertWhile((doc) =>
      paragraphWith(doc, 'Agent one.').insert(5, ' (Pat)'),
    )
    expect(done.kind).toBe('error')
    if (done.kind !== 'error') return
    expect(done.code).toBe('conflict')
    expect(done.message).toMatch(
      /^version_id: 1 block this edit changes was changed by someone else while it was being worked out, .*section "Intro" \[section_id: [\w-]+\] block 2 \("Agent \(Pat\) one\."\)/,
    )
    expect(documentToMarkdown(fragment)).toContain('Agent (Pat) one.')
  })

  test('a deletion meanwhile (no new item, the state vector stays) in that block is refused too', async () => {
    const { fragment, done } = await revertWhile((doc) => paragraphWith(doc, 'Agent one.').delete(0, 6))
    expect(done).toMatchObject({ kind: 'error', code: 'conflict' })
    expect(documentToMarkdown(fragment)).toContain('\none.')
  })

  test("typing meanwhile in another block: the edit is applied, the agent's text goes and theirs stays", async () => {
    const { fragment, done } = await revertWhile((doc) =>
      paragraphWith(doc, 'Hello there.').insert(12, ' Pat.'),
    )
    expect(done).toMatchObject({ kind: 'ok', value: { changed: true, reverted: [2n] } })
    const markdown = documentToMarkdown(fragment)
    expect(markdown).toContain('Hello there. Pat.')
    expect(markdown).not.toContain('Agent one.')
  })

  test('a state over MAX_HISTORY_STATE_BYTES is refused, naming the field and what to do', () => {
    expect(tooLarge(MAX_HISTORY_STATE_BYTES, 'version_id', 'version 3')).toBeNull()
    const refused = tooLarge(MAX_HISTORY_STATE_BYTES + 1, 'version_id', 'version 3')
    expect(refused?.field).toBe('version_id')
    expect(refused?.message).toStartWith(
      `version_id: version 3 holds ${MAX_HISTORY_STATE_BYTES + 1} bytes, over the ${MAX_HISTORY_STATE_BYTES}`,
    )
  })
})
