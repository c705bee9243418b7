/**
 * Measurement 3: find_documents over a large database, on PGlite and on PostgreSQL. A deterministic corpus
 * (owners, one owner with many documents, titles plus ~2 KB of text each, some shared) is inserted
 * straight into the database; then the tool (through an in-memory MCP client, so HTTP, measured in
 * measurement 4, is left out) is timed side by side with the SQL it runs, executed raw on the same client.
 * Every statement's EXPLAIN is checked: a sequential scan of `documents` fails the bench. A broad query
 * (the corpus's two most common words, in most documents) is timed too: it ranks a bounded set.
 */

import { Prisma, type PrismaClient } from '@collab/hocuspocus.server/src/db/generated/client.ts'
import {
  documentsByIdsSql,
  listingSql,
  RANK_SLICE_DOCUMENTS,
  rankedSql,
  type SearchInput,
  searchDocuments,
  searchSql,
  snapshotSliceSql,
} from '@collab/hocuspocus.server/src/documents/search.ts'
import { parseTerms } from '@collab/hocuspocus.server/src/documents/search-query.ts'
import { snippetsSql } from '@collab/hocuspocus.server/src/documents/search-rank.ts'
import { MAX_RANKED_DOCUMENTS } from '@collab/hocuspocus.server/src/limits.ts'
import {
  FIND_SNIPPET_CHARS,
  MAX_FIND_SNAPSHOT_DOCUMENTS,
} from '@collab/hocuspocus.server/src/modules/mcp/limits.ts'
import { call, connectInMemory } from '@collab/test-support/mcp'
import { startFreshServer, userWithToken } from '@collab/test-support/server'
import { percentile, prng, progress, type Rng, summarize } from './stats.ts'
import type { Row } from './types.ts'

export type CorpusSize = { documents: number; owners: number; bigOwnerDocuments: number; shared: number }

export const FULL_CORPUS: CorpusSize = {
  documents: 100_000,
  owners: 1_000,
  bigOwnerDocuments: 10_000,
  shared: 500,
}
/** Quick: past page 200 of 20 rows for the big owner, who holds about the same share (~10%) as in full. */
export const QUICK_CORPUS: CorpusSize = {
  documents: 40_000,
  owners: 400,
  bigOwnerDocuments: 4_200,
  shared: 200,
}

/** The word planted in every 100th document, so the full-text query matches ~1% of the corpus. */
const PLANTED_WORD = 'lighthouse'
const PAGE = 20

/** A vocabulary of pseudo-words, drawn with a skew so a few are common and most are rare. */
function vocabulary(rng: Rng, size: number): string[] {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vel', 'no', 'qui', 'bar', 'des', 'fo', 'gil', 'ha']
  const words = new Set<string>()
  while (words.size < size) {
    let w = ''
    const n = 2 + Math.floor(rng() * 3)
    for (let i = 0; i < n; i++) w += syllables[Math.floor(rng() * syllables.length)]
    words.add(w)
  }
  return [...words]
}

function documentText(rng: Rng, words: string[], i: number): string {
  const out: string[] = []
  let chars = 0
  while (chars < 2_000) {
    const word = words[Math.floor(words.length * rng() ** 3)]!
    out.push(word)
    chars += word.length + 1
  }
  if (i % 100 === 0) out.splice(Math.floor(out.length / 2), 0, PLANTED_WORD)
  return out.join(' ')
}

const CORPUS_SEED = 20_261_129

/** The corpus's two most drawn words (the vocabulary's first two: words are drawn with a skew to the start). */
function broadTerms(): string[] {
  return vocabulary(prng(CORPUS_SEED), 5_000).slice(0, 2)
}

/** The statements a query runs, raw on the same client (documents/search.ts searchDocuments). */
async function rawSearch(prisma: PrismaClient, input: SearchInput): Promise<Array<{ id: string }>> {
  return (await searchDocuments(prisma, input)).rows
}

