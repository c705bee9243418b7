/**
 * The access matrix, generated: every tool × {owner, editor member, viewer member, stranger} × token
 * {read, read+write, revoked, expired, none} × document {public, private, read-only, deleted}. The
 * expected outcome of every cell comes from ONE table (`expected` below), derived from docs/server.md's
 * access table and each tool's kind, and is asserted through real HTTP calls to one server.
 * "No access" and "not found" must read the same.
 *
 * The tools are the registry's (modules/mcp/tools/index.ts): a tool that names a document (`slug`) is
 * decided like any read or write of it; a read tool without `slug` lists documents, another one without
 * it creates one. Each call's arguments are made from the tool's listed input schema, by argument name
 * (`VALUES`), so a new tool joins the matrix without an edit here unless it brings an argument name
 * no tool had (the matrix then fails naming it).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { callText, connectRecording, mcpUrlOf, type RecordingClient } from '@collab/test-support/mcp'
import { outlineIds, wholeSectionId } from '@collab/test-support/outline'
import { userWithToken, useTestServer } from '@collab/test-support/server'
import { FRAME_END } from '../../modules/mcp/render/frame.ts'
import { TOOLS as REGISTRY } from '../../modules/mcp/tools/index.ts'
import { notFoundMessage } from '../../modules/mcp/tools/open-document.ts'
import type { Tool as RegisteredTool } from '../../modules/mcp/tools/tool.ts'
import type { RunningServer } from '../../server.ts'
import { reportFigure } from './support.ts'

const ROLES = ['owner', 'editor', 'viewer', 'stranger'] as const
const TOKENS = ['read', 'read+write', 'revoked', 'expired', 'none'] as const
const DOCS = ['public', 'private', 'read-only', 'deleted'] as const
const namesOf = (tools: readonly RegisteredTool[]) => tools.map((t) => t.name)
const namesDocument = (tool: RegisteredTool) => 'slug' in tool.inputSchema
/** Reads and writes of one document (named by `slug`). */
const READ_TOOLS = namesOf(REGISTRY.filter((t) => t.kind === 'read' && namesDocument(t)))
const WRITE_TOOLS = namesOf(REGISTRY.filter((t) => t.kind !== 'read' && namesDocument(t)))
/** Tools without `slug`: a read one lists documents (find_documents), a write one creates one (create_document). */
const LIST_TOOLS = namesOf(REGISTRY.filter((t) => t.kind === 'read' && !namesDocument(t)))
const CREATE_TOOLS = namesOf(REGISTRY.filter((t) => t.kind !== 'read' && !namesDocument(t)))
const TOOLS = namesOf(REGISTRY)
const isWriteTool = (tool: string) => REGISTRY.find((t) => t.name === tool)!.kind !== 'read'

type Role = (typeof ROLES)[number]
type TokenKind = (typeof TOKENS)[number]
type DocKind = (typeof DOCS)[number]
type Tool = string
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
  const isWrite = isWriteTool(tool)
  if (isWrite && token === 'read') return 'absent'
  if (CREATE_TOOLS.includes(tool)) return 'ok'
  const access = rule(role, doc)
  if (LIST_TOOLS.includes(tool)) return access.read ? 'listed' : 'not listed'
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
/** Each tool's arguments as tools/list gives them: name, whether required, the largest integer accepted. */
let schemas: Map<string, { properties: Record<string, { maximum?: number }>; required: string[] }>

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
  const listed = (await ownerClient.client.listTools()).tools
  schemas = new Map(
    listed.map((t) => [
      t.name,
      { properties: (t.inputSchema.properties ?? {}) as never, required: t.inputSchema.required ?? [] },
    ]),
  )
  // A chat room on every document, then delete one.
  for (const doc of DOCS) {
    const outline = await callText(ownerClient.client, 'get_outline', { slug: slugs.get(doc) })
    const sectionId = await wholeSectionId(
      ownerClient.client,
      slugs.get(doc)!,
      outlineIds(outline.text).at(-1)!,
    )
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
  const read = await callText(ownerClient.client, 'read_document', {
    slug,
    section_id: outlineIds(outline.text).at(-1)!,
  })
  // The whole id the read prints: every user's call names the section as exactly as the owner read it.
  const whole = /^section_id: ([\w-]+)$/m.exec(read.text)![1]!
  return { section_id: whole, rev: /^rev: ([0-9a-f]+)$/m.exec(read.text)![1]!, mark }
}

