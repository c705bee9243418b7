/**
 * Search takes terms as written and ranks (issue 26, items 2 and 5), through real MCP clients on a real
 * database (PGlite, or PostgreSQL with TEST_DATABASE_URL): a whole token before part of one (`6.14.1`,
 * `fs.stat`, `parse`), an exact phrase before its words apart, a title before the text, other forms of a
 * word (stemming), `-exclusions`, terms copied with a read's Markdown escapes, snippets around the match,
 * the section about a term before one that only names it, and find_sections saying "changed since it was
 * indexed" only when the document did change.
 */
import { describe, expect, test } from 'bun:test'
import { call, useMcpClients } from '@collab/test-support/mcp'
import { useTestServer } from '@collab/test-support/server'
import type { RunningServer } from '../../../server.ts'
import { FIND_SNIPPET_CHARS } from '../limits.ts'
import { CHANGED_SINCE_INDEXED } from '../render/find-lines.ts'
import { FRAME_END } from '../render/frame.ts'

let server: RunningServer
useTestServer((s) => {
  server = s
})
const mcp = useMcpClients(() => server)

/** A fresh user with these documents (title, Markdown), so each test searches only its own. */
async function userWith(handle: string, docs: Array<[title: string, markdown: string]>) {
  const { user, client } = await mcp.user(handle)
  const slugs: string[] = []
  for (const [title, markdown] of docs) {
    const created = await server.services.documents.create(user.id, { title, markdown })
    if (created.kind === 'error') throw new Error(created.message)
    slugs.push(created.value.slug)
  }
  return { user, client, slugs }
}

function rows(text: string): string[] {
  const lines = text.split('\n')
  const end = lines.indexOf(FRAME_END)
  return end < 0 ? [] : lines.slice(1, end)
}
const slugsOf = (text: string) => rows(text).map((line) => line.trim().split(' | ')[0]!)

describe('find_documents ranks terms as written', () => {
  test('a whole token first: 6.14.1 before 6.14.16, fs.stat before fs.Stats, url.parse before parser', async () => {
    const { client, slugs } = await userWith('tokens', [
      ['Newer release', 'Upgraded qs to 6.14.16 and fixed {fs.Stats} typing. The parser and parsing rules.'],
      ['Exact release', 'Pinned qs at 6.14.1 after fs.stat(path) failed; call url.parse(input).'],
      ['Decoy', 'A sparse table of 16.14.16 values and statistics.'],
    ])
    const [newer, exact] = slugs
    for (const query of ['6.14.1', 'fs.stat', 'parse']) {
      const found = await call(client, 'find_documents', { query })
      expect(slugsOf(found.text)[0], query).toBe(exact!)
    }
    const parse = slugsOf((await call(client, 'find_documents', { query: 'parse' })).text)
    // "sparse" holds the letters: listed (as written), but after both whole and stemmed matches.
    expect(parse).toEqual([exact!, newer!, slugs[2]!])
  })

  test('an exact phrase before its words apart; a title before the text', async () => {
    const { client, slugs } = await userWith('phrases', [
      ['Notes', 'The read is cold here, and the cache is warm there.'],
      ['More notes', 'A cold read decodes the stored state.'],
      ['Cold read', 'Some other text about how it decodes.'],
    ])
    const found = slugsOf((await call(client, 'find_documents', { query: 'cold read' })).text)
    // Title "Cold read" (phrase in the title) > phrase in the text > both words apart.
    expect(found).toEqual([slugs[2]!, slugs[1]!, slugs[0]!])
    const quoted = slugsOf((await call(client, 'find_documents', { query: '"cold read"' })).text)
    expect(quoted).toEqual([slugs[2]!, slugs[1]!])
  })

  test('other forms of a word match (parsing finds parse); -word leaves out', async () => {
    const { client, slugs } = await userWith('stems', [
      ['Router', 'We parse the route table.'],
      ['Lexer', 'Tokens are split before parsing begins.'],
    ])
    const stemmed = slugsOf((await call(client, 'find_documents', { query: 'parsing' })).text)
    expect(stemmed).toEqual([slugs[1]!, slugs[0]!])
    const excluded = slugsOf((await call(client, 'find_documents', { query: 'parse -router' })).text)
    expect(excluded).toEqual([slugs[1]!])
    const refused = await call(client, 'find_documents', { query: '-router' })
    expect(refused.isError).toBe(true)
    expect(refused.text).toStartWith('query: has only words to leave out')
  })

  test("terms copied with a read's Markdown escapes match (qs\\@6.14.0, process.\\_fatalException)", async () => {
    const { client, slugs } = await userWith('escapes', [
      ['History', 'Deps: qs@6.14.0 and process._fatalException handling.'],
    ])
    for (const query of ['qs\\@6.14.0', 'process.\\_fatalException', '"qs\\@6.14.0"']) {
      const found = await call(client, 'find_documents', { query })
      expect(slugsOf(found.text), query).toEqual([slugs[0]!])
    }
  })

  test('each row ends with a bounded snippet around the match, inside the frame', async () => {
    const filler = 'Lorem ipsum dolor sit amet. '.repeat(40)
    const { client } = await userWith('snippets', [['Long', `${filler}The beacon word sits here. ${filler}`]])
    const { text } = await call(client, 'find_documents', { query: 'beacon' })
    const line = rows(text)[0]!
    const snippet = JSON.parse(line.slice(line.lastIndexOf(' | "') + 3)) as string
    expect(snippet).toContain('The beacon word sits here.')
    expect(snippet.startsWith('…') && snippet.endsWith('…')).toBe(true)
    expect(snippet.length).toBeLessThanOrEqual(FIND_SNIPPET_CHARS + 2)
    const bare = await call(client, 'find_documents', {})
    expect(rows(bare.text)[0]).toEndWith('| private | editable')
  })
})

