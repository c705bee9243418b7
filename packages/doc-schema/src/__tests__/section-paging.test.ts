/**
 * Paging a section from its first read to its last shows every character of every block exactly once,
 * also when a block is longer than the budget (issue 13: a cut block's rest was skipped, 18% of Rust's
 * releases.md at max_chars 2000). Over real files from node_modules (READMEs and CHANGELOGs, read in place)
 * and a few extreme blocks, at drawn budgets: each read's text is checked character for character against
 * the blocks' own Markdown, and the parts shown of each block must tile it with no gap and no overlap.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import * as Y from 'yjs'
import {
  FRAGMENT_NAME,
  importedDocumentUpdate,
  importMarkdown,
  listSections,
  renderSection,
} from '../index.ts'
import { blockMarkdown } from '../sections/render-section.ts'
import { locateSections } from '../sections/section-index.ts'
import { expectOk, loadDocument } from './fixtures.ts'
import { runs } from './property-runs.ts'

const MODULES = resolve(import.meta.dir, '../../../../node_modules/.bun/node_modules')
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

function realFiles(): string[] {
  const files: string[] = []
  for (const name of PACKAGES) {
    const dir = join(MODULES, name)
    if (!existsSync(dir)) continue
    for (const entry of readdirSync(dir))
      if (/^(readme|changelog)\.md$/i.test(entry)) files.push(join(dir, entry))
  }
  return files
}

function loadFile(file: string): Y.XmlFragment {
  const imported = expectOk(importMarkdown(readFileSync(file, 'utf8'), { fallbackTitle: 'File' }))
  const doc = new Y.Doc()
  Y.applyUpdate(doc, expectOk(importedDocumentUpdate(imported)))
  return doc.getXmlFragment(FRAGMENT_NAME)
}

/**
 * Reads section `sectionId` from its first read to its last at `maxChars`, following nextBlock and
 * nextOffset; checks each read's text and returns, per block, its Markdown and the [from, to) ranges of
 * it shown.
 */
function pageThrough(
  fragment: Y.XmlFragment,
  sectionId: string,
  maxChars: number,
): { markdown: string[]; shown: Map<number, Array<[number, number]>> } {
  const section = locateSections(fragment).find((s) => s.sectionId === sectionId)!
  const markdown = section.blocks.map(blockMarkdown)
  const shown = new Map<number, Array<[number, number]>>()
  let fromBlock: number | undefined
  let blockOffset: number | undefined
  for (let reads = 0; ; reads++) {
    expect(reads).toBeLessThan(100_000)
    const read = expectOk(renderSection(fragment, sectionId, { fromBlock, blockOffset, maxChars }))
    expect(read.shownChars).toBeLessThanOrEqual(Math.max(maxChars, 200))
    // The read's text, rebuilt from the blocks' Markdown: the heading line, then each part.
    const headingEnd = read.text.indexOf('\n\n')
    let expected = headingEnd === -1 ? read.text : read.text.slice(0, headingEnd)
    for (let number = read.firstBlock; number <= read.lastBlock; number++) {
      const whole = markdown[number - 1]!
      const from = number === read.firstBlock ? (read.firstOffset ?? 0) : 0
      const to = number === read.truncatedBlock ? read.nextOffset! : whole.length
      expect(to).toBeGreaterThan(from)
      const label =
        from > 0 ? `[${number}, from character ${from}] ` : whole === '' ? `[${number}]` : `[${number}] `
      const marker = to < whole.length ? `\n[… block ${number} cut at character ${to} of its Markdown]` : ''
      expected += `\n\n${label}${whole.slice(from, to)}${marker}`
      shown.set(number, [...(shown.get(number) ?? []), [from, to]])
    }
    expect(read.text).toBe(expected)
    if (read.nextBlock === undefined) return { markdown, shown }
    fromBlock = read.nextBlock
    blockOffset = read.nextOffset
  }
}

/** Every block's ranges tile its Markdown: from 0 to its end, each next one starting where the last ended. */
function expectTiled({ markdown, shown }: ReturnType<typeof pageThrough>) {
  markdown.forEach((whole, i) => {
    const length = whole.length
    const ranges = shown.get(i + 1) ?? []
    let at = 0
    for (const [from, to] of ranges) {
      expect(from).toBe(at)
      at = to
    }
    expect(at).toBe(length)
  })
}

describe('paging a section shows every character exactly once', () => {
  const files = realFiles()

  test('the real files are there', () => {
    expect(files.length).toBeGreaterThanOrEqual(5)
  })

  test('every section of real files, at drawn budgets from 200 to 3,000 characters', () => {
    const fragments = files.map(loadFile)
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: fragments.length - 1 }),
        fc.integer({ min: 200, max: 3_000 }),
        (index, maxChars) => {
          const fragment = fragments[index]!
          for (const { sectionId } of listSections(fragment)) {
            expectTiled(pageThrough(fragment, sectionId, maxChars))
          }
        },
      ),
      runs(12),
    )
  })

  test('one block far longer than the budget (a list, code, emoji, a long heading) is read in parts', () => {
    const list = Array.from({ length: 120 }, (_, i) => `- item ${i} 😀 with **bold** words`).join('\n')
    const code = `\`\`\`\n${'line of code\n'.repeat(100)}\`\`\``
    const { fragment } = loadDocument(
      'Doc',
      `## ${'h'.repeat(150)}\n\n${list}\n\n${code}\n\n${'😀'.repeat(400)}\n\nend`,
    )
    const sectionId = listSections(fragment)[1]!.sectionId
    for (const maxChars of [1, 333, 1_000, 4_096]) {
      expectTiled(pageThrough(fragment, sectionId, maxChars))
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
