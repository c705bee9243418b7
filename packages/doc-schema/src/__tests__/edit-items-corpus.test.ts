/**
 * edit_blocks' inBlock over every list item and table row of the real files of the corpus (corpus-files.ts):
 * each item is named by the line its read prints it on; its own lines (from that line to its first
 * sub-item or the next item), copied as printed, are sent back with a word added to the first line, and
 * the next read must show exactly that line changed, nothing else; then the lines as first read are sent
 * back and the block must be byte for byte what it was (its JSON), sub-items and all.
 */
import { describe, expect, test } from 'bun:test'
import type * as Y from 'yjs'
import { blockLines } from '../edits/block-lines.ts'
import { editBlocks, listSections } from '../index.ts'
import { blockMarkdown } from '../sections/render-section.ts'
import { locateSection } from '../sections/section-index.ts'
import { yElementToJSON } from '../yjs/read-y.ts'
import { corpusFiles, MODULES } from './corpus-files.ts'
import { expectOk } from './fixtures.ts'
import { importedFile } from './markdown-trips.ts'

/** Items tried per file at most (spread over the whole file), so the test's cost stays bounded. */
const ITEMS_PER_FILE = 60

/** The edited form of an item's printed first line: a word added where it stays the item's text. */
function edited(line: string): string {
  if (/^\s*(?:>\s*)*\|.*\|$/.test(line)) return line.replace(/ ?\|$/, ' ZQ |')
  if (/(?:^|[^\\])(?:\\\\)*\\$/.test(line)) return `${line.slice(0, -1)} ZQ\\`
  return `${line} ZQ`
}

const blockOf = (fragment: Y.XmlFragment, sectionId: string, block: number) =>
  locateSection(fragment, sectionId)!.blocks[block - 1]!

type Tally = { items: number; nested: number; rows: number; withSubs: number; unmatched: number }

function tryFile(file: string, tally: Tally, failures: string[]) {
  const { fragment } = importedFile(file)
  const where = file.slice(MODULES.length + 1)
  const targets: Array<{ sectionId: string; block: number; index: number }> = []
  for (const section of listSections(fragment).slice(1)) {
    const blocks = locateSection(fragment, section.sectionId)!.blocks
    blocks.forEach((element, i) => {
      const read = blockLines(element, i + 1)
      if (read.kind === 'error') {
        tally.unmatched++
        failures.push(`${where} block ${i + 1}: ${read.message}`)
        return
      }
      for (const item of read.value.items)
        targets.push({ sectionId: section.sectionId, block: i + 1, index: item.index })
    })
  }
  const step = Math.max(1, Math.ceil(targets.length / ITEMS_PER_FILE))
  for (let at = 0; at < targets.length; at += step) {
    const { sectionId, block, index } = targets[at]!
    const element = blockOf(fragment, sectionId, block)
    const read = expectOk(blockLines(element, block))
    const item = read.items[index]!
    const next = read.items[index + 1]
    const stop = next && next.line <= item.end ? next.line : item.end + 1
    const own = read.lines.slice(item.line - 1, stop - 1)
    while (own.length > 1 && /^[\s>]*$/.test(own.at(-1)!)) own.pop()
    const json = JSON.stringify(yElementToJSON(element))
    const rev = listSections(fragment).find((s) => s.sectionId === sectionId)!.rev
    const changed = [edited(own[0]!), ...own.slice(1)]
    const label = `${where} block ${block} line ${item.line} ${JSON.stringify(own[0])}`
    const first = editBlocks(fragment, sectionId, rev, {
      inBlock: block,
      removeBlocks: [item.line],
      markdown: changed.join('\n'),
    })
    if (first.kind === 'error') {
      failures.push(`${label}: ${first.message}`)
      continue
    }
    const after = blockMarkdown(blockOf(fragment, sectionId, block)).split('\n')
    const want = read.lines.map((l, j) => (j === item.line - 1 ? changed[0]! : l))
    if (JSON.stringify(after) !== JSON.stringify(want)) {
      const j = after.findIndex((l, k) => l !== want[k])
      failures.push(
        `${label}: line ${j + 1} read back as ${JSON.stringify(after[j])}, not ${JSON.stringify(want[j])}`,
      )
    }
    const back = editBlocks(fragment, sectionId, first.value.rev, {
      inBlock: block,
      removeBlocks: [item.line],
      markdown: own.join('\n'),
    })
    if (back.kind === 'error') {
      failures.push(`${label}: sending it back: ${back.message}`)
      continue
    }
    if (JSON.stringify(yElementToJSON(blockOf(fragment, sectionId, block))) !== json) {
      failures.push(`${label}: sending its lines back changed the block`)
      continue
    }
    tally.items++
    if (item.element.nodeName === 'tableRow') tally.rows++
    else if (item.element.parent !== element) tally.nested++
    if (next && next.line <= item.end) tally.withSubs++
  }
}

describe('every item and row of the corpus, named by its printed line, changes alone and comes back exactly', () => {
  test('over the real files of the corpus', () => {
    const tally: Tally = { items: 0, nested: 0, rows: 0, withSubs: 0, unmatched: 0 }
    const failures: string[] = []
    const files = corpusFiles()
    for (const file of files) tryFile(file, tally, failures)
    console.log(
      `edit_blocks in_block over ${files.length} files: ${tally.items} items and rows edited and sent back ` +
        `exactly (${tally.nested} nested, ${tally.withSubs} with sub-items kept, ${tally.rows} table rows), ` +
        `${tally.unmatched} blocks whose read does not read back item for item, ${failures.length} failed`,
    )
    if (failures.length > 0) console.log(failures.slice(0, 60).join('\n'))
    expect(files.length).toBeGreaterThanOrEqual(20)
    expect(failures).toEqual([])
    expect(tally.items).toBeGreaterThan(300)
    for (const kind of ['nested', 'rows', 'withSubs'] as const) expect(tally[kind]).toBeGreaterThan(0)
  }, 120_000)
})
