/**
 * An import's state built in parts, each part written out and let go once measured (importedStateInParts
 * with a derivedStream), against the build it replaced (importedPartsUpdate: the whole document built, then
 * its outline with totals and its search text read off it, then encoded): the same state byte for byte and
 * the same outline and text, over the corpus, seeded random documents, long lists measured a batch at a
 * time (bullet, ordered from 7, task, nested items) and long blocks measured whole; and the state loads
 * with nothing pending. That the parts are let go is import-memory.slow.test.ts's (the worker's peak).
 */
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import * as Y from 'yjs'
import { importedStateInParts } from '../import-state.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { importMarkdownParts } from '../markdown/import-markdown.ts'
import { readPlainText } from '../read-document.ts'
import { derivedStream } from '../sections/derived-stream.ts'
import { readOutlineWithTotals } from '../sections/stored-totals.ts'
import { corpusFiles } from './corpus-files.ts'
import { builtInParts, CLIENT, zeroRandomDraws } from './import-builds.ts'
import { randomDocument } from './import-random.ts'
import { seededRandom } from './seeded-random.ts'

// Heading ids drawn as zeros on both sides, the client id set.
zeroRandomDraws()

/**
 * The build before (importedPartsUpdate's): the whole file parsed at once, the whole document built, read,
 * then encoded.
 */
function whole(markdown: string, maxText: number) {
  const doc = builtInParts(markdown, 'whole')
  if (typeof doc === 'string') return doc
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const derived = { text: readPlainText(fragment, maxText), outline: readOutlineWithTotals(fragment) }
  return { state: Y.encodeStateAsUpdate(doc), derived }
}

function inParts(markdown: string, maxText: number) {
  const imported = importMarkdownParts(markdown, { fallbackTitle: 'file' })
  if (imported.kind === 'error') return imported.message
  const stream = derivedStream(maxText)
  const state = importedStateInParts(imported.value, stream, undefined, CLIENT)
  return state.kind === 'error' ? state.message : { state: state.value, derived: stream.finish() }
}

function expectSame(markdown: string, maxText = 1_000_000) {
  const before = whole(markdown, maxText)
  const after = inParts(markdown, maxText)
  if (typeof before === 'string') return expect(after).toBe(before)
  if (typeof after === 'string') throw new Error(`the build in parts refused: ${after}`)
  expect(after.derived).toEqual(before.derived)
  expect(Buffer.from(after.state).equals(Buffer.from(before.state))).toBe(true)
  // And it loads: the same document as the whole build's.
  const loaded = new Y.Doc()
  Y.applyUpdate(loaded, after.state)
  expect(loaded.store.pendingStructs).toBeNull()
  expect(loaded.getXmlFragment(FRAGMENT_NAME).toString().length).toBeGreaterThan(0)
}

describe('an import state built in parts and let go', () => {
  test('is the same state, outline and text as the whole build on every file of the corpus', () => {
    for (const file of corpusFiles()) expectSame(readFileSync(file, 'utf8'))
  })
})

describe('the build in parts, on shapes the corpus lacks', () => {
  test('seeded random documents, and search text cut at several lengths', () => {
    const rng = seededRandom(20_261_203)
    for (let run = 0; run < 60; run++) {
      const markdown = randomDocument(rng, 1 + Math.floor(rng() * 40))
      expectSame(markdown, [1_000_000, 200, 1][run % 3]!)
    }
  })

  test('long lists measured a batch at a time, long blocks measured whole', () => {
    expectSame(`# T\n\n${'- item\n'.repeat(3_000)}`)
    expectSame(`# T\n\n${'- item\n'.repeat(3_000)}`, 50)
    expectSame(`# T\n\n${Array.from({ length: 2_500 }, (_, i) => `${i + 7}. *n* ${i}\n`).join('')}`)
    expectSame(`# T\n\nbefore\n\n${'- [x] done\n- [ ] open\n'.repeat(700)}\n## after\n\ntext\n`)
    expectSame(`# T\n\n${'- a\n  - nested **b**\n\n'.repeat(1_200)}`)
    expectSame(`# T\n\n${'> quoted\n>\n'.repeat(1_500)}\n${'- [x] done\n'.repeat(1_200)}`)
    expectSame(`# T\n\n| a | b |\n| :- | -: |\n${'| x | **y** |\n'.repeat(1_500)}`)
    expectSame(`# T\n\n${'## part\n\ntext\n\n'.repeat(2_000)}# Second title\n\n1. one\n2. two\n`)
  })
})

