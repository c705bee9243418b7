/**
 * replace_text over every line a section read shows, in the real files of the corpus (corpus-files.ts):
 * each line, copied as printed (its block label, indentation, markers and escapes included), is edited and
 * then pasted back. The edit must land on that line only, the next read must show exactly the edited line,
 * and pasting the read line back must leave the block byte for byte as it was (its JSON: every mark, link
 * target and attribute). Lines that are not text (media placeholders, a table's delimiter line, code
 * fences, rules) must be refused as such, and a line refused as ambiguous must really repeat in its block.
 */
import { describe, expect, test } from 'bun:test'
import type * as Y from 'yjs'
import { listSections, renderSection, replaceText } from '../index.ts'
import { blockMarkdown } from '../sections/render-section.ts'
import { locateSection } from '../sections/section-index.ts'
import { yElementToJSON } from '../yjs/read-y.ts'
import { corpusFiles, MODULES } from './corpus-files.ts'
import { expectOk } from './fixtures.ts'
import { importedFile } from './markdown-trips.ts'

/** Lines tried per file at most (spread over the whole file), so the test's cost stays bounded. */
const LINES_PER_FILE = 250

/** A read section's blocks: the heading line (block 0) and each `[n] …` block's lines, as printed. */
function readBlocks(fragment: Y.XmlFragment, sectionId: string): string[][] {
  const text = expectOk(renderSection(fragment, sectionId, { maxChars: 100_000 })).text
  const chunks = text.split(/\n\n(?=\[\d+\] |\[\d+\]$)/)
  return chunks.map((chunk) => chunk.split('\n'))
}

/** The edited form of a printed line: a word added where it stays text (before a row's last pipe, a break's `\`). */
function edited(line: string): string {
  if (/^(?:\[\d+\] )?\s*(?:>\s*)*\|.*\|$/.test(line)) return line.replace(/ ?\|$/, ' ZQ |')
  if (/(?:^|[^\\])(?:\\\\)*\\$/.test(line)) return `${line.slice(0, -1)} ZQ\\`
  return `${line} ZQ`
}

const elementAt = (fragment: Y.XmlFragment, sectionId: string, block: number) => {
  const section = locateSection(fragment, sectionId)!
  return block === 0 ? section.heading : section.blocks[block - 1]!
}
const blockJSON = (fragment: Y.XmlFragment, sectionId: string, block: number) =>
  JSON.stringify(yElementToJSON(elementAt(fragment, sectionId, block)))

/** One block's lines as a read prints them (the read renders each block with blockMarkdown). */
function blockLines(fragment: Y.XmlFragment, sectionId: string, block: number): string[] {
  const markdown = blockMarkdown(elementAt(fragment, sectionId, block))
  return (block === 0 ? markdown : markdown === '' ? `[${block}]` : `[${block}] ${markdown}`).split('\n')
}

type Tally = Record<string, number>