/** Inserts the corpus in batches; the big owner is `bigOwnerId`, the other owners are created here. */
async function seedCorpus(prisma: PrismaClient, size: CorpusSize, bigOwnerId: string, label: string) {
  const rng = prng(CORPUS_SEED)
  const words = vocabulary(rng, 5_000)
  await prisma.$executeRaw`
    INSERT INTO users (id, handle)
    SELECT gen_random_uuid(), 'bench-owner-' || g FROM generate_series(1, ${size.owners - 1}::int) g`
  const others = (
    await prisma.$queryRaw<Array<{ id: string }>>`
      SELECT id::text AS id FROM users WHERE handle LIKE 'bench-owner-%' ORDER BY handle`
  ).map((r) => r.id)
  const start = Date.UTC(2026, 0, 1)
  const batch = 1_000
  progress(label, 0, size.documents)
  for (let from = 0; from < size.documents; from += batch) {
    const slugs: string[] = []
    const titles: string[] = []
    const texts: string[] = []
    const owners: string[] = []
    const privates: boolean[] = []
    const changed: string[] = []
    for (let i = from; i < Math.min(size.documents, from + batch); i++) {
      slugs.push(`bench-doc-${i}`)
      titles.push(
        `Doc ${i} ${words[Math.floor(rng() * words.length)]} ${words[Math.floor(rng() * words.length)]}`,
      )
      texts.push(documentText(rng, words, i))
      // Every n-th document is the big owner's, spread through the corpus rather than in one block.
      const bigEvery = size.documents / size.bigOwnerDocuments
      owners.push(Math.floor(i % bigEvery) === 0 ? bigOwnerId : others[i % others.length]!)
      privates.push(rng() < 0.7)
      changed.push(new Date(start + Math.floor(rng() * 300 * 86_400_000)).toISOString())
    }
    await prisma.$executeRaw`
      WITH made AS (
        INSERT INTO documents (id, room, slug, title, owner_id, is_private, created_at, content_updated_at, search_vector)
        SELECT gen_random_uuid(), gen_random_uuid()::text, s, t, o::uuid, p, c - interval '1 day', c,
               setweight(to_tsvector('simple', t), 'A')
          FROM unnest(${slugs}::text[], ${titles}::text[], ${owners}::text[], ${privates}::boolean[],
                      ${changed}::timestamptz[]) AS u(s, t, o, p, c)
        RETURNING id, slug, title)
      INSERT INTO document_search_chunks (document_id, key, n, prefix_chars, body, stem, words, alone)
      SELECT made.id, md5(b.body), 0, 0, b.body, to_tsvector('english', b.body),
             setweight(to_tsvector('simple', b.body), 'B'), true
        FROM made JOIN unnest(${slugs}::text[], ${texts}::text[]) AS u(s, x) ON u.s = made.slug
        CROSS JOIN LATERAL (SELECT made.title || E'\n' || u.x AS body) b`
    progress(label, Math.min(size.documents, from + batch), size.documents)
  }
  await prisma.$executeRaw`
    INSERT INTO document_members (document_id, user_id, role)
    SELECT id, ${bigOwnerId}::uuid, 'editor' FROM documents
     WHERE owner_id <> ${bigOwnerId}::uuid ORDER BY slug LIMIT ${size.shared}`
  // VACUUM as autovacuum would have by now: it also merges the GIN index's pending list (bulk inserts land there).
  await prisma.$executeRawUnsafe('VACUUM ANALYZE')
}

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] }

/** Each node of the plan as "Type(relation or index)", and whether it scans documents sequentially. */
async function explain(prisma: PrismaClient, sql: Prisma.Sql) {
  const rows = await prisma.$queryRaw<Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>>(
    Prisma.sql`EXPLAIN (FORMAT JSON) ${sql}`,
  )
  const raw = rows[0]!['QUERY PLAN']
  const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan as PlanNode
  const nodes: string[] = []
  let seqScanDocuments = false
  const walk = (node: PlanNode) => {
    const on = node['Index Name'] ?? node['Relation Name']
    nodes.push(on ? `${node['Node Type']}(${on})` : node['Node Type'])
    if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'documents') seqScanDocuments = true
    for (const child of node.Plans ?? []) walk(child)
  }
  walk(plan)
  return { nodes, seqScanDocuments }
}

/** How many public documents hold every one of these words as written (what the broad row's name says). */
function matchCountSql(words: string[]): Prisma.Sql {
  const each = words.map((word) => Prisma.sql`c.body ILIKE ${`%${word}%`}`)
  return Prisma.sql`SELECT count(*)::int AS n FROM documents d JOIN document_search_chunks c ON c.document_id = d.id
    WHERE d.is_private = false AND d.deleted_at IS NULL AND ${Prisma.join(each, ' AND ')}`
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t = Bun.nanoseconds()
  await fn()
  return (Bun.nanoseconds() - t) / 1e6
}

