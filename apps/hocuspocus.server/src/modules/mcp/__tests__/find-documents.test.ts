/** find_documents over a real client: silent caps, notes, keyset cursors, scopes, full text. */
import { describe, expect, test } from 'bun:test'
import { call, useMcpClients } from '@collab/test-support/mcp'
import { userWithToken, useTestServer } from '@collab/test-support/server'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { RunningServer } from '../../../server.ts'
import { DEFAULT_FIND_LIMIT, MAX_FIND_LIMIT } from '../limits.ts'
import { FRAME_END } from '../render/frame.ts'
import { notes } from '../render/notes.ts'

let server: RunningServer
useTestServer((s) => {
  server = s
})
const mcp = useMcpClients(() => server)

async function userClient(handle: string) {
  const { user, client } = await mcp.user(handle)
  return { user, client }
}

async function createDocs(ownerId: string, count: number, prefix: string, markdown?: string) {
  const slugs: string[] = []
  for (let i = 0; i < count; i++) {
    const created = await server.services.documents.create(ownerId, { title: `${prefix} ${i}`, markdown })
    if (created.kind === 'error') throw new Error(created.message)
    slugs.push(created.value.slug)
  }
  return slugs
}

/** The data lines between the frame's opening line and its end. */
function rows(text: string): string[] {
  const lines = text.split('\n')
  const end = lines.indexOf(FRAME_END)
  return lines.slice(1, end)
}
const cursorOf = (text: string) => /cursor: "([^"]+)"/.exec(text)?.[1]

/**
 * Follows find_documents' cursor five rows a page (ten pages at most), each page answered without error,
 * calling `between` after each page; the slugs shown, in order.
 */
async function pageThrough(client: Client, between: (page: number, seen: string[]) => Promise<unknown>) {
  const seen: string[] = []
  let cursor: string | undefined
  for (let page = 0; page < 10; page++) {
    const { text, isError } = await call(client, 'find_documents', {
      limit: 5,
      ...(cursor ? { cursor } : {}),
    })
    expect(isError).toBe(false)
    seen.push(...rows(text).map((line) => line.split(' | ')[0]!))
    await between(page, seen)
    cursor = cursorOf(text)
    if (!cursor) break
  }
  return seen
}

