/**
 * An import built part by part (importMarkdownParts + writeImportedParts: each top-level block converted,
 * checked and built into the document as it comes, its tokens and JSON let go) against the build it
 * replaced: every body block converted first, then all of them made detached Yjs elements and inserted at
 * once. The same Yjs update byte for byte (client id and heading ids made the same on both sides), over the
 * real files of the corpus and seeded random documents (front matter, `#` titles and shifted headings,
 * reference links defined after their use, footnotes, lists nested, mixed and long, code fences, tables,
 * HTML blocks, quotes); and the token stream let go while it is read gives the blocks of the one kept.
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import MarkdownIt from 'markdown-it'
import * as Y from 'yjs'
import { buildDocumentBlocks, writeImportedParts } from '../create-document.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { footnoteDefinitions } from '../markdown/footnotes.ts'
import { importMarkdown } from '../markdown/import-markdown.ts'
import { checkNodes } from '../markdown/parse-markdown.ts'
import { tokensToBlocks } from '../markdown/tokens-to-blocks.ts'
import { refuseFor } from '../result.ts'
import { blocksToY } from '../yjs/build-y.ts'
import { corpusFiles } from './corpus-files.ts'
import { builtInParts, CLIENT, zeroRandomDraws } from './import-builds.ts'
import { randomDocument } from './import-random.ts'
import { seededRandom } from './seeded-random.ts'

const random = zeroRandomDraws()

/**
 * The build before parts: the whole file parsed at once, the whole body converted, then one insert of every
 * block's Yjs element.
 */
function wholeUpdate(markdown: string): Uint8Array | string {
  const imported = importMarkdown(markdown, { fallbackTitle: 'file', parse: 'whole' })
  if (imported.kind === 'error') return imported.message
  const heading = buildDocumentBlocks(imported.value.title)
  if (heading.kind === 'error') return heading.message
  const doc = new Y.Doc()
  doc.clientID = CLIENT
  const elements = blocksToY([...heading.value, ...imported.value.blocks])
  doc.transact(() => doc.getXmlFragment(FRAGMENT_NAME).insert(0, elements))
  return Y.encodeStateAsUpdate(doc)
}

/** The build in parts, as the import worker runs it. */
function partsUpdate(markdown: string): Uint8Array | string {
  const doc = builtInParts(markdown)
  return typeof doc === 'string' ? doc : Y.encodeStateAsUpdate(doc)
}

function expectSame(markdown: string) {
  const whole = wholeUpdate(markdown)
  const parts = partsUpdate(markdown)
  if (typeof whole === 'string') expect(parts).toBe(whole)
  else {
    expect(parts).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(parts as Uint8Array).equals(Buffer.from(whole))).toBe(true)
  }
}

/** markdown-it as an import reads a file (import-markdown.ts). */
function importParser(): MarkdownIt {
  const md = new MarkdownIt('default', { html: true, linkify: true, typographer: false })
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false })
  md.normalizeLink = (url) => url
  md.use(footnoteDefinitions)
  return md
}

describe('an import built in parts', () => {
  test('gives the same Yjs update, byte for byte, as the whole build on every file of the corpus', () => {
    const files = corpusFiles()
    expect(files.length).toBeGreaterThanOrEqual(20)
    for (const file of files) expectSame(readFileSync(file, 'utf8'))
    expect(random).toHaveBeenCalled()
  })

  test('and on seeded random documents, long lists and many sections included', () => {
    const rng = seededRandom(20_261_202)
    for (let run = 0; run < 60; run++) expectSame(randomDocument(rng, 1 + Math.floor(rng() * 40)))
    // Blocks of more children than one batch: built child batch by child batch, attributes last.
    expectSame(`# T\n\n${'- item\n'.repeat(3_000)}`)
    expectSame(`# T\n\n${Array.from({ length: 2_500 }, (_, i) => `${i + 7}. *n* ${i}\n`).join('')}`)
    expectSame(`# T\n\n${'> quoted\n>\n'.repeat(1_500)}\n${'- [x] done\n'.repeat(1_200)}`)
    expectSame(`# T\n\n| a | b |\n| :- | -: |\n${'| x | **y** |\n'.repeat(1_500)}`)
    expectSame(`# T\n\n${'## part\n\ntext\n\n'.repeat(2_000)}# Second title\n\n1. one\n2. two\n`)
  })

  test("a part's refusal ends the build with that refusal; nothing after it is read", () => {
    const doc = new Y.Doc()
    let read = 0
    function* parts() {
      read++
      yield checkNodes([{ type: 'paragraph', content: [{ type: 'text', text: 'kept' }] }])
      read++
      yield refuseFor('invalid_content', 'markdown: line 9: a table block is not valid here', 'markdown')
      read++
    }
    expect(writeImportedParts(doc, 'T', parts())).toMatchObject({
      kind: 'error',
      message: 'markdown: line 9: a table block is not valid here',
    })
    expect(read).toBe(2)
  })

  test('tokens let go as they are converted give the same blocks as tokens kept', () => {
    const md = importParser()
    const rng = seededRandom(7)
    const sources = [...corpusFiles().map((file) => readFileSync(file, 'utf8'))]
    for (let run = 0; run < 30; run++) sources.push(randomDocument(rng, 30))
    for (const source of sources) {
      const kept = tokensToBlocks(md.parse(source, {}), { splitMixedLists: true })
      const tokens = md.parse(source, {})
      const released = tokensToBlocks(tokens, { splitMixedLists: true, release: true })
      expect(released).toEqual(kept)
      expect(tokens.every((token) => token === undefined)).toBe(true)
    }
  })
})
