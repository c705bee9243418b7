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

/** The build before (importedPartsUpdate's): the whole document, read, then encoded. */
function whole(markdown: string, maxText: number) {
  const doc = builtInParts(markdown)
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