/** Printed lines that are not text: a code fence, a table's delimiter line, a rule, a media placeholder. */
const NOT_TEXT =
  /^(?:`{3,}.*|~{3,}.*|\|?(?:\s*:?-+:?\s*\|)+\s*:?-*:?\s*|(?:-\s*){3,}|(?:\*\s*){3,}|\[(?:image|video|audio)(?:: .*)?\])$/

/** The shape of a printed line, for the tally of what the test covered. */
function shapeOf(line: string, block: number): string {
  const text = line.replace(/^\[\d+\] /, '')
  if (block === 0) return 'heading'
  if (/^\s*(?:>\s*)*\|/.test(text)) return 'table row'
  if (/^\s*>/.test(text)) return 'quoted'
  if (/^\s+/.test(text)) return 'indented'
  if (/^(?:[-*+]|\d+[.)])(?: |$)/.test(text)) return 'list item'
  if (/\\$/.test(text)) return 'before a break'
  return 'other'
}

function tryFile(file: string, tally: Tally, failures: string[]) {
  const { fragment } = importedFile(file)
  const where = file.slice(MODULES.length + 1)
  const lines: Array<{ sectionId: string; block: number; line: number; read: string[][] }> = []
  const sections = listSections(fragment).slice(1)
  for (const section of sections) {
    // Read once: every edit below is pasted back, leaving the section as it was.
    const read = readBlocks(fragment, section.sectionId)
    read.forEach((printed, block) => {
      printed.forEach((text, line) => {
        if (text.replace(/^\[\d+\] ?/, '').replace(/[\s>]/g, '') !== '')
          lines.push({ sectionId: section.sectionId, block, line, read })
      })
    })
  }
  const step = Math.max(1, Math.ceil(lines.length / LINES_PER_FILE))
  const revs = new Map(sections.map((s) => [s.sectionId, s.rev]))
  for (let at = 0; at < lines.length; at += step) {
    const { sectionId, block, line, read: before } = lines[at]!
    const shown = before[block]![line]!
    const json = blockJSON(fragment, sectionId, block)
    const next = edited(shown)
    const first = replaceText(fragment, sectionId, revs.get(sectionId)!, shown, next, { block })
    if (first.kind === 'error') {
      const repeated = before[block]!.filter((l) => l.trim() === shown.trim()).length > 1
      if (first.reason === 'not_text' && NOT_TEXT.test(shown.replace(/^\[\d+\] /, '').trim()))
        tally.notText = (tally.notText ?? 0) + 1
      else if (first.reason === 'text_ambiguous' && repeated) tally.repeated = (tally.repeated ?? 0) + 1
      else failures.push(`${where} block ${block}: ${JSON.stringify(shown)}: ${first.message}`)
      continue
    }
    const after = blockLines(fragment, sectionId, block)
    const want = before[block]!.map((l, j) => (j === line ? next : l))
    if (JSON.stringify(after) !== JSON.stringify(want)) {
      const got = after.find((l, j) => l !== want[j])
      failures.push(`${where} block ${block}: ${JSON.stringify(shown)} read back as ${JSON.stringify(got)}`)
    }
    const back = replaceText(fragment, sectionId, first.value.rev, next, shown, { block })
    if (back.kind === 'error') {
      failures.push(`${where} block ${block}: pasting back ${JSON.stringify(shown)}: ${back.message}`)
      revs.set(sectionId, listSections(fragment).find((s) => s.sectionId === sectionId)!.rev)
      continue
    }
    revs.set(sectionId, back.value.rev)
    if (blockJSON(fragment, sectionId, block) !== json)
      failures.push(`${where} block ${block}: pasting back ${JSON.stringify(shown)} changed the block`)
    else {
      tally.roundTrip = (tally.roundTrip ?? 0) + 1
      const shape = shapeOf(shown, block)
      tally[shape] = (tally[shape] ?? 0) + 1
    }
  }
}

describe('every line a read shows, copied as printed, is edited in place and pasted back byte for byte', () => {
  test('over the real files of the corpus', () => {
    const tally: Tally = {}
    const failures: string[] = []
    const files = corpusFiles()
    for (const file of files) tryFile(file, tally, failures)
    console.log(
      `replace_text over ${files.length} files: ${tally.roundTrip ?? 0} lines edited and pasted back exactly, ` +
        `${tally.notText ?? 0} refused as not text, ${tally.repeated ?? 0} ambiguous (repeated in their block), ` +
        `${failures.length} failed; edited by shape: ${['heading', 'list item', 'indented', 'quoted', 'table row', 'before a break', 'other'].map((k) => `${k} ${tally[k] ?? 0}`).join(', ')}`,
    )
    if (failures.length > 0) console.log(failures.slice(0, 80).join('\n'))
    expect(files.length).toBeGreaterThanOrEqual(20)
    expect(tally.roundTrip ?? 0).toBeGreaterThan(2_000)
    expect(failures).toEqual([])
    // Every shape the issue found refused is among the lines edited.
    for (const shape of ['indented', 'table row', 'quoted', 'list item'])
      expect(tally[shape] ?? 0).toBeGreaterThan(0)
  }, 120_000)
})
