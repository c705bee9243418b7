/**
 * The store step's search refresh writes only the chunks an edit changed (documents/search-chunks.ts):
 * a word typed into the middle of a large document leaves every other chunk's row as it was (same
 * row version: not rewritten, its indexes not touched), and find_documents finds the word, and a phrase
 * whose words lie on both sides of a chunk boundary, on a real server with a real provider.
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
import type { RunningServer } from '../server.ts'

type ChunkRow = { key: string; n: number; rowVersion: string; prefixChars: number; body: string }

describe(`search chunks refreshed by the store step (${DATABASE_KIND})`, () => {
  let server!: RunningServer
  // searchRefreshMs 0 (the tests' default): every store refreshes the search text at once.
  useTestServer((s) => {
    server = s
  })

  const chunksOf = (documentId: string) =>
    server.services.db.prisma.$queryRaw<ChunkRow[]>`
      SELECT key, n, xmin::text AS "rowVersion", prefix_chars AS "prefixChars", body
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
        server.services.search.search({ userId: user.id, scope: 'mine', terms, asOf: new Date(), take: 5 })
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
})
