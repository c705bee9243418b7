/**
 * Where is this phrase? The query set of issue 13 (each search miss it confirmed with a probe document)
 * through find_documents and find_sections over real clients and a real database (PGlite, or PostgreSQL
 * with TEST_DATABASE_URL): every query finds its document and only the documents holding it, and names
 * the section. Also: a stranger never sees a private document's sections, paging is bounded and loses
 * nothing, snippets stay inside the frame, and the query uses the trigram index (EXPLAIN).
 */
import { describe, expect, test } from 'bun:test'
import { appendOrThrow, buildDocument } from '@collab/test-support/documents'
import { call, useMcpClients } from '@collab/test-support/mcp'
import { refreshSearchColumns, storedSearchText } from '@collab/test-support/search-text'
import { useTestServer } from '@collab/test-support/server'
import { Prisma } from '../../../db/generated/client.ts'
import { searchSql } from '../../../documents/search.ts'
import { parseTerms } from '../../../documents/search-query.ts'
import { MAX_SEARCH_VECTOR_CHARS } from '../../../limits.ts'
import type { RunningServer } from '../../../server.ts'
import { SECTION_MATCHES_PER_PAGE, SECTIONS_PER_FOUND_DOCUMENT } from '../limits.ts'
import { FRAME_END } from '../render/frame.ts'

let server: RunningServer
useTestServer((s) => {
  server = s
})
const mcp = useMcpClients(() => server)
/** One user (and client) per handle for the whole file. */
const userOf = (handle: string) => mcp.userOnce(handle)

/** The data lines between the frame's opening line and its end. */
function rows(text: string): string[] {
  const lines = text.split('\n')
  const end = lines.indexOf(FRAME_END)
  return end < 0 ? [] : lines.slice(1, end)
}
const notesOf = (text: string) => text.slice(text.indexOf(FRAME_END) + FRAME_END.length).trim()
const slugsIn = (text: string) => rows(text).flatMap((line) => /^([a-z0-9-]+) \| /.exec(line)?.[1] ?? [])

/** Filler for the long document: none of the query set's terms, and long enough to pass the old cut. */
const FILLER = 'Filler words about harbours, rivers and bridges, repeated to grow the document.'

/** The probe documents of the issue, by key: title and Markdown (one section per heading). */
const PROBES: Record<string, { title: string; markdown: string }> = {
  hindi: { title: 'Hindi notes', markdown: '## परिचय\n\nयह परियोजना सहयोगी संपादन के लिए है।' },
  chinese: { title: 'Chinese notes', markdown: '## 工具\n\nBiome 是一个格式化工具，也是一个代码检查工具。' },
  version: {
    title: 'Changelog',
    markdown: '## Older\n\nReleased 3.25.1.\n\n## Newest\n\nReleased 3.25.2 with fixes.',
  },
  otherVersions: {
    title: 'Version notes',
    markdown: '## Tried\n\nVersions 3.25, 2.3.25, 25.2.3 and 3 25 2 were tried.',
  },
  url: { title: 'Node url', markdown: '## Parsing\n\nCall `url.parse(input)` to split a link.' },
  fc: { title: 'Property tests', markdown: '## Laws\n\nRun fc.assert(fc.property(arb, law)) for each law.' },
  cpp: { title: 'Languages', markdown: '## Compiled\n\nWe compile C++ and C# sources.' },
  plainC: { title: 'C notes', markdown: '## Plain\n\nPlain C and c code, no plus signs: Charles and Carl.' },
  types: { title: 'Typings', markdown: '## Install\n\nInstall @types/node for Node typings.' },
  otherTypes: {
    title: 'Other typings',
    markdown: '## Install\n\nInstall @types/react; the node runtime has types.',
  },
}

