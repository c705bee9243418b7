/**
 * The store step's search refresh writes only the chunks an edit changed (documents/search-chunks.ts):
 * a word typed into the middle of a large document leaves every other chunk's row as it was (same
 * row version: not rewritten, its indexes not touched), and find_documents finds the word, and a phrase
 * whose words lie on both sides of a chunk boundary, on a real server with a real provider. A document
 * that grows past one chunk and shrinks back moves between the partial indexes of one-chunk documents
 * and of longer ones (`alone`) and is found by both ways.
 */
import { describe, expect, test } from 'bun:test'
import { FRAGMENT_NAME } from '@collab/doc-schema'
import { seededRandom } from '@collab/doc-schema/test-builders'
import { DATABASE_KIND } from '@collab/test-support/database'
import { buildDocument, paragraph } from '@collab/test-support/documents'
import { connectProvider } from '@collab/test-support/provider'
import { storedSearchText } from '@collab/test-support/search-text'
import { eventually, userWithToken, useTestServer } from '@collab/test-support/server'
import type * as Y from 'yjs'
import { type SearchChunk, writeSearchChunks } from '../documents/search-chunks.ts'
import type { RunningServer } from '../server.ts'

type ChunkRow = {
  key: string
  n: number
  rowVersion: string
  prefixChars: number
  body: string
  alone: boolean
}

