/**
 * `db copy --to postgresql://…` on a folder made by a real server (`bun run start`'s entry: first run,
 * documents imported over REST, written by an agent over MCP and typed into by an editor, with an update
 * log and versions; chat over REST and MCP; users, API tokens and a password by the CLI through the admin
 * socket; an OAuth client registered, consented and issued tokens through the real pages): the copy is
 * refused while that server runs, then moves every table; a server started on PostgreSQL at the same
 * address serves the same documents byte for byte (Markdown and Yjs state), and the old credentials work.
 * Needs PostgreSQL (TEST_DATABASE_URL); one server pair and one copy for the whole file.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FRAGMENT_NAME, type OutlineNode, readOutline } from '@collab/doc-schema'
import { Browser, signInAndConsent, toolsListStatus } from '@collab/test-support/browser'
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '@collab/test-support/database'
import { appendParagraph, textOf } from '@collab/test-support/documents'
import { callText, connectClient } from '@collab/test-support/mcp'
import { type Run, runCli, type ServerProcess, spawnServer } from '@collab/test-support/process'
import { connectProvider, type TestProvider } from '@collab/test-support/provider'
import { eventually } from '@collab/test-support/server'
import * as Y from 'yjs'
import { databaseTarget, openDatabase } from '../db/client.ts'
import { MIGRATIONS_TABLE, readCatalog, type Sql } from '../db/copy/catalog.ts'
import { adapterSql, postgresSql } from '../db/copy/connections.ts'
import { countRows } from '../db/copy/copy-tables.ts'
import { acquireDataDirLock } from '../db/data-dir-lock.ts'

const PASSWORD = 'correct horse battery staple'
const CALLBACK = 'http://127.0.0.1:33418/callback'
/**
 * Tables the data made below leaves empty, each with why. Every other table of the catalog must be
 * filled (a table left out by the copy then shows as a count mismatch), so a table a migration adds fails
 * here until the data fills it or it is named below.
 */
const LEFT_EMPTY: Record<string, string> = {
  find_snapshots: 'made only when find_documents reads a second page',
  auth_verifications: 'short-lived values (codes, invites) deleted once used',
  auth_rate_limits: "Better Auth's counts, kept in memory when one instance runs",
  oauth_resources: 'registered resources: /mcp is the one, configured, not stored',
  oauth_client_resources: 'links of clients to registered resources (none)',
  oauth_client_assertions: 'used client assertions (private_key_jwt), which no client here uses',
}

type Made = {
  localToken: string
  bobToken: string
  revokedToken: string
  oauthAccess: string
  browser: Browser
  room: string
  slugs: string[]
  markdown: Map<string, string>
  yjsState: Uint8Array
}

async function api(
  base: string,
  token: string,
  path: string,
  init: { method?: string; body?: unknown } = {},
) {
  const response = await fetch(`${base}/api${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
  if (!response.ok)
    throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${await response.text()}`)
  return response
}

async function markdownOf(base: string, token: string, slugs: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (const slug of slugs)
    out.set(slug, await (await api(base, token, `/documents/${slug}/markdown`)).text())
  return out
}

/** An OAuth access token for `local`, through registration, the sign-in and consent pages, and the exchange. */
async function oauthAccessToken(base: string, browser: Browser): Promise<string> {
  const registered = await fetch(`${base}/auth/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Moved app',
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  })
  const clientId = ((await registered.json()) as { client_id: string }).client_id
  const verifier = randomBytes(32).toString('base64url')
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: CALLBACK,
    scope: 'read write offline_access',
    state: 'moved',
    resource: `${base}/mcp`,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })
  const back = await signInAndConsent(browser, `${base}/auth/oauth2/authorize?${query}`, {
    handle: 'local',
    password: PASSWORD,
  })
  const exchanged = await fetch(`${base}/auth/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      code_verifier: verifier,
      redirect_uri: CALLBACK,
      client_id: clientId,
      resource: `${base}/mcp`,
    }).toString(),
  })
  return ((await exchanged.json()) as { access_token: string }).access_token
}

/** The section id of the heading "Goals", as an editor's document holds it. */
function goalsSection(doc: Y.Doc): string {
  const all = (nodes: OutlineNode[]): OutlineNode[] => nodes.flatMap((n) => [n, ...all(n.children)])
  const found = all(readOutline(doc.getXmlFragment(FRAGMENT_NAME))).find((node) => node.title === 'Goals')
  if (!found) throw new Error('no Goals heading')
  return found.sectionId
}