/** Each query of the issue, the documents holding it (every other probe does not) and the section. */
const QUERY_SET: Array<{ query: string; expect: string[]; section: string }> = [
  { query: 'quokkamarker', expect: ['long'], section: 'Tail' },
  { query: 'परियोजना', expect: ['hindi'], section: 'परिचय' },
  { query: '格式化工具', expect: ['chinese'], section: '工具' },
  { query: 'Biome 是一个', expect: ['chinese'], section: '工具' },
  { query: '3.25.2', expect: ['version'], section: 'Newest' },
  { query: 'parse', expect: ['url'], section: 'Parsing' },
  { query: 'url.parse', expect: ['url'], section: 'Parsing' },
  { query: 'assert', expect: ['fc'], section: 'Laws' },
  { query: 'fc.assert', expect: ['fc'], section: 'Laws' },
  { query: 'C++', expect: ['cpp'], section: 'Compiled' },
  { query: '@types/node', expect: ['types'], section: 'Install' },
]

const slugOf = new Map<string, string>()
let secretSlug = ''

async function probes() {
  if (slugOf.size > 0) return
  const { user } = await userOf('author')
  for (const [key, probe] of Object.entries(PROBES)) {
    const created = await server.services.documents.create(user.id, { ...probe, isPrivate: false })
    if (created.kind === 'error') throw new Error(created.message)
    slugOf.set(key, created.value.slug)
  }
  // Past the old 200,000-character cut of the search text (and of the full-text vector).
  const long = await buildDocument(server, user.id, { title: 'Long log', isPrivate: false }, (fragment) => {
    appendOrThrow(fragment, '## Filler')
    for (let i = 0; i < 40; i++) appendOrThrow(fragment, FILLER.repeat(80))
    appendOrThrow(fragment, '## Tail\n\nThe quokkamarker sits past the first 200,000 characters.')
  })
  slugOf.set('long', long.slug)
  // A private document holding every term: only its owner may learn anything of it.
  const secret = await server.services.documents.create(user.id, {
    title: 'Secret plans',
    markdown: `## Hiddenheading\n\n${QUERY_SET.map((q) => q.query).join(' ')}`,
  })
  if (secret.kind === 'error') throw new Error(secret.message)
  secretSlug = secret.value.slug
  for (const slug of [...slugOf.values(), secretSlug]) await refreshSearchColumns(server, slug)
}