const cursorOf = (text: string) => /cursor: "([^"]+)"/.exec(text)?.[1]

export async function measureFind(
  database: { name: string; postgresUrl: string | null },
  opts: { quick: boolean },
): Promise<Row[]> {
  const size = opts.quick ? QUICK_CORPUS : FULL_CORPUS
  const runs = opts.quick ? 9 : 101 // p99 of 101 samples is not just the slowest one
  const h = await startFreshServer({ postgresUrl: database.postgresUrl })
  const rows: Row[] = []
  try {
    const { user, token } = await userWithToken(h.server, 'bench-finder')
    const { prisma } = h.server.services.db
    await seedCorpus(
      prisma,
      size,
      user.id,
      `corpus ${database.name} ${size.documents.toLocaleString('en-US')}`,
    )
    const client = await connectInMemory(h.server, token)
    const tool = async (args: Record<string, unknown>) => {
      const answer = await call(client, 'find_documents', args)
      if (answer.isError) throw new Error(`find_documents ${JSON.stringify(args)}: ${answer.text}`)
      return answer.text
    }
    const asOf = new Date()
    const base: Omit<SearchInput, 'take'> = { userId: user.id, scope: 'mine', terms: null, asOf }
    const terms = [PLANTED_WORD]
    const ftsInput: SearchInput = { userId: user.id, scope: 'public', terms, asOf, take: PAGE + 1 }
    const broad = broadTerms()
    const broadInput: SearchInput = { ...ftsInput, terms: broad }

    // Page through once to reach page 200 (its cursor can be asked again: the page is the same).
    let cursor = cursorOf(await tool({}))
    const page2Ms = await timeAsync(async () => {
      cursor = cursorOf(await tool({ cursor }))
    })
    for (let page = 3; page < 200; page++) cursor = cursorOf(await tool({ cursor }))
    if (!cursor) throw new Error('the corpus ran out before page 200')
    const page200Cursor = cursor
    const [snapshot] = await prisma.$queryRaw<Array<{ id: string }>>`
      SELECT id::text AS id FROM find_snapshots WHERE user_id = ${user.id}::uuid ORDER BY created_at DESC LIMIT 1`
    const sliceInput = { snapshotId: snapshot!.id, userId: user.id, offset: 199 * PAGE - PAGE, count: PAGE }
    const sliceIds = (await prisma.$queryRaw<Array<{ ids: string[] }>>(snapshotSliceSql(sliceInput)))[0]!.ids

    const variants = {
      'page 1: tool': () => tool({}),
      'page 1: raw SQL': () => prisma.$queryRaw(listingSql({ ...base, take: PAGE + 1 })),
      'page 200: tool': () => tool({ cursor: page200Cursor }),
      'page 200: raw SQL': async () => {
        await prisma.$queryRaw(snapshotSliceSql(sliceInput))
        await prisma.$queryRaw(documentsByIdsSql({ userId: user.id, scope: 'mine', ids: sliceIds }))
      },
      'full text: tool': () => tool({ query: PLANTED_WORD, scope: 'public' }),
      // The statements the tool runs for a query: the ranked search, then the snippets of the page shown.
      'full text: raw SQL': async () => {
        const found = await rawSearch(prisma, ftsInput)
        const ids = found.slice(0, PAGE).map((row) => row.id)
        await prisma.$queryRaw(snippetsSql({ ids, query: parseTerms(terms), chars: FIND_SNIPPET_CHARS }))
      },
      'broad: tool': () => tool({ query: broad.join(' '), scope: 'public' }),
      'broad: raw SQL': async () => {
        const found = await rawSearch(prisma, broadInput)
        const ids = found.slice(0, PAGE).map((row) => row.id)
        await prisma.$queryRaw(snippetsSql({ ids, query: parseTerms(broad), chars: FIND_SNIPPET_CHARS }))
      },
    }
    const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, [] as number[]])) as Record<
      keyof typeof variants,
      number[]
    >
    for (let i = -2; i < runs; i++) {
      for (const [name, run] of Object.entries(variants) as Array<
        [keyof typeof variants, () => Promise<unknown>]
      >) {
        const ms = await timeAsync(run)
        if (i >= 0) samples[name].push(ms)
      }
    }
    for (const list of Object.values(samples)) list.sort((a, b) => a - b)
    const p99 = (k: keyof typeof variants) => percentile(samples[k], 99)
    const p50 = (k: keyof typeof variants) => percentile(samples[k], 50)
    const corpus = `${size.documents.toLocaleString('en-US')} docs, ${database.name}`
    const [broadMatches] = await prisma.$queryRaw<Array<{ n: number }>>(matchCountSql(broad))
    const named = {
      'page 1': ' (mine)',
      'page 200': ' (mine)',
      'full text': ` ("${PLANTED_WORD}", public)`,
      broad: ` ("${broad.join(' ')}", public: in ${broadMatches!.n.toLocaleString('en-US')} public documents, ${MAX_RANKED_DOCUMENTS.toLocaleString('en-US')} ranked)`,
    }
    for (const what of ['page 1', 'page 200', 'full text', 'broad'] as const) {
      const ours = `${what}: tool` as const
      const raw = `${what}: raw SQL` as const
      rows.push({
        measure: `find_documents ${what === 'broad' ? 'broad query' : what}${named[what]}`,
        size: corpus,
        variants: { tool: summarize(samples[ours]), 'raw SQL': summarize(samples[raw]) },
        ratios: { 'tool p99 / raw p99': p99(ours) / p99(raw) },
        extra: { 'tool p50 ms': p50(ours), 'tool p99 ms': p99(ours), 'raw p99 ms': p99(raw) },
        target: { text: 'p99 ≤ 2× the raw SQL', met: p99(ours) <= 2 * p99(raw) },
      })
    }
    rows.push({
      measure: 'find_documents page 200 vs page 1 (tool)',
      size: corpus,
      variants: {
        'page 200': summarize(samples['page 200: tool']),
        'page 1': summarize(samples['page 1: tool']),
      },
      ratios: { 'page 200 p50 / page 1 p50': p50('page 200: tool') / p50('page 1: tool') },
      extra: {
        'page 2 ms (takes the snapshot, once)': page2Ms,
        'snapshot rows': Math.min(size.bigOwnerDocuments + size.shared, MAX_FIND_SNAPSHOT_DOCUMENTS),
      },
      target: {
        text: 'page 200 within 2× of page 1',
        met: p50('page 200: tool') <= 2 * p50('page 1: tool'),
      },
    })

    // Every statement find_documents runs, explained on this corpus.
    const statements: Record<string, Prisma.Sql> = {
      'page 1 (mine)': listingSql({ ...base, take: PAGE + 1 }),
      'page 2 (mine, the whole run)': listingSql({ ...base, take: MAX_FIND_SNAPSHOT_DOCUMENTS + 1 }),
      'full text (mine)': searchSql({ ...base, terms, take: PAGE + 1, query: parseTerms(terms) }),
      'full text (public)': searchSql({ ...ftsInput, query: parseTerms(terms) }),
      'broad query, first (public)': searchSql({ ...broadInput, query: parseTerms(broad) }),
      'broad query, ranked among the recent (public)': rankedSql({
        ...broadInput,
        query: parseTerms(broad),
        ids: (
          await prisma.$queryRaw<Array<{ id: string }>>(
            listingSql({ ...broadInput, take: RANK_SLICE_DOCUMENTS }),
          )
        ).map((row) => row.id),
        matched: false,
      }),
      'snapshot slice': snapshotSliceSql(sliceInput),
      'rows by id': documentsByIdsSql({ userId: user.id, scope: 'mine', ids: sliceIds }),
      'snippets of a page': snippetsSql({
        ids: sliceIds,
        query: parseTerms(terms),
        chars: FIND_SNIPPET_CHARS,
      }),
    }
    const plans: Record<string, string> = {}
    const scans: string[] = []
    for (const [name, sql] of Object.entries(statements)) {
      const plan = await explain(prisma, sql)
      plans[name] = [...new Set(plan.nodes)].join(', ')
      if (plan.seqScanDocuments) scans.push(name)
    }
    rows.push({
      measure: 'find_documents EXPLAIN: no sequential scan of documents',
      size: corpus,
      variants: {},
      ratios: {},
      extra: plans,
      target: {
        text: scans.length
          ? `sequential scan of documents in: ${scans.join('; ')}`
          : 'no Seq Scan on documents',
        met: scans.length === 0,
        enforced: true,
      },
    })
    await client.close()
  } finally {
    await h.close()
  }
  return rows
}