describe('find_sections ranks sections and says why nothing matched', () => {
  test('ERR_INVALID_CHAR: the section about it before the one holding only its anchor', async () => {
    const { client, slugs } = await userWith('anchors', [
      [
        'Errors',
        '## ERR_HTTP_HEADERS_SENT\n\nHeaders were sent.\n\n<a id="ERR_INVALID_CHAR"></a>\n\n' +
          '## ERR_INVALID_CHAR\n\nInvalid characters were found in headers.',
      ],
    ])
    const across = await call(client, 'find_sections', { query: 'ERR_INVALID_CHAR' })
    expect(rows(across.text)[1]).toContain('"ERR_INVALID_CHAR" |')
    const within = await call(client, 'find_sections', { query: 'ERR_INVALID_CHAR', slug: slugs[0] })
    expect(rows(within.text)[0]).toContain('"ERR_INVALID_CHAR" |')
  })

  test('6.14.1: the section headed by that version before one that names it in passing', async () => {
    const { client, slugs } = await userWith('versions', [
      ['Changelog', '## 6.14.16\n\nClarify the 6.14.1 change.\n\n## 6.14.1\n\nFix bracket parsing.'],
    ])
    const within = await call(client, 'find_sections', { query: '6.14.1', slug: slugs[0] })
    expect(rows(within.text).map((line) => line.split(' | ')[1])).toEqual(['"6.14.1"', '"6.14.16"'])
  })

  test('words in different sections: said so, with the call that finds each; not "changed"', async () => {
    const { client, slugs } = await userWith('spread', [
      ['Spread', '## First\n\nThe harbour opens.\n\n## Second\n\nThe lighthouse shines.'],
    ])
    const across = await call(client, 'find_sections', { query: 'harbour lighthouse' })
    expect(rows(across.text)[0]).toContain('they are in different sections')
    expect(rows(across.text)[0]).toContain(`find_sections with slug: "${slugs[0]}"`)
    expect(across.text).not.toContain(CHANGED_SINCE_INDEXED)
    const within = await call(client, 'find_sections', { query: 'harbour lighthouse', slug: slugs[0] })
    expect(within.text).toContain('the words are in different sections')
  })

  test('other forms of a word: the stemmer picks the section; a heading match first', async () => {
    const { client, slugs } = await userWith('stem-sections', [
      ['Guide', '## Setup\n\nRetries are counted here.\n\n## Retry support\n\nYou can retry a call.'],
    ])
    const within = await call(client, 'find_sections', { query: 'retrying', slug: slugs[0] })
    expect(rows(within.text)[0]).toContain('"Retry support" |')
    expect(rows(within.text)).toHaveLength(2)
    const across = await call(client, 'find_sections', { query: 'retrying' })
    expect(rows(across.text)[0]).toContain('2 matching sections (the words in another form)')
  })

  test('"changed since it was indexed" only when the text no longer holds the words', async () => {
    const { client, slugs } = await userWith('stale', [['Stale', '## Only\n\nNothing of note.']])
    // The index still holds a word the document no longer has (as after an edit not yet refreshed).
    await server.services.db.prisma.$executeRaw`
      UPDATE document_search_chunks SET body = body || ' zanzibarword'
       WHERE document_id = (SELECT id FROM documents WHERE slug = ${slugs[0]})`
    const across = await call(client, 'find_sections', { query: 'zanzibarword' })
    expect(rows(across.text)[0]).toContain(CHANGED_SINCE_INDEXED)
  })
})