/** Everything a team makes in its first days, through the server's own interfaces. */
async function makeData(server: ServerProcess, dataDir: string, cli: (...a: string[]) => Promise<Run>) {
  const base = server.url
  const localToken = readFileSync(join(dataDir, 'first-run-token'), 'utf8').trim()
  expect((await cli('user', 'add', 'bob')).exitCode).toBe(0)
  const bobToken = (await cli('token', 'issue', 'bob', '--label', 'kept')).stdout.trim()
  const revokedToken = (await cli('token', 'issue', 'bob', '--label', 'revoked')).stdout.trim()
  expect((await cli('token', 'revoke', revokedToken.split('_')[1]!)).exitCode).toBe(0)
  const passwordFile = join(dataDir, 'password.txt')
  writeFileSync(passwordFile, PASSWORD)
  expect((await cli('user', 'set-password', 'local', passwordFile)).exitCode).toBe(0)

  const imported = (await (
    await api(base, localToken, '/documents', {
      method: 'POST',
      body: { markdown: '# Plan\n\n## Goals\n\nShip the move.\n\n## Risks\n\n- none yet\n' },
    })
  ).json()) as { slug: string; room: string }
  // A report whose state is larger than one write slice: it and its import version are stored in parts
  // (document_state_parts, document_version_parts), copied and exported like the others.
  const chapters = Array.from(
    { length: 60 },
    (_, i) => `## Chapter ${i}\n\n${'Words of the report. '.repeat(400)}\n`,
  )
  const report = (await (
    await api(base, localToken, '/documents', {
      method: 'POST',
      body: { markdown: `# Report\n\n${chapters.join('\n')}` },
    })
  ).json()) as { room: string }
  await api(base, localToken, `/documents/${imported.slug}/members/bob`, {
    method: 'PUT',
    body: { role: 'editor' },
  })
  const agent = await connectClient(`${base}/mcp`, localToken)
  await callText(agent, 'append_to_document', { slug: imported.slug, markdown: '## Notes\n\nFrom an agent.' })
  // An editor types: each store appends to the update log, and nothing merges them while the editor stays
  // (STORE_COMPACT_AFTER_UPDATES is above their count below), so the log still holds them at the stop.
  const editor: TestProvider = connectProvider(base, imported.room, localToken)
  await editor.ready
  await eventually(() => expect(textOf(editor.doc)).toContain('From an agent.'))
  // A paste larger than one write slice into the report: its log row is stored in parts
  // (document_update_parts), and stays in the log (under the report's size, so no compaction is due).
  const paster: TestProvider = connectProvider(base, report.room, localToken)
  await paster.ready
  appendParagraph(paster.doc, `pasted ${'Words pasted at once. '.repeat(14_000)}`)
  const goals = goalsSection(editor.doc)
  await callText(agent, 'post_chat_message', { slug: imported.slug, section_id: goals, text: 'agent here' })
  await agent.close()
  await api(base, bobToken, `/documents/${imported.slug}/chat/${goals}`, {
    method: 'POST',
    body: { text: 'hi' },
  })
  for (let i = 1; i <= 8; i++) {
    appendParagraph(editor.doc, `typed ${i}`)
    await Bun.sleep(250)
  }
  // The owner has seen the agent's version ("since you last looked"): document_looks.
  const versions = await eventually(async () => {
    const listed = (await (await api(base, localToken, `/documents/${imported.slug}/versions`)).json()) as {
      versions: Array<{ id: string }>
    }
    expect(listed.versions.length).toBeGreaterThan(0)
    return listed.versions
  }, 30_000)
  await api(base, localToken, `/documents/${imported.slug}/last-look`, {
    method: 'PUT',
    body: { versionId: versions[0]!.id },
  })
  const browser = new Browser(base)
  const oauthAccess = await oauthAccessToken(base, browser)
  expect(await toolsListStatus(`${base}/mcp`, oauthAccess)).toBe(200)

  const listed = (await (await api(base, localToken, '/documents')).json()) as {
    documents: Array<{ slug: string }>
  }
  const slugs = listed.documents.map((d) => d.slug).sort()
  // What REST exports has all the typing (the server stores the rest when it stops).
  await eventually(async () =>
    expect(await (await api(base, localToken, `/documents/${imported.slug}/markdown`)).text()).toContain(
      'typed 8',
    ),
  )
  return {
    made: {
      localToken,
      bobToken,
      revokedToken,
      oauthAccess,
      browser,
      room: imported.room,
      slugs,
      markdown: await markdownOf(base, localToken, slugs),
      yjsState: Y.encodeStateAsUpdate(editor.doc),
    } satisfies Made,
    editors: [editor, paster],
  }
}

