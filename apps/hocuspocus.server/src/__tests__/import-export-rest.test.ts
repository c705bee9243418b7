/**
 * Markdown over REST (issue 12): POST /api/documents imports by the same rules as `doc import`, and
 * GET /api/documents/:slug/markdown exports to whoever may read, 404 alike for missing and forbidden.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestDatabase, DATABASE_KIND, type TestDatabase } from '@collab/test-support/database'
import { startTestServer, userWithToken } from '@collab/test-support/server'
import { IMPORT_NOT_JSON } from '../documents/import-body.ts'
import { importInput, MAX_API_IMPORT_BODY_BYTES } from '../http/request-body.ts'
import type { RunningServer } from '../server.ts'

describe(`REST import and export (${DATABASE_KIND})`, () => {
  let db: TestDatabase
  let server: RunningServer
  let owner: Awaited<ReturnType<typeof userWithToken>>
  let stranger: Awaited<ReturnType<typeof userWithToken>>
  let reader: Awaited<ReturnType<typeof userWithToken>>

  beforeAll(async () => {
    db = await createTestDatabase()
    server = await startTestServer(db)
    owner = await userWithToken(server, 'olive')
    stranger = await userWithToken(server, 'sam')
    reader = await userWithToken(server, 'rea', ['read'])
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await db?.cleanup()
  }, 60_000)

  const post = (token: string, body: BodyInit, type: string) =>
    fetch(`${server.url}/api/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'content-type': type },
      body,
    })
  const getMarkdown = (slug: string, token: string) =>
    fetch(`${server.url}/api/documents/${slug}/markdown`, { headers: { Authorization: `Bearer ${token}` } })

  test('POST JSON imports with the file rules; GET …/markdown exports it; a second trip is identical', async () => {
    const markdown = '---\na: 1\n---\n# Notes\n\nIntro.\n\n# Part two\n\n## Detail\n'
    const res = await post(owner.token, JSON.stringify({ markdown }), 'application/json')
    expect(res.status).toBe(201)
    const body = (await res.json()) as { slug: string; title: string; private: boolean; changes: string[] }
    expect(body.title).toBe('Notes')
    expect(body.private).toBe(true)
    expect(body.changes.join('\n')).toContain('one level deeper')
    const exported = await getMarkdown(body.slug, owner.token)
    expect(exported.status).toBe(200)
    expect(exported.headers.get('content-type')).toStartWith('text/markdown')
    const first = await exported.text()
    expect(first).toBe('# Notes\n\n```yaml\na: 1\n```\n\nIntro.\n\n## Part two\n\n### Detail\n')

    const again = await post(owner.token, first, 'text/markdown')
    expect(again.status).toBe(201)
    const second = await getMarkdown(((await again.json()) as { slug: string }).slug, owner.token)
    expect(await second.text()).toBe(first)
  })

  test('a text/markdown body takes its title, fallback name and visibility from the query', async () => {
    const postTo = (query: string, markdown: string) =>
      fetch(`${server.url}/api/documents?${query}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${owner.token}`, 'content-type': 'text/markdown; charset=utf-8' },
        body: markdown,
      })
    type Made = { title: string; private: boolean }
    // No heading: the name is the title (the web page sends the file's name).
    const named = await postTo('name=Trip%20notes&private=false', 'Just a paragraph.\n')
    expect(named.status).toBe(201)
    expect((await named.json()) as Made).toMatchObject({ title: 'Trip notes', private: false })
    // A heading wins over the name; an explicit title over both.
    const headed = await postTo('name=file', '# From the heading\n\nText.\n')
    expect(((await headed.json()) as Made).title).toBe('From the heading')
    const titled = await postTo('name=file&title=Chosen', '# From the heading\n\nText.\n')
    expect((await titled.json()) as Made).toMatchObject({ title: 'Chosen', private: true })
    const bad = await postTo('private=yes', 'Text.\n')
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { message: string }).message).toContain(
      'private: "yes" is not true or false',
    )
  })

  test('a text/markdown body is the same document whether it comes whole or in chunks split inside a character', async () => {
    // The body is gathered chunk by chunk and decoded on the documents' worker (api.ts bodyBytes): a
    // character split between two chunks, a BOM and a chunked body (no content-length) decode as text() did.
    const markdown = `# Größe ✦\n\n${'Grüße aus Köln, 𝄞. '.repeat(4000)}\n`
    const bytes = new TextEncoder().encode(`\uFEFF${markdown}`)
    const inChunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.byteLength; at += 1001) controller.enqueue(bytes.slice(at, at + 1001))
        controller.close()
      },
    })
    const exported = async (res: Response) => {
      expect(res.status).toBe(201)
      return (await getMarkdown(((await res.json()) as { slug: string }).slug, owner.token)).text()
    }
    const whole = await exported(await post(owner.token, bytes, 'text/markdown'))
    expect(whole).toStartWith('# Größe ✦\n\nGrüße aus Köln, 𝄞.')
    expect(await exported(await post(owner.token, inChunks, 'text/markdown'))).toBe(whole)
    expect(await exported(await post(owner.token, markdown, 'text/markdown; charset=utf-8'))).toBe(whole)
  })

  test("a JSON body is read on the documents' worker: its fields and refusals as before, never parsed on the event loop", async () => {
    // Parsed on the event loop, a body at the import limit (~48 MB of JSON) held it for the parse and the
    // copy of its Markdown string to the worker (documents/import-body.ts). importInput now only gathers it.
    const notJson = await importInput(
      new Request('http://x/api/documents', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"markdown": ',
      }),
    )
    expect(notJson.json).toBe(true)
    expect(new TextDecoder().decode(notJson.markdown)).toBe('{"markdown": ')

    const json = JSON.stringify({ title: 'Chosen ✦', markdown: '# Größe\n\nGrüße, 𝄞.\n', private: false })
    const bytes = new TextEncoder().encode(json)
    const inChunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.byteLength; at += 7) controller.enqueue(bytes.slice(at, at + 7))
        controller.close()
      },
    })
    const made = await post(owner.token, inChunks, 'application/json')
    expect(made.status).toBe(201)
    const { slug, ...fields } = (await made.json()) as { slug: string; title: string; private: boolean }
    expect(fields).toMatchObject({ title: 'Chosen ✦', private: false })
    expect(await (await getMarkdown(slug, owner.token)).text()).toBe('# Chosen ✦\n\n## Größe\n\nGrüße, 𝄞.\n')

    const refused = async (body: string) => {
      const res = await post(owner.token, body, 'application/json')
      expect(res.status).toBe(400)
      return (await res.json()) as { message: string; field?: string }
    }
    expect(await refused('{"markdown": ')).toMatchObject({ message: IMPORT_NOT_JSON })
    const missing = await refused('{"title": "No file"}')
    expect(missing.field).toBe('markdown')
    expect(missing.message).toStartWith('markdown: ')
    expect((await refused('{"markdown": "x", "private": "yes"}')).field).toBe('private')
    expect((await refused('[1, 2]')).field).toBe('body')
  })

  test('export: a stranger and a missing slug get the same 404; a public document is readable', async () => {
    const res = await post(
      owner.token,
      JSON.stringify({ title: 'Secret', markdown: 'x' }),
      'application/json',
    )
    const { slug } = (await res.json()) as { slug: string }
    const forbidden = await getMarkdown(slug, stranger.token)
    const missing = await getMarkdown('no-such-doc-abcdef', stranger.token)
    expect(forbidden.status).toBe(404)
    expect(missing.status).toBe(404)
    const strip = (text: string) => text.replaceAll(slug, 'SLUG').replaceAll('no-such-doc-abcdef', 'SLUG')
    expect(strip(await forbidden.text())).toBe(strip(await missing.text()))
    const open = await post(
      owner.token,
      JSON.stringify({ title: 'Open', markdown: 'Hello.', private: false }),
      'application/json',
    )
    const openSlug = ((await open.json()) as { slug: string }).slug
    expect(await (await getMarkdown(openSlug, stranger.token)).text()).toBe('# Open\n\nHello.\n')
    expect((await fetch(`${server.url}/api/documents/${openSlug}/markdown`)).status).toBe(401)
  })

  test('import refusals: a read-only token, a bad body, an over-long title, an oversized body; nothing created', async () => {
    const before = (
      (await (
        await fetch(`${server.url}/api/documents`, { headers: { Authorization: `Bearer ${owner.token}` } })
      ).json()) as { total: number }
    ).total
    expect((await post(reader.token, 'Hi.', 'text/markdown')).status).toBe(403)
    const notJson = await post(owner.token, '{', 'application/json')
    expect(notJson.status).toBe(400)
    const noMarkdown = await post(owner.token, JSON.stringify({ title: 'x' }), 'application/json')
    expect(noMarkdown.status).toBe(400)
    expect(((await noMarkdown.json()) as { field: string }).field).toBe('markdown')
    const longTitle = await post(owner.token, `# ${'t'.repeat(201)}\n`, 'text/markdown')
    expect(longTitle.status).toBe(400)
    expect(((await longTitle.json()) as { field: string }).field).toBe('title')
    const huge = await post(owner.token, new Uint8Array(MAX_API_IMPORT_BODY_BYTES + 1), 'text/markdown')
    expect(huge.status).toBe(413)
    const after = (
      (await (
        await fetch(`${server.url}/api/documents`, { headers: { Authorization: `Bearer ${owner.token}` } })
      ).json()) as { total: number }
    ).total
    expect(after).toBe(before)
  })
})