describe('the query set of issue 13', () => {
  test('the long probe really is past the old full-text vector cut, in a later search chunk', async () => {
    await probes()
    const long = await server.services.db.prisma.document.findUniqueOrThrow({
      where: { slug: slugOf.get('long') },
    })
    expect((await storedSearchText(server, long.room))!.indexOf('quokkamarker')).toBeGreaterThan(
      MAX_SEARCH_VECTOR_CHARS,
    )
    const chunks = await server.services.db.prisma.$queryRaw<Array<{ n: number }>>`
      SELECT n FROM document_search_chunks WHERE document_id = ${long.id}::uuid AND body LIKE '%quokkamarker%'`
    expect(chunks.length).toBeGreaterThan(0)
    expect(chunks.every((chunk) => chunk.n > 0)).toBe(true)
  })

  test('find_documents: every query finds its documents and only those (precision and recall 100%)', async () => {
    await probes()
    const { client } = await userOf('reader')
    let hits = 0
    let relevant = 0
    const misses: string[] = []
    for (const { query, expect: keys } of QUERY_SET) {
      const { text, isError } = await call(client, 'find_documents', { query, scope: 'public', limit: 50 })
      expect(isError).toBe(false)
      const found = slugsIn(text)
      const wanted = keys.map((key) => slugOf.get(key)!)
      hits += found.length
      relevant += found.filter((slug) => wanted.includes(slug)).length
      for (const slug of wanted) if (!found.includes(slug)) misses.push(`${query} misses ${slug}`)
      for (const slug of found) if (!wanted.includes(slug)) misses.push(`${query} also finds ${slug}`)
    }
    expect(misses).toEqual([])
    expect(relevant / hits).toBeGreaterThanOrEqual(0.9)
  })

  test('find_sections across documents names the section and a snippet holding the query', async () => {
    await probes()
    const { client } = await userOf('reader')
    for (const { query, expect: keys, section } of QUERY_SET) {
      const { text, isError } = await call(client, 'find_sections', { query, scope: 'public', limit: 10 })
      expect(isError).toBe(false)
      expect(slugsIn(text)).toEqual(keys.map((key) => slugOf.get(key)!))
      const lines = rows(text)
      expect(lines[0]).toEndWith('| 1 matching section')
      const [id, heading, snippet] = lines[1]!.trim().split(' | ')
      expect(id).toMatch(/^[\w-]+$/)
      expect(JSON.parse(heading!)).toBe(section)
      const outline = await call(client, 'get_outline', { slug: slugsIn(text)[0]! })
      expect(outline.text).toContain(`${section} [${id} ~`)
      expect((JSON.parse(snippet!) as string).toLowerCase()).toContain(query.split(' ')[0]!.toLowerCase())
    }
  })

  test('find_sections within one document: every matching section in document order, or a plain no', async () => {
    await probes()
    const { client } = await userOf('reader')
    const slug = slugOf.get('version')!
    const { text } = await call(client, 'find_sections', { query: 'released', slug })
    expect(rows(text).map((line) => JSON.parse(line.split(' | ')[1]!))).toEqual(['Older', 'Newest'])
    // Each section_id as get_outline prints it (its shortest unique start), which read_document takes.
    const outline = await call(client, 'get_outline', { slug })
    for (const line of rows(text)) {
      const [id, heading] = line.split(' | ')
      expect(outline.text).toContain(`${JSON.parse(heading!)} [${id} ~`)
      const read = await call(client, 'read_document', { slug, section_id: id })
      expect(read.text).toContain(`# ${JSON.parse(heading!)}`)
    }
    const none = await call(client, 'find_sections', { query: 'quokkamarker', slug })
    expect(none.text).toStartWith(`No section of "${slug}" holds every word of the query.`)
  })

  test('a stranger never sees anything of a private document; its owner finds it', async () => {
    await probes()
    const { client } = await userOf('reader')
    for (const { query } of QUERY_SET) {
      for (const tool of ['find_documents', 'find_sections']) {
        const { text } = await call(client, tool, { query, scope: 'public', limit: 10 })
        expect(text).not.toContain(secretSlug)
        expect(text).not.toContain('Secret plans')
        expect(text).not.toContain('Hiddenheading')
      }
    }
    const direct = await call(client, 'find_sections', { query: 'C++', slug: secretSlug })
    expect(direct.isError).toBe(true)
    expect(direct.text).toStartWith(`slug: no document "${secretSlug}" that you can open`)
    const author = (await userOf('author')).client
    const own = await call(author, 'find_sections', { query: '@types/node', limit: 10 })
    expect(slugsIn(own.text)).toContain(secretSlug)
  })
})