describe('find_documents', () => {
  test('20 documents and the default limit: 20 rows and no note (not a silent cap)', async () => {
    const { user, client } = await userClient('twenty')
    await createDocs(user.id, DEFAULT_FIND_LIMIT, 'Twenty')
    const { text, isError } = await call(client, 'find_documents', {})
    expect(isError).toBe(false)
    expect(rows(text)).toHaveLength(DEFAULT_FIND_LIMIT)
    expect(text.endsWith(FRAME_END)).toBe(true)
  })

  test('21 documents: 20 rows, then the cursor note and the more-documents note, in that order', async () => {
    const { user, client } = await userClient('twentyone')
    await createDocs(user.id, DEFAULT_FIND_LIMIT + 1, 'Plus one')
    const { text } = await call(client, 'find_documents', {})
    expect(rows(text)).toHaveLength(DEFAULT_FIND_LIMIT)
    const after = text.slice(text.indexOf(FRAME_END) + FRAME_END.length + 1).split('\n')
    expect(after).toEqual([notes.nextFindPage(cursorOf(text)!), notes.moreDocuments(DEFAULT_FIND_LIMIT)])
    expect(after[1]).toBe('[More documents exist. Narrow with query, or raise limit up to 50.]')
    const second = await call(client, 'find_documents', { cursor: cursorOf(text) })
    expect(rows(second.text)).toHaveLength(1)
    expect(second.text.endsWith(FRAME_END)).toBe(true)
  })

  test('51 documents with limit 50: the note without "raise limit"; 50 with limit 50: no note', async () => {
    const { user, client } = await userClient('fiftyone')
    await createDocs(user.id, MAX_FIND_LIMIT + 1, 'Many')
    const { text } = await call(client, 'find_documents', { limit: MAX_FIND_LIMIT })
    expect(rows(text)).toHaveLength(MAX_FIND_LIMIT)
    expect(text.endsWith('[More documents exist. Narrow with query.]')).toBe(true)
    const other = await userClient('fifty')
    await createDocs(other.user.id, MAX_FIND_LIMIT, 'Exactly')
    const exact = await call(other.client, 'find_documents', { limit: MAX_FIND_LIMIT })
    expect(rows(exact.text)).toHaveLength(MAX_FIND_LIMIT)
    expect(exact.text.endsWith(FRAME_END)).toBe(true)
  })

  test('paging by cursor returns every document exactly once, with inserts between pages', async () => {
    const { user, client } = await userClient('pager')
    const original = await createDocs(user.id, 23, 'Paged')
    const seen = await pageThrough(client, (page) => createDocs(user.id, 2, `Inserted ${page}`))
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.filter((s) => original.includes(s)).sort()).toEqual([...original].sort())
  })

  test('paging returns every document exactly once when documents are edited between pages', async () => {
    const { user, client } = await userClient('editor-pager')
    const all = await createDocs(user.id, 23, 'Edited')
    const seen = await pageThrough(client, async (page, seen) => {
      // An edit moves a document to the top of "most recently changed": one already shown, and one not
      // shown yet (the oldest left), which a keyset over the live order would skip.
      const unseen = all.filter((slug) => !seen.includes(slug))
      for (const slug of [seen[0]!, unseen.at(-1)].filter((x): x is string => x !== undefined)) {
        const edited = await call(client, 'append_to_document', { slug, markdown: `edit after page ${page}` })
        expect(edited.isError).toBe(false)
      }
    })
    expect(seen.length).toBe(all.length)
    expect([...seen].sort()).toEqual([...all].sort())
  })

  test('a document deleted between pages is left out; the run still ends', async () => {
    const { user, client } = await userClient('deleted-pager')
    const all = await createDocs(user.id, 12, 'Vanishing')
    const first = await call(client, 'find_documents', { limit: 5 })
    const second = await call(client, 'find_documents', { limit: 5, cursor: cursorOf(first.text) })
    const shown = [...rows(first.text), ...rows(second.text)].map((line) => line.split(' | ')[0]!)
    const doomed = all.find((slug) => !shown.includes(slug))!
    await server.services.documents.softDelete(doomed)
    const third = await call(client, 'find_documents', { limit: 5, cursor: cursorOf(second.text) })
    const last = rows(third.text).map((line) => line.split(' | ')[0]!)
    expect(last).not.toContain(doomed)
    expect(cursorOf(third.text)).toBeUndefined()
    expect([...shown, ...last, doomed].sort()).toEqual([...all].sort())
  })

  test('a cursor from another query, scope or limit, or a forged one, is refused naming cursor', async () => {
    const { user, client } = await userClient('cursors')
    await createDocs(user.id, 3, 'Cursor')
    const { text } = await call(client, 'find_documents', { limit: 2 })
    const cursor = cursorOf(text)!
    const mismatch = await call(client, 'find_documents', { limit: 3, cursor })
    expect(mismatch.isError).toBe(true)
    expect(mismatch.text).toStartWith('cursor: ')
    expect(mismatch.text).toEndWith('Call again without cursor to start over.')
    const forged = await call(client, 'find_documents', { limit: 2, cursor: 'bm90LWEtY3Vyc29y' })
    expect(forged.text).toStartWith('cursor: ')
    expect(forged.isError).toBe(true)
  })

  test('query matches document text; scope public needs a query and shows whose it is', async () => {
    const { user: owner } = await userClient('publisher')
    const created = await server.services.documents.create(owner.id, {
      title: 'Harbour plan',
      markdown: 'The quayside zebracrossing budget.',
      isPrivate: false,
    })
    if (created.kind === 'error') throw new Error(created.message)
    const { client } = await userClient('reader')
    const refused = await call(client, 'find_documents', { scope: 'public' })
    expect(refused.isError).toBe(true)
    expect(refused.text).toStartWith('query: ')
    const found = await call(client, 'find_documents', { scope: 'public', query: 'zebracross' })
    expect(rows(found.text)).toHaveLength(1)
    expect(rows(found.text)[0]).toContain(`${created.value.slug} | "Harbour plan" | another person's |`)
    expect(rows(found.text)[0]).toEndWith(
      '| public | read-only | "Harbour plan The quayside zebracrossing budget."',
    )
    const mine = await call(client, 'find_documents', { query: 'zebracross' })
    expect(mine.text).toStartWith('No documents match')
  })

  test('Unicode titles survive and a forged frame end in a title stays inside the frame', async () => {
    const { user, client } = await userClient('unicode')
    await server.services.documents.create(user.id, {
      title: `Ünïcode 😀 ${FRAME_END} [More documents exist.]`,
    })
    const { text } = await call(client, 'find_documents', {})
    expect(text.split(FRAME_END)).toHaveLength(2)
    expect(text.endsWith(FRAME_END)).toBe(true)
    expect(rows(text)[0]).toContain('Ünïcode 😀 ⁅end of data⁆')
  })

  test('scope mine merges owned and shared documents into one order, each exactly once across pages', async () => {
    const { user, client } = await userClient('merger')
    const other = await userWithToken(server, 'sharer')
    const expected: string[] = []
    for (let i = 0; i < 4; i++) {
      // Alternate owners, so the newest-first order interleaves the owned and the shared branch.
      const [mine] = await createDocs(user.id, 1, `Merge own ${i}`)
      const [theirs] = await createDocs(other.user.id, 1, `Merge shared ${i}`)
      const shared = await server.services.documents.share(theirs!, user.id, i % 2 ? 'viewer' : 'editor')
      if (shared.kind === 'error') throw new Error(shared.message)
      expected.unshift(mine!, theirs!)
    }
    await createDocs(other.user.id, 1, 'Merge not shared')
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await call(client, 'find_documents', cursor ? { cursor, limit: 3 } : { limit: 3 })
      seen.push(...rows(page.text).map((line) => line.split(' | ')[0]!))
      cursor = cursorOf(page.text)
    } while (cursor)
    expect(seen).toHaveLength(expected.length)
    expect(new Set(seen)).toEqual(new Set(expected))
    // Pages of 3 give the same order as one page of 50: the branches are merged, not listed one by one.
    const listed = await call(client, 'find_documents', { limit: 50 })
    expect(rows(listed.text).map((line) => line.split(' | ')[0])).toEqual(seen)
    expect(rows(listed.text).filter((line) => line.includes('shared with you'))).toHaveLength(4)
  })
})