/** `n` numbered lines made by `line(i)`. */
const lines = (n: number, line: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => line(i)).join('')

describe('long lists read a slice of items at a time (import-blocks.ts), against the file parsed whole', () => {
  test('flat, ordered from a start number, followed by other blocks, with and without a blank line', () => {
    expectSame(`# T\n\n${'- item\n'.repeat(3_500)}\n## after\n\ntext\n`)
    expectSame(`# T\n\n${lines(2_600, (i) => `${i + 7}. *n* ${i}\n`)}paragraph interrupting? no: lazy\n`)
    expectSame(`# T\n\n${lines(2_100, (i) => `${i + 1}) x\n`)}\n1. another list\n`)
    expectSame(`# T\n\n${'- a\n'.repeat(1_500)}# Heading\n> quote\n\`\`\`\ncode\n\`\`\`\n`)
    expectSame(`# T\n\n${'* a\n'.repeat(1_500)}* * *\n${'* b\n'.repeat(1_200)}+ other marker\n`)
    expectSame(`---\ntitle: x\n---\n# T\n\n${'- item\r\n'.repeat(2_200)}\r\ntext\r\n`)
  })

  test('task lists and bullet lists mixing task and plain items, runs crossing slices and batches', () => {
    expectSame(`# T\n\n${'- [x] done\n- [ ] open\n'.repeat(1_600)}`)
    expectSame(
      `# T\n\n${'- [ ] t\n'.repeat(1_500)}${'- p\n'.repeat(1_000)}${'- [x] t\n'.repeat(1_001)}${'- p\n'.repeat(999)}- [x] last\n`,
    )
    expectSame(`# T\n\n${lines(3_000, (i) => (i % 700 < 350 ? '- [ ] t\n' : '- \\[ ] escaped\n'))}`)
  })

  test('nested, loose, lazy and indented content inside the items', () => {
    expectSame(`# T\n\n${'- a\n  - nested **b**\n  1. deeper\n\n'.repeat(1_200)}`)
    expectSame(`# T\n\n${'- tight\n'.repeat(1_500)}\n${'- tight again\n'.repeat(1_500)}`)
    expectSame(`# T\n\n${'- item\nlazy continuation\n'.repeat(2_000)}`)
    expectSame(`# T\n\n${'- item\n\n      indented code\n'.repeat(1_500)}`)
    expectSame(`# T\n\n${'- > quoted\n  > more\n- ```\n  fenced\n  ```\n'.repeat(800)}`)
    expectSame(`# T\n\n${'-\n'.repeat(1_200)}${'- \n\n  foo\n'.repeat(600)}`)
  })

  test('items that would start another block at the top of a file, and a list too deep to read in slices', () => {
    // `- a | b` over `  |-|-|` is an item holding a table here, a table at the top of a file: no slice
    // starts there.
    expectSame(`# T\n\n- first\n${'- c\n- a | b\n  |-|-|\n'.repeat(1_500)}`)
    expectSame(`# T\n\n- first\n${'- a | b\n  |-|-|\n'.repeat(2_500)}`)
    let deep = ''
    for (let level = 0; level < 99; level++) deep += `${'  '.repeat(level)}- d${level}\n`
    expectSame(`# T\n\n${'- item\n'.repeat(1_100)}${deep}${'- item\n'.repeat(100)}`)
  })

  test('references defined after the list, links and footnotes in its items', () => {
    expectSame(
      `# T\n\n${'- [link][r] and https://example.com/x[^1]\n'.repeat(1_500)}\n[r]: https://example.com/r\n`,
    )
    expectSame(`# T\n\n${'- [^1]: a footnote in an item\n'.repeat(1_100)}\n[^1]: defined\n`)
  })
})