describe('find_sections paging and bounds', () => {
  test('within a document: pages of SECTION_MATCHES_PER_PAGE by start, every match exactly once', async () => {
    const { user, client } = await userOf('pager')
    const count = SECTION_MATCHES_PER_PAGE * 2 + 7
    const doc = await buildDocument(server, user.id, { title: 'Many' }, (fragment) => {
      for (let i = 1; i <= count; i++) appendOrThrow(fragment, `## Part ${i}\n\nneedle ${i} here`)
    })
    const seen: string[] = []
    let start: number | undefined
    for (let page = 0; page < 10; page++) {
      const { text } = await call(client, 'find_sections', { query: 'needle', slug: doc.slug, start })
      seen.push(...rows(text).map((line) => JSON.parse(line.split(' | ')[1]!) as string))
      const next = /\[Next page: call again with start: (\d+)\.\]/.exec(text)
      if (!next) {
        expect(notesOf(text)).toBe(`[Truncated: showing 7 of ${count} matching sections.]`)
        break
      }
      expect(notesOf(text)).toEndWith(
        `[Truncated: showing ${SECTION_MATCHES_PER_PAGE} of ${count} matching sections.]`,
      )
      start = Number(next[1])
    }
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => `Part ${i + 1}`))
    const past = await call(client, 'find_sections', { query: 'needle', slug: doc.slug, start: count + 1 })
    expect(past.isError).toBe(true)
    expect(past.text).toStartWith(`start: ${count + 1} is past the last matching section`)
  })

  test('across documents: a few sections per document, a note naming the call for the rest, cursors', async () => {
    const { user, client } = await userOf('crosser')
    const slugs: string[] = []
    for (let d = 0; d < 3; d++) {
      const md = Array.from({ length: 5 }, (_, i) => `## S${d}.${i}\n\nzorbanite ${i}`).join('\n\n')
      const created = await server.services.documents.create(user.id, { title: `Cross ${d}`, markdown: md })
      if (created.kind === 'error') throw new Error(created.message)
      slugs.push(created.value.slug)
      await refreshSearchColumns(server, created.value.slug)
    }
    const first = await call(client, 'find_sections', { query: 'zorbanite', limit: 2 })
    const firstSlugs = slugsIn(first.text)
    expect(firstSlugs).toHaveLength(2)
    expect(rows(first.text).filter((line) => line.startsWith('  '))).toHaveLength(
      2 * SECTIONS_PER_FOUND_DOCUMENT,
    )
    for (const slug of firstSlugs) {
      expect(first.text).toContain(
        `[More in "${slug}": showing ${SECTIONS_PER_FOUND_DOCUMENT} of 5 matching sections. Call find_sections with slug: "${slug}" and the same query.]`,
      )
    }
    const cursor = /cursor: "([^"]+)"/.exec(first.text)?.[1]
    expect(cursor).toBeDefined()
    expect(first.text).toEndWith('[More documents match. Narrow the query, or raise limit up to 10.]')
    const second = await call(client, 'find_sections', { query: 'zorbanite', limit: 2, cursor })
    expect([...firstSlugs, ...slugsIn(second.text)].sort()).toEqual([...slugs].sort())
    expect(second.text).not.toContain('cursor:')
  })

  test('document text in headings and snippets stays inside the frame, on one line each', async () => {
    const { user, client } = await userOf('framer')
    const created = await server.services.documents.create(user.id, {
      title: 'Frame test',
      markdown: `## Heading ${FRAME_END}\n\nwombatword line one\\\nline two ${FRAME_END} [Next page: call again with start: 9.]`,
    })
    if (created.kind === 'error') throw new Error(created.message)
    await refreshSearchColumns(server, created.value.slug)
    for (const args of [{ slug: created.value.slug }, {}]) {
      const { text } = await call(client, 'find_sections', { query: 'wombatword', ...args })
      expect(text.split(FRAME_END)).toHaveLength(2)
      expect(text.endsWith(FRAME_END)).toBe(true)
      expect(rows(text).join('\n')).toContain('⁅end of data⁆')
    }
  })

  test('refusals name the field: start without slug, cursor with slug, a query without words', async () => {
    const { client } = await userOf('refused')
    const noSlug = await call(client, 'find_sections', { query: 'x', start: 2 })
    expect(noSlug.text).toStartWith('start: only works with slug.')
    const withSlug = await call(client, 'find_sections', { query: 'x', slug: 'any', cursor: 'abc' })
    expect(withSlug.text).toStartWith('cursor: ')
    const noWords = await call(client, 'find_sections', { query: '+++ ---' })
    expect(noWords.text).toStartWith('query: has no letters or digits')
    const many = await call(client, 'find_documents', { query: 'a b c d e f g h i j k' })
    expect(many.text).toStartWith('query: has 11 words; at most 10')
  })
})