describe(`search chunks refreshed by the store step (${DATABASE_KIND})`, () => {
  let server!: RunningServer
  // searchRefreshMs 0 (the tests' default): every store refreshes the search text at once.
  useTestServer((s) => {
    server = s
  })

  const chunksOf = (documentId: string) =>
    server.services.db.prisma.$queryRaw<ChunkRow[]>`
      SELECT key, n, xmin::text AS "rowVersion", prefix_chars AS "prefixChars", body, alone
        FROM document_search_chunks WHERE document_id = ${documentId}::uuid ORDER BY n`

  test('a word typed mid-document rewrites the chunks around it only; words across a boundary are found as a phrase', async () => {
    const { user, token } = await userWithToken(server, 'chunks')
    // ~340,000 characters in 1,500 paragraphs of random words, each sentence with a word of its own
    // (w<paragraph>x<sentence>).
    const random = seededRandom(7)
    const WORDS = ['the', 'harbour', 'and', 'lamp', 'keeper', 'night', 'storm', 'of', 'ledger', 'a', 'tide']
    const sentence = (i: number, j: number) =>
      `Sentence w${i}x${j} ${Array.from({ length: 6 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ')}.`
    const paragraphs = Array.from({ length: 1_500 }, (_, i) =>
      Array.from({ length: 5 }, (_, j) => sentence(i, j)).join(' '),
    )
    const doc = await buildDocument(server, user.id, { title: 'Chunked' }, (fragment) => {
      fragment.push(paragraphs.map((text) => paragraph(text)))
    })
    const editor = connectProvider(server.url, doc.room, token)
    try {
      await editor.ready
      const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
      /** Types `word` at the start of the top-level block `index` and waits for its refresh. */
      const typeAndRefresh = async (index: number, word: string) => {
        const text = (fragment.get(index) as Y.XmlElement).get(0) as Y.XmlText
        text.insert(0, `${word} `)
        await eventually(
          async () => expect(await storedSearchText(server, doc.room)).toContain(word),
          10_000,
          word,
        )
      }
      // The first store's refresh writes every chunk.
      await typeAndRefresh(1, 'warm')
      const before = await chunksOf(doc.id)
      expect(before.length).toBeGreaterThan(4)

      // A word typed into a paragraph in the middle.
      await typeAndRefresh(750, 'zanzibarword')
      const after = await chunksOf(doc.id)
      const untouched = after.filter((row) =>
        before.some((old) => old.key === row.key && old.rowVersion === row.rowVersion),
      )
      expect(after.length - untouched.length).toBeGreaterThanOrEqual(1)
      expect(after.length - untouched.length).toBeLessThanOrEqual(2)
      expect(untouched.length).toBeGreaterThanOrEqual(before.length - 2)

      const found = (terms: string[]) =>
        server.services.search
          .search({ userId: user.id, scope: 'mine', terms, asOf: new Date(), take: 5 })
          .then(({ rows }) => rows)
      expect((await found(['zanzibarword'])).map((row) => row.slug)).toEqual([doc.slug])
      // Terms in different chunks: as written (the first paragraph's word and a late one's), and in other
      // forms (neither is in the text as written).
      const [firstChunk, lastChunk] = [after[0]!.body, after.at(-1)!.body]
      expect(
        firstChunk.includes('w1x0') && !firstChunk.includes('w1499x0') && lastChunk.includes('w1499x0'),
      ).toBe(true)
      expect((await found(['w1499x0', 'w1x0'])).map((row) => row.slug)).toEqual([doc.slug])
      expect(firstChunk.includes('warm') && !firstChunk.includes('zanzibarword')).toBe(true)
      expect((await found(['warmed', 'zanzibarwords'])).map((row) => row.slug)).toEqual([doc.slug])
      expect((await found(['warmed', 'zanzibarwords', 'quokka'])).map((row) => row.slug)).toEqual([])

      // A phrase whose words lie on both sides of a chunk's start (after a space, so on one line), with a
      // word of its own: found only because the chunk repeats the end of the one before.
      const text = (await storedSearchText(server, doc.room))!
      let start = 0
      let phrase: string | undefined
      for (const row of after.slice(0, -1)) {
        start += row.body.length - row.prefixChars
        if (text[start - 1] !== ' ') continue
        const lineStart = text.lastIndexOf('\n', start) + 1
        const lineEnd = text.indexOf('\n', start)
        const words = text.slice(lineStart, lineEnd === -1 ? undefined : lineEnd).split(' ')
        let at = 0
        let k = 0
        while (lineStart + at < start) at += words[k++]!.length + 1
        // words[k] starts the chunk; the nearest word of its own before it, else after it.
        const own = (word: string) => /^w\d+x\d+$/.test(word)
        const before = words.slice(0, k).findLastIndex(own)
        const afterIt = words.findIndex((word, i) => i >= k && own(word))
        phrase =
          before >= 0 ? words.slice(before, k + 1).join(' ') : words.slice(k - 1, afterIt + 1).join(' ')
        break
      }
      expect(phrase).toBeDefined()
      expect(after.filter((row) => row.body.includes(phrase!)).length).toBe(1)
      expect(text.split(phrase!).length).toBe(2)
      expect((await found([phrase!])).map((row) => row.slug)).toEqual([doc.slug])
    } finally {
      editor.destroy()
    }
  }, 60_000)

  test('a document grown past one chunk is searched as one of several chunks, and as one again when it shrinks', async () => {
    const { user, token } = await userWithToken(server, 'grower')
    const doc = await buildDocument(server, user.id, { title: 'Grower' }, (fragment) => {
      fragment.push([paragraph('The quokkaword opens it.'), paragraph('The wallabyword ends it.')])
    })
    const found = (terms: string[]) =>
      server.services.search
        .search({ userId: user.id, scope: 'mine', terms, asOf: new Date(), take: 5 })
        .then(({ rows }) => rows.map((row) => row.slug))
    const editor = connectProvider(server.url, doc.room, token)
    try {
      await editor.ready
      const fragment = editor.doc.getXmlFragment(FRAGMENT_NAME)
      const refreshed = (word: string, present: boolean) =>
        eventually(
          async () => expect((await storedSearchText(server, doc.room))?.includes(word)).toBe(present),
          10_000,
          word,
        )
      // The title's heading, then quokka, bilby, wallaby.
      fragment.insert(2, [paragraph('A bilbyword between.')])
      await refreshed('bilbyword', true)
      const small = await chunksOf(doc.id)
      expect(small.map((row) => row.alone)).toEqual([true])
      expect(await found(['quokkaword', 'wallabyword'])).toEqual([doc.slug])

      // ~100,000 characters between the two words: several chunks, none alone, the words in different ones.
      const filler = Array.from({ length: 400 }, (_, i) =>
        paragraph(`Filler paragraph ${i} ${'of plain words that say nothing much '.repeat(6)}`),
      )
      fragment.insert(3, [...filler, paragraph('A numbatword near the end.')])
      await refreshed('numbatword', true)
      const large = await chunksOf(doc.id)
      expect(large.length).toBeGreaterThan(1)
      expect(large.every((row) => !row.alone)).toBe(true)
      expect(large[0]!.body.includes('quokkaword') && !large[0]!.body.includes('wallabyword')).toBe(true)
      expect(await found(['quokkaword', 'wallabyword'])).toEqual([doc.slug])
      expect(await found(['quokkawords', 'numbatwords'])).toEqual([doc.slug])
      expect(await found(['quokkaword', 'dingoword'])).toEqual([])

      // Back to one chunk: its row is alone again, found by the one-chunk indexes.
      fragment.delete(3, filler.length + 1)
      await refreshed('numbatword', false)
      const again = await chunksOf(doc.id)
      expect(again.map((row) => row.alone)).toEqual([true])
      expect(await found(['quokkaword', 'wallabyword'])).toEqual([doc.slug])
      expect(await found(['quokkawords', 'wallabywords'])).toEqual([doc.slug])
      expect(await found(['numbatword'])).toEqual([])
    } finally {
      editor.destroy()
    }
  }, 60_000)

  test('a kept chunk changes `alone` as its document gains a second chunk and loses it (the writer alone)', async () => {
    const { user } = await userWithToken(server, 'flipper')
    const doc = await buildDocument(server, user.id, { title: 'Flipper' }, () => {})
    const { prisma } = server.services.db
    const write = (chunks: SearchChunk[]) =>
      prisma.$transaction((tx) => writeSearchChunks(tx, doc.id, chunks))
    const first: SearchChunk = { key: 'first', n: 0, prefixChars: 0, body: 'Flipper\nthe emuword here' }
    const second: SearchChunk = { key: 'second', n: 1, prefixChars: 0, body: 'and the kiwiword there' }
    const found = (terms: string[]) =>
      server.services.search
        .search({ userId: user.id, scope: 'mine', terms, asOf: new Date(), take: 5 })
        .then(({ rows }) => rows.map((row) => row.slug))
    await write([first])
    const alone = await chunksOf(doc.id)
    expect(alone.map((row) => [row.key, row.alone])).toEqual([['first', true]])
    await write([first, second])
    const two = await chunksOf(doc.id)
    expect(two.map((row) => [row.key, row.alone])).toEqual([
      ['first', false],
      ['second', false],
    ])
    expect(await found(['emuword', 'kiwiword'])).toEqual([doc.slug])
    await write([first])
    expect((await chunksOf(doc.id)).map((row) => [row.key, row.alone])).toEqual([['first', true]])
    expect(await found(['emuword', 'flipper'])).toEqual([doc.slug])
    expect(await found(['emuword', 'kiwiword'])).toEqual([])
  })
})