/**
 * A value for each argument name tools use: the document's slug, a fresh section (id, rev, and a marker
 * that occurs once in it for `old_text`), text to write, a query that finds the matrix's documents.
 * Undefined leaves an optional argument out.
 */
type Cell = { tool: Tool; role: Role; doc: DocKind; section: () => ReturnType<typeof freshSection> }
const VALUES: Record<string, (cell: Cell, maximum?: number) => unknown | Promise<unknown>> = {
  slug: ({ doc }) => slugs.get(doc),
  section_id: async ({ section }) => (await section()).section_id,
  rev: async ({ section }) => (await section()).rev,
  old_text: async ({ section }) => (await section()).mark,
  new_text: () => 'replaced',
  markdown: () => 'written by the matrix',
  text: () => 'a message',
  title: () => 'Made by the matrix',
  // Listing: a query only the matrix's documents hold; members find theirs under mine, anyone else public ones.
  query: ({ tool, doc }) => (LIST_TOOLS.includes(tool) ? `zqxmatrix ${doc}` : 'zqxmatrix'),
  scope: ({ tool, role }) => (LIST_TOOLS.includes(tool) && role === 'stranger' ? 'public' : undefined),
  limit: ({ tool }, maximum) => (LIST_TOOLS.includes(tool) ? maximum : undefined),
  // restore_version and revert_changes: the document's newest version (of a deleted one too; refused first).
  version_id: async ({ doc }) => {
    const newest = await server.services.documents.listVersions(ids.get(doc)!, { limit: 1 })
    return Number(newest[0]?.id ?? 1)
  },
  // decide_suggestions: reject every pending one (none: the call changes nothing but is still a write).
  decision: () => 'reject',
  all: () => true,
}
/**
 * Optional arguments given when a tool has them: a write without its Markdown would change nothing, a
 * revert without its version (or a time) is refused before access is asked, a decision needs its ids or
 * `all`.
 */
const GIVEN_WHEN_OPTIONAL = ['slug', 'markdown', 'query', 'scope', 'limit', 'version_id', 'all']

async function argsFor(tool: Tool, role: Role, doc: DocKind): Promise<Record<string, unknown>> {
  const schema = schemas.get(tool)!
  let section: ReturnType<typeof freshSection> | undefined
  const cell: Cell = { tool, role, doc, section: () => (section ??= freshSection(doc)) }
  const args: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(schema.properties)) {
    if (!schema.required.includes(name) && !GIVEN_WHEN_OPTIONAL.includes(name)) continue
    const make = VALUES[name]
    if (!make) throw new Error(`access matrix: no value for ${tool}'s argument ${name}; add one to VALUES`)
    const value = await make(cell, field.maximum)
    if (value !== undefined) args[name] = value
  }
  return args
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
      if (isWriteTool(tool)) return 'absent'
    }
    if (!listed) return `unlisted but callable: ${called.text.slice(0, 120)}`
  }
  const { text, isError } = await callText(client, tool, args)
  if (LIST_TOOLS.includes(tool)) {
    if (isError) return `error: ${text}`
    return text.includes(`${slugs.get(doc)} |`) ? 'listed' : 'not listed'
  }
  if (!isError) {
    // Framed, unless it says there is nothing to show ("No messages under section_id … yet").
    if (READ_TOOLS.includes(tool) && !text.includes(FRAME_END) && !text.startsWith('No '))
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
        query: 'x',
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