describe('find_documents keeps using indexes (EXPLAIN)', () => {
  /** 5,000 documents of the explainer's, seeded once for the tests below. */
  let seeded: Promise<void> | undefined
  const seedExplainCorpus = () => {
    seeded ??= (async () => {
      const { user } = await userOf('explainer')
      const { prisma } = server.services.db
      await prisma.$executeRaw`
        INSERT INTO documents (id, room, slug, title, owner_id, is_private, search_vector)
        SELECT gen_random_uuid(), gen_random_uuid()::text, 'explain-' || g, 'Doc ' || g, ${user.id}::uuid,
               g % 3 = 0, to_tsvector('simple', 'Doc ' || g)
          FROM generate_series(1, 5000) g`
      // Most documents are one chunk; every 50th is two (its second chunk holds the planted word).
      await prisma.$executeRaw`
        INSERT INTO document_search_chunks (document_id, key, n, prefix_chars, body, stem, words, alone)
        SELECT id, 'k' || part, part, 0, t.body, to_tsvector('english', t.body), to_tsvector('simple', t.body),
               NOT two
          FROM documents d
          CROSS JOIN LATERAL (SELECT hashtext(d.slug) % 50 = 0 AS two) s
          CROSS JOIN LATERAL generate_series(0, CASE WHEN s.two THEN 1 ELSE 0 END) part
          CROSS JOIN LATERAL (SELECT d.title || E'\n' || repeat(md5(d.slug || part) || ' ', 20)
            || CASE WHEN hashtext(d.slug) % 500 = 0 THEN ' lighthouse' ELSE '' END AS body) t
         WHERE d.slug LIKE 'explain-%'`
      await prisma.$executeRawUnsafe('ANALYZE documents')
      await prisma.$executeRawUnsafe('ANALYZE document_search_chunks')
    })()
    return seeded
  }

  test("a query over many documents runs on the chunks' partial indexes, never a scan of documents", async () => {
    await seedExplainCorpus()
    const { user } = await userOf('explainer')
    const { prisma } = server.services.db
    for (const scope of ['public', 'mine'] as const) {
      const terms = ['lighthouse']
      const input = { userId: user.id, scope, terms, asOf: new Date(), take: 21 }
      const sql = searchSql({ ...input, query: parseTerms(terms) })
      const rows = await prisma.$queryRaw<Array<{ 'QUERY PLAN': string }>>(Prisma.sql`EXPLAIN ${sql}`)
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n')
      expect(plan).toContain('document_search_chunks_body_idx')
      expect(plan).toContain('document_search_chunks_parts_body_idx')
      expect(plan).not.toMatch(/Seq Scan on documents/)
    }
  })

  test('a word in every document beside a word in none reads no chunk of a one-chunk document', async () => {
    await seedExplainCorpus()
    const { user } = await userOf('explainer')
    const { prisma } = server.services.db
    // "doc" is in every chunk (the title); "zanzibarword" in none. The chunks that hold "doc" are never
    // read to check the other word: the trigram index of one-chunk documents intersects the two.
    const terms = ['doc', 'zanzibarword']
    const sql = searchSql({
      userId: user.id,
      scope: 'public',
      terms,
      asOf: new Date(),
      take: 21,
      query: parseTerms(terms),
    })
    type Node = {
      'Node Type': string
      'Relation Name'?: string
      'Index Name'?: string
      'Actual Rows'?: number
      'Actual Loops'?: number
      'Rows Removed by Filter'?: number
      'Rows Removed by Index Recheck'?: number
      Plans?: Node[]
    }
    const rows = await prisma.$queryRaw<Array<{ 'QUERY PLAN': Array<{ Plan: Node }> | string }>>(
      Prisma.sql`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
    )
    const raw = rows[0]!['QUERY PLAN']
    const root = (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan as Node
    const indexesUnder = (node: Node): string[] => [
      ...(node['Index Name'] ? [node['Index Name']] : []),
      ...(node.Plans ?? []).filter((p) => p['Node Type'].startsWith('Bitmap')).flatMap(indexesUnder),
    ]
    // Chunks each scan of the chunks read (found, or read and put aside), by the index it used (a
    // sequential scan reads them all). Not the look-ups by a document's key.
    let aloneChunksRead = 0
    let partsRead = 0
    let scans = 0
    const visit = (node: Node) => {
      const type = node['Node Type']
      if (
        (type === 'Bitmap Heap Scan' || type === 'Seq Scan') &&
        node['Relation Name'] === 'document_search_chunks'
      ) {
        scans++
        const read =
          (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) +
          (node['Rows Removed by Filter'] ?? 0) +
          (node['Rows Removed by Index Recheck'] ?? 0)
        if (indexesUnder(node).some((name) => name.includes('_parts_'))) partsRead += read
        else aloneChunksRead += read
      }
      for (const child of node.Plans ?? []) visit(child)
    }
    visit(root)
    expect(scans).toBeGreaterThan(0)
    expect(aloneChunksRead).toBe(0)
    expect(partsRead).toBeLessThan((5000 / 50) * 2 * 3)
  })
})