describe.skipIf(!TEST_DATABASE_URL)('db copy: the embedded database into PostgreSQL', () => {
  let source: TestDatabase
  let target: TestDatabase
  let targetUrl: string
  let made: Made
  let whileRunning: Run
  let tablesWhileRunning: number
  let copied: Run
  let port: number
  let moved: ServerProcess | undefined
  const env = () => ({ DATA_DIR: source.dataDir, DATABASE_URL: '' })
  const cli = (...args: string[]) => runCli(args, env())

  beforeAll(async () => {
    source = await createTestDatabase({ postgresUrl: null })
    target = await createTestDatabase({ empty: true })
    targetUrl = target.databaseUrl!
    // No compaction by count: with every third store compacted, how many rows the stop left in the log
    // depended on how the typing fell into stores (a clean-clone run once found none).
    const server = await spawnServer({ ...env(), STORE_COMPACT_AFTER_UPDATES: '1000' })
    port = Number(new URL(server.url).port)
    const { made: data, editors } = await makeData(server, source.dataDir, cli)
    made = data
    whileRunning = await cli('db', 'copy', '--to', targetUrl)
    const pg = await postgresSql(targetUrl)
    tablesWhileRunning = (await readCatalog(pg.sql)).tables.length
    await pg.close()
    // Stopped with the editors still connected: their last stores stay in the update log (no compaction).
    server.proc.kill('SIGTERM')
    await server.proc.exited
    for (const editor of editors) editor.destroy()
    copied = await cli('db', 'copy', '--to', targetUrl)
  }, 180_000)

  afterAll(async () => {
    moved?.proc.kill('SIGTERM')
    await moved?.proc.exited
    await source?.cleanup()
    await target?.cleanup()
  }, 60_000)

  test('refused while a server holds the folder, before touching the target', () => {
    expect(whileRunning.exitCode).toBe(1)
    expect(whileRunning.stderr).toContain('is held by a running server')
    expect(whileRunning.stderr).toContain('stop it first')
    expect(tablesWhileRunning).toBe(0)
  })

  test('every table of the schema is copied with the rows of the source, and sequences continue', async () => {
    expect(copied.stderr).toContain('verifying')
    expect(copied.exitCode).toBe(0)
    const listed = [...copied.stdout.matchAll(/^ {2}(\S+)\s+(\d+)$/gm)].map(
      (m) => [m[1]!, Number(m[2])] as const,
    )
    const pg = await postgresSql(targetUrl)
    const lock = acquireDataDirLock(source.dataDir, 'cli')
    const db = await openDatabase(databaseTarget({ dataDir: source.dataDir, databaseUrl: undefined }))
    const from = await adapterSql(db.adapterFactory)
    try {
      const catalog = await readCatalog(pg.sql)
      // Every table the migrations made in the target is in the copy's report: none is skipped.
      expect(listed.map(([name]) => name).sort()).toEqual(catalog.tables.map((t) => t.name).sort())
      expect(catalog.tables.map((t) => t.name)).not.toContain(MIGRATIONS_TABLE)
      const counts = async (sql: Sql) => {
        const out: Record<string, number> = {}
        for (const table of catalog.tables) out[table.name] = await countRows(sql, table.name)
        return out
      }
      const [sourceCounts, targetCounts] = [await counts(from.sql), await counts(pg.sql)]
      expect(targetCounts).toEqual(sourceCounts)
      expect(Object.fromEntries(listed)).toEqual(sourceCounts)
      const filled = catalog.tables.map((t) => t.name).filter((name) => !(name in LEFT_EMPTY))
      for (const name of filled)
        expect({ name, rows: (sourceCounts[name] ?? 0) > 0 }).toEqual({ name, rows: true })
      for (const name of Object.keys(LEFT_EMPTY)) expect(catalog.tables.map((t) => t.name)).toContain(name)
      const positions = async (sql: Sql) => {
        const out: Record<string, string> = {}
        for (const seq of catalog.sequences)
          out[seq] = (await sql(`SELECT last_value::text FROM "public"."${seq}"`))[0]![0]!
        return out
      }
      expect(await positions(pg.sql)).toEqual(await positions(from.sql))
    } finally {
      await from.close()
      await db.close()
      lock.release()
      await pg.close()
    }
  })

  test('a server on the copy serves the same documents byte for byte, and the old credentials work', async () => {
    moved = await spawnServer({ DATA_DIR: target.dataDir, DATABASE_URL: targetUrl, PORT: String(port) })
    const base = moved.url
    expect(await markdownOf(base, made.localToken, made.slugs)).toEqual(made.markdown)
    const editor = connectProvider(base, made.room, made.localToken)
    let goals: string
    try {
      await editor.ready
      expect(Buffer.from(Y.encodeStateAsUpdate(editor.doc))).toEqual(Buffer.from(made.yjsState))
      goals = goalsSection(editor.doc)
    } finally {
      editor.destroy()
    }
    const me = async (token: string) =>
      (await fetch(`${base}/api/me`, { headers: { Authorization: `Bearer ${token}` } })).status
    expect({ local: await me(made.localToken), bob: await me(made.bobToken) }).toEqual({
      local: 200,
      bob: 200,
    })
    expect(await me(made.revokedToken)).toBe(401)
    expect(await toolsListStatus(`${base}/mcp`, made.oauthAccess)).toBe(200)
    // The browser's sign-in session (its cookie, signed with the copied server secret) is still good.
    expect((await made.browser.fetch(`${base}/api/me`)).status).toBe(200)
    // New rows take ids after the copied ones (the sequences were set): a chat message posts.
    const slug = made.slugs.find((s) => made.markdown.get(s)!.includes('Goals'))!
    const posted = await fetch(`${base}/api/documents/${slug}/chat/${goals}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${made.bobToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'after the move' }),
    })
    expect(posted.status).toBe(201)
  }, 90_000)

  test('refuses a target that is not empty, and says what to do', async () => {
    const again = await cli('db', 'copy', '--to', targetUrl)
    expect(again.exitCode).toBe(1)
    expect(again.stderr).toContain('is not empty')
    expect(again.stderr).toContain('createdb')
    expect(again.stderr).not.toContain(`:${new URL(targetUrl).password}@`) // the password is never shown
  })
})
