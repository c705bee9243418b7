/**
 * Paging a section from its first read to its last shows every character of every block exactly once,
 * also when a block is longer than the budget (issue 13: a cut block's rest was skipped, 18% of Rust's
 * releases.md at max_chars 2000). Over real files from node_modules (READMEs and CHANGELOGs, read in place)
 * and a few extreme blocks, at drawn budgets: each read's text is checked character for character against
 * the blocks' own Markdown, and the parts shown of each block must tile it with no gap and no overlap.
 */
import { describe, expect, test } from 'bun:test'
import type * as Y from 'yjs'
import { listSections, renderSection } from '../index.ts'
import { blockMarkdown } from '../sections/render-section.ts'
import { locateSections } from '../sections/section-index.ts'
import { BlocksShown, expectOk, LONG_BLOCKS, loadDocument, RealFiles } from './fixtures.ts'

const PACKAGES = [
  'commander',
  'fast-check',
  'zod',
  'hono',
  'yjs',
  'lib0',
  'prosemirror-view',
  'pino-std-serializers',
]

/**
 * Reads section `sectionId` from its first read to its last at `maxChars`, following nextBlock and
 * nextOffset; checks each read's text and returns the blocks' Markdown and the [from, to) ranges shown
 * of each.
 */
function pageThrough(fragment: Y.XmlFragment, sectionId: string, maxChars: number): BlocksShown {
  const section = locateSections(fragment).find((s) => s.sectionId === sectionId)!
  const shown = new BlocksShown(section.blocks.map(blockMarkdown))
  let fromBlock: number | undefined
  let blockOffset: number | undefined
  for (let reads = 0; ; reads++) {
    expect(reads).toBeLessThan(100_000)
    const read = expectOk(renderSection(fragment, sectionId, { fromBlock, blockOffset, maxChars }))
    expect(read.shownChars).toBeLessThanOrEqual(Math.max(maxChars, 200))
    // The read's text, rebuilt from the blocks' Markdown: the heading line, then each part.
    const headingEnd = read.text.indexOf('\n\n')
    let expected = headingEnd === -1 ? read.text : read.text.slice(0, headingEnd)
    expected += shown.textOf(read)
    expect(read.text).toBe(expected)
    if (read.nextBlock === undefined) return shown
    fromBlock = read.nextBlock
    blockOffset = read.nextOffset
  }
}

/** Paging the section at `maxChars` shows every character of every block once. */
function expectPagedOnce(fragment: Y.XmlFragment, sectionId: string, maxChars: number) {
  pageThrough(fragment, sectionId, maxChars).expectTiled()
}

describe('paging a section shows every character exactly once', () => {
  const files = new RealFiles(PACKAGES)

  test('the real files are there', () => {
    expect(files.paths.length).toBeGreaterThanOrEqual(5)
  })

  test('every section of real files, at drawn budgets from 200 to 3,000 characters', () => {
    files.everySectionAtDrawnBudgets(12, expectPagedOnce)
  })

  test('one block far longer than the budget (a list, code, emoji, a long heading) is read in parts', () => {
    const { fragment } = loadDocument(
      'Doc',
      `## ${'h'.repeat(150)}\n\n${LONG_BLOCKS.list}\n\n${LONG_BLOCKS.code}\n\n${'😀'.repeat(400)}\n\nend`,
    )
    const sectionId = listSections(fragment)[1]!.sectionId
    for (const maxChars of [1, 333, 1_000, 4_096]) {
      expectPagedOnce(fragment, sectionId, maxChars)
    }
  })

  test('a block_offset past the block or inside a section without blocks is refused by name', () => {
    const { fragment } = loadDocument('Doc', '## S\n\nshort\n\n## Empty')
    const [, s, empty] = listSections(fragment)
    const past = renderSection(fragment, s!.sectionId, { fromBlock: 1, blockOffset: 5 })
    expect(past.kind === 'error' && past.reason).toBe('block_offset_out_of_range')
    expect(past.kind === 'error' && past.message).toStartWith('blockOffset: 5 is past the end of block 1')
    const none = renderSection(fragment, empty!.sectionId, { blockOffset: 3 })
    expect(none.kind === 'error' && none.reason).toBe('block_offset_out_of_range')
  })
})
