/**
 * The access matrix, generated: every tool × {owner, editor member, viewer member, stranger} × token
 * {read, read+write, revoked, expired, none} × document {public, private, read-only, deleted}. The
 * expected outcome of every cell comes from ONE table (`expected` below), derived from docs/server.md's
 * access table and each tool's read/write class, and is asserted through real HTTP calls to one server.
 * "No access" and "not found" must read the same.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { FRAME_END } from '../../modules/mcp/render/frame.ts'
import { notFoundMessage } from '../../modules/mcp/tools/open-document.ts'
import type { RunningServer } from '../../server.ts'
import { callText, connectRecording, mcpUrlOf, type RecordingClient } from '../helpers/mcp.ts'
import { userWithToken, useTestServer } from '../helpers/server.ts'
import { reportFigure } from './support.ts'

const ROLES = ['owner', 'editor', 'viewer', 'stranger'] as const
const TOKENS = ['read', 'read+write', 'revoked', 'expired', 'none'] as const
const DOCS = ['public', 'private', 'read-only', 'deleted'] as const
const READ_TOOLS = [
  'get_outline',
  'read_document',
  'find_sections',
  'list_chat_rooms',
  'read_chat_thread',
] as const
const WRITE_TOOLS = ['append_to_document', 'edit_blocks', 'replace_text', 'post_chat_message'] as const
const TOOLS = ['find_documents', 'create_document', ...READ_TOOLS, ...WRITE_TOOLS] as const

type Role = (typeof ROLES)[number]
type TokenKind = (typeof TOKENS)[number]
type DocKind = (typeof DOCS)[number]
type Tool = (typeof TOOLS)[number]
type Expected = 'http 401' | 'absent' | 'ok' | 'listed' | 'not listed' | 'not found' | 'read only'

// ---------- the one table ----------

/** docs/server.md's access table: may this role read / write this document (before the token's scope)? */
function rule(role: Role, doc: DocKind): { read: boolean; write: boolean } {
  if (doc === 'deleted') return { read: false, write: false }
  if (role === 'owner') return { read: true, write: true }
  if (role === 'editor') return { read: true, write: doc !== 'read-only' }
  if (role === 'viewer') return { read: true, write: false }
  return { read: doc === 'public', write: false }
}

/** The expected outcome of one cell. */
export function expected(tool: Tool, role: Role, token: TokenKind, doc: DocKind): Expected {
  if (token === 'none' || token === 'revoked' || token === 'expired') return 'http 401'
  const isWrite = tool === 'create_document' || (WRITE_TOOLS as readonly string[]).includes(tool)
  if (isWrite && token === 'read') return 'absent'
  if (tool === 'create_document') return 'ok'
  const access = rule(role, doc)
  if (tool === 'find_documents') return access.read ? 'listed' : 'not listed'
  if (!access.read) return 'not found'
  if (!isWrite) return 'ok'
  return access.write ? 'ok' : 'read only'
}

// ---------- the server and its principals ----------

let server: RunningServer
useTestServer((s) => {
  server = s
})
const tokens = new Map<string, string>() // `${role}/${token}` → bearer
const clients = new Map<string, RecordingClient>() // `${role}/${token}` for read and read+write
const slugs = new Map<DocKind, string>()
const ids = new Map<DocKind, string>()
let ownerClient: RecordingClient
let cells = 0

