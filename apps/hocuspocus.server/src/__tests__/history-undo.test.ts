/**
 * Issue 27, second increment: the history panel's REST routes (http/api-history.ts), restoring a version
 * and reverting changes (documents/history-undo.ts) through MCP and REST. Real server (PGlite, or
 * PostgreSQL with TEST_DATABASE_URL), real MCP SDK clients with named API tokens, a real provider typing.
 */
import { beforeAll, describe, expect, test } from 'bun:test'
import { callText, connectClient, mcpUrlOf } from '@collab/test-support/mcp'
import { eventually, useTestServer } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../server.ts'

let server: RunningServer
useTestServer(
  (s) => {
    server = s
  },
  { versionMinIntervalMs: 0, versionPauseMs: 150 },
)

async function userWithLabelledToken(handle: string, label: string) {
  const user = await server.services.users.add(handle)
  if (user.kind === 'error') throw new Error(user.message)
  const issued = await server.services.tokens.issue(user.value.id, { scopes: ['read', 'write'], label })
  if (issued.kind === 'error') throw new Error(issued.message)
  return { user: user.value, token: issued.value.token }
}

async function api(path: string, token: string, init: RequestInit = {}) {
  const response = await fetch(`${server.url}/api${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
  })
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

let owner: { user: { id: string }; token: string }
let ownerClient: Client
let agentClient: Client
let slug: string

beforeAll(async () => {
  owner = await userWithLabelledToken('olive', 'olive laptop')
  const agentToken = await server.services.tokens.issue(owner.user.id, {
    scopes: ['read', 'write'],
    label: 'ci-bot',
  })
  if (agentToken.kind === 'error') throw new Error(agentToken.message)
  ownerClient = await connectClient(mcpUrlOf(server), owner.token)
  agentClient = await connectClient(mcpUrlOf(server), agentToken.value.token)
  const created = await server.services.documents.create(owner.user.id, {
    title: 'Plan',
    markdown: '## Intro\n\nHello there.\n\n## Body\n\nFirst paragraph.\n\nSecond paragraph.\n',
  })
  if (created.kind === 'error') throw new Error(created.message)
  slug = created.value.slug
}, 60_000)

describe('REST for the history panel: reads', () => {
  test('versions list names the agent and its app, newest first, paged by cursor', async () => {
    await callText(agentClient, 'append_to_document', { slug, markdown: '## Notes\n\nAdded by the agent.' })
    const listed = await eventually(async () => {
      const got = await api(`/documents/${slug}/versions`, owner.token)
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
        `/documents/${slug}/versions?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        owner.token,
      )
      ids.push(...page.body.versions.map((v: { id: string }) => v.id))
      cursor = page.body.nextCursor
    } while (cursor && ids.length <= listed.total)
    expect(ids).toEqual(listed.versions.map((v: { id: string }) => v.id))
    expect(ids.length).toBe(listed.total)
  })

  test('a version preview is its Markdown; changes from it to now name the section and blocks', async () => {
    const listed = await api(`/documents/${slug}/versions`, owner.token)
    const first = listed.body.versions.at(-1)
    const preview = await api(`/documents/${slug}/versions/${first.id}`, owner.token)
    expect(preview.status).toBe(200)
    expect(preview.body.complete).toBe(true)
    expect(preview.body.markdown).toContain('Hello there.')
    expect(preview.body.markdown).not.toContain('Added by the agent.')
    const changes = await api(`/documents/${slug}/versions/${first.id}/changes`, owner.token)
    expect(changes.status).toBe(200)
    expect(changes.body.counts).toMatchObject({ added: 1, removed: 0, changed: 0 })
    expect(changes.body.sections[0]).toMatchObject({ kind: 'added', title: 'Notes', compared: true })
    expect(changes.body.sections[0].blocks).toContainEqual({ op: '+', block: 1, text: 'Added by the agent.' })
    expect(changes.body.authors).toContainEqual(expect.objectContaining({ kind: 'agent', app: 'ci-bot' }))
  })

  test('unknown versions, bad ids and other people are refused, naming what is wrong', async () => {
    const missing = await api(`/documents/${slug}/versions/999999`, owner.token)
    expect(missing.status).toBe(404)
    expect(missing.body.message).toContain('no version 999999')
    const bad = await api(`/documents/${slug}/versions?cursor=abc`, owner.token)
    expect(bad.status).toBe(400)
    expect(bad.body.field).toBe('cursor')
    const stranger = await userWithLabelledToken('sam', 'sam laptop')
    const hidden = await api(`/documents/${slug}/versions`, stranger.token)
    expect(hidden.status).toBe(404)
  })
})