beforeAll(async () => {
  const { services } = server
  const users = new Map<Role, string>()
  const handles: Record<Role, string> = { owner: 'olivia', editor: 'eddie', viewer: 'vera', stranger: 'sam' }
  for (const role of ROLES) {
    const rw = await userWithToken(server, handles[role], ['read', 'write'])
    users.set(role, rw.user.id)
    tokens.set(`${role}/read+write`, rw.token)
    const issue = async (scopes: Array<'read' | 'write'>, expiresDays?: number) => {
      const issued = await services.tokens.issue(rw.user.id, { scopes, expiresDays })
      if (issued.kind === 'error') throw new Error(issued.message)
      return issued.value
    }
    tokens.set(`${role}/read`, (await issue(['read'])).token)
    const revoked = await issue(['read', 'write'])
    await services.tokens.revoke(revoked.record.id)
    tokens.set(`${role}/revoked`, revoked.token)
    const expired = await issue(['read', 'write'], 1)
    await services.db.prisma.apiToken.update({
      where: { id: expired.record.id },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    })
    tokens.set(`${role}/expired`, expired.token)
  }
  const ownerId = users.get('owner')!
  for (const doc of DOCS) {
    const created = await services.documents.create(ownerId, {
      title: `Matrix ${doc} zqxmatrix`,
      markdown: '## Section\n\nsome text\n\n## Chat\n\nroom',
      isPrivate: doc !== 'public',
      readOnly: doc === 'read-only',
    })
    if (created.kind === 'error') throw new Error(created.message)
    slugs.set(doc, created.value.slug)
    ids.set(doc, created.value.id)
    await services.documents.share(created.value.slug, users.get('editor')!, 'editor')
    await services.documents.share(created.value.slug, users.get('viewer')!, 'viewer')
  }
  for (const role of ROLES)
    for (const token of ['read', 'read+write'] as const)
      clients.set(
        `${role}/${token}`,
        await connectRecording(mcpUrlOf(server), tokens.get(`${role}/${token}`)!),
      )
  ownerClient = clients.get('owner/read+write')!
  // A chat room on every document, then delete one.
  for (const doc of DOCS) {
    const outline = await callText(ownerClient.client, 'get_outline', { slug: slugs.get(doc) })
    const sectionId = [...outline.text.matchAll(/section_id: ([\w-]+)/g)].at(-1)![1]!
    await server.services.chat.post(ids.get(doc)!, sectionId, ownerId, 'hello')
  }
  await services.documents.softDelete(slugs.get('deleted')!)
}, 60_000)

afterAll(async () => {
  for (const c of clients.values()) await c.close()
})

/** A section id and rev of a fresh section, and a marker that occurs once in it (owner prepares it). */
let marks = 0
async function freshSection(doc: DocKind): Promise<{ section_id: string; rev: string; mark: string }> {
  const slug = slugs.get(doc)!
  if (doc === 'deleted') return { section_id: 'AAAAAAAAAAAAAAAA', rev: '000000000000', mark: 'x' }
  const mark = `mark${++marks}q`
  // The owner's write goes through the services' Yjs path (the owner can write a read-only document).
  const appended = await callText(ownerClient.client, 'append_to_document', {
    slug,
    markdown: `## S${marks}\n\n${mark}`,
  })
  if (appended.isError) throw new Error(appended.text)
  const outline = await callText(ownerClient.client, 'get_outline', { slug })
  const last = [...outline.text.matchAll(/section_id: ([\w-]+),/g)].at(-1)![1]!
  const read = await callText(ownerClient.client, 'read_document', { slug, section_id: last })
  return { section_id: last, rev: /^rev: ([0-9a-f]+)$/m.exec(read.text)![1]!, mark }
}

async function argsFor(tool: Tool, role: Role, doc: DocKind): Promise<Record<string, unknown>> {
  const slug = slugs.get(doc)!
  switch (tool) {
    case 'find_documents':
      // Members find their documents under scope mine; anyone else finds public ones under scope public.
      return { query: `zqxmatrix ${doc}`, scope: role === 'stranger' ? 'public' : 'mine', limit: 50 }
    case 'create_document':
      return { title: 'Made by the matrix' }
    case 'find_sections':
      // With slug: one document's sections, decided like any read (the title heading holds the word).
      return { slug, query: 'zqxmatrix' }
    case 'get_outline':
    case 'list_chat_rooms':
    case 'read_document':
      return { slug }
    case 'read_chat_thread': {
      const s = await freshSection(doc)
      return { slug, section_id: s.section_id }
    }
    case 'append_to_document':
      return { slug, markdown: 'appended by the matrix' }
    case 'edit_blocks': {
      const s = await freshSection(doc)
      return { slug, section_id: s.section_id, rev: s.rev, markdown: 'inserted', after_block: 0 }
    }
    case 'replace_text': {
      const s = await freshSection(doc)
      return { slug, section_id: s.section_id, rev: s.rev, old_text: s.mark, new_text: 'replaced' }
    }
    case 'post_chat_message': {
      const s = await freshSection(doc)
      return { slug, section_id: s.section_id, text: 'a message' }
    }
  }
}

/** Runs one cell through real HTTP and returns what happened, in the table's words. */
async function observe(tool: Tool, role: Role, token: TokenKind, doc: DocKind): Promise<Expected | string> {
  if (token === 'none' || token === 'revoked' || token === 'expired') {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    }
    if (token !== 'none') headers.authorization = `Bearer ${tokens.get(`${role}/${token}`)}`
    const response = await fetch(mcpUrlOf(server), {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: tool, arguments: { slug: slugs.get(doc) } },
      }),
    })
    await response.arrayBuffer()
    const challenge = response.headers.get('www-authenticate') ?? ''
    return response.status === 401 && challenge.includes('resource_metadata=')
      ? 'http 401'
      : `HTTP ${response.status}`
  }
  const { client } = clients.get(`${role}/${token}`)!
  const args = await argsFor(tool, role, doc)
  if (token === 'read') {
    const listed = (await client.listTools()).tools.some((t) => t.name === tool)
    const called = await callText(client, tool, args).catch((e) => ({ isError: true, text: String(e) }))
    if (!listed && called.isError && /not found/i.test(called.text)) {
      if (WRITE_TOOLS.includes(tool as never) || tool === 'create_document') return 'absent'
    }
    if (!listed) return `unlisted but callable: ${called.text.slice(0, 120)}`
  }
  const { text, isError } = await callText(client, tool, args)
  if (tool === 'find_documents') {
    if (isError) return `error: ${text}`
    return text.includes(`${slugs.get(doc)} |`) ? 'listed' : 'not listed'
  }
  if (!isError) {
    if (
      READ_TOOLS.includes(tool as never) &&
      text.includes(FRAME_END) === false &&
      tool !== 'read_chat_thread'
    )
      return `unframed: ${text.slice(0, 120)}`
    return 'ok'
  }
  const slug = String(args.slug ?? '')
  if (text === notFoundMessage(slug)) return 'not found'
  if (text.startsWith(`slug: you can read "${slug}" but not change it`)) return 'read only'
  return `other: ${text.slice(0, 200)}`
}

describe('access matrix', () => {
  test('every cell matches the one table (tools × roles × tokens × documents)', async () => {
    const mismatches: string[] = []
    // Documents run in parallel (writes to one document run in order, so revs stay fresh).
    await Promise.all(
      DOCS.map(async (doc) => {
        for (const tool of TOOLS)
          for (const role of ROLES)
            for (const token of TOKENS) {
              const want = expected(tool, role, token, doc)
              const got = await observe(tool, role, token, doc)
              cells++
              if (got !== want)
                mismatches.push(`${tool} × ${role} × ${token} × ${doc}: want ${want}, got ${got}`)
            }
      }),
    )
    expect(mismatches).toEqual([])
    expect(cells).toBe(TOOLS.length * ROLES.length * TOKENS.length * DOCS.length)
    reportFigure('access-matrix', { cells, mismatches: mismatches.length })
  }, 600_000)

  test('"no access" and "not found" read the same, for every per-document tool', async () => {
    const stranger = clients.get('stranger/read+write')!.client
    for (const tool of [...READ_TOOLS, ...WRITE_TOOLS]) {
      const args = (slug: string) => ({
        slug,
        section_id: 'AAAAAAAAAAAAAAAA',
        rev: '000000000000',
        markdown: 'x',
        old_text: 'x',
        new_text: 'y',
        text: 'x',
      })
      for (const doc of ['private', 'deleted'] as const) {
        const hidden = await callText(stranger, tool, args(slugs.get(doc)!))
        const missing = await callText(stranger, tool, args('no-such-document'))
        expect(hidden.isError && missing.isError).toBe(true)
        expect(hidden.text.replaceAll(slugs.get(doc)!, 'S')).toBe(
          missing.text.replaceAll('no-such-document', 'S'),
        )
      }
    }
  }, 120_000)
})
