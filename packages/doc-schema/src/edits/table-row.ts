/**
 * A table row copied from a read (`| alpha | 1 |`, or some of its cells `alpha | 1`), found among the
 * section's tables cell by cell and rewritten cell by cell in place: a cell whose text is unchanged is not
 * touched, a changed one gets the same character diff as any other text (rewrite-text.ts).
 */
import * as Y from 'yjs'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { stableJSON } from '../sections/section-rev.ts'
import { yTextString } from '../yjs/plain-text.ts'
import { rowPieces } from './copied-line.ts'
import { rewriteText, type TextRun, textRuns } from './rewrite-text.ts'
import { mediaPlaceholder, type Shape } from './text-units.ts'

/** A row as the inline Markdown reader reads it: each cell's runs and text; whether it had its edge pipes. */
export type RowCopy = { cells: TextRun[][]; plain: string[]; starts: boolean; ends: boolean }

/**
 * Reads a copied row with the project's Markdown reader, as the one row of a table (a delimiter line of
 * as many cells is added under it), so cells, escaped pipes and inline Markdown read as in a document.
 * Undefined when it is not a row.
 */
export function readRow(line: string): RowCopy | undefined {
  const trimmed = line.trim()
  const pieces = rowPieces(trimmed)
  if (!pieces) return undefined
  const parsed = parseMarkdown(`${trimmed}\n|${' - |'.repeat(pieces.length)}`)
  if (parsed.kind === 'error' || parsed.value.length !== 1 || parsed.value[0]!.type !== 'table')
    return undefined
  const cells = parsed.value[0]!.content?.[0]?.content ?? []
  if (cells.length !== pieces.length) return undefined
  const runs = cells.map((cell) => {
    const out: TextRun[] = []
    for (const [index, block] of (cell.content ?? []).entries()) {
      if (index > 0) out.push({ text: '\n', attributes: {} })
      out.push(...textRuns(block.content ?? []))
    }
    return out
  })
  return {
    cells: runs,
    plain: runs.map((cell) => cell.map((run) => run.text).join('')),
    starts: trimmed.startsWith('|'),
    ends: /(?:^|[^\\])\|$/.test(trimmed),
  }
}

/** Cells of one row a copy matched: `from` is the first one's index in the row. */
export type RowMatch = { block: number; cells: Y.XmlElement[]; from: number }

/** The cell's text as a read shows it, read back: blocks and hard breaks as line breaks, media as placeholders. */
function cellText(cell: Y.XmlElement): string {
  const lines: string[] = []
  for (const block of cell.toArray()) {
    if (!(block instanceof Y.XmlElement)) continue
    const placeholder = mediaPlaceholder(block)
    if (placeholder !== undefined) {
      lines.push(placeholder)
      continue
    }
    let line = ''
    for (const child of block.toArray()) {
      if (child instanceof Y.XmlText) line += yTextString(child)
      else if (child instanceof Y.XmlElement && child.nodeName === 'hardBreak') line += '\n'
      else if (child instanceof Y.XmlElement) line += child.toString()
    }
    lines.push(line)
  }
  return lines.join('\n')
}

/** Every place among the section's tables where the copied cells occur, in order. */
export function findRows(shapes: readonly Shape[], copy: RowCopy): RowMatch[] {
  const found: RowMatch[] = []
  const count = copy.plain.length
  for (const shape of shapes) {
    if (shape.element.nodeName !== 'table') continue
    for (const row of shape.element.toArray()) {
      if (!(row instanceof Y.XmlElement)) continue
      const cells = row.toArray().filter((cell): cell is Y.XmlElement => cell instanceof Y.XmlElement)
      if (count > cells.length) continue
      const texts = new Map<number, string>()
      const textAt = (at: number) => {
        const known = texts.get(at)
        if (known !== undefined) return known
        const text = cellText(cells[at]!)
        texts.set(at, text)
        return text
      }
      // An edge pipe pins the copy to that edge of the row.
      const first = copy.ends && !copy.starts ? cells.length - count : 0
      const last = copy.starts ? (copy.ends ? (cells.length === count ? 0 : -1) : 0) : cells.length - count
      for (let from = first; from <= last; from++) {
        let same = true
        for (let k = 0; k < count && same; k++) same = textAt(from + k) === copy.plain[k]
        if (same) found.push({ block: shape.block, cells: cells.slice(from, from + count), from })
      }
    }
  }
  return found
}

/** The one Y.XmlText a cell's text is in, made when the cell is empty; undefined when it holds more. */
function cellTextOf(cell: Y.XmlElement): { paragraph: Y.XmlElement; text?: Y.XmlText } | undefined {
  const blocks = cell.toArray()
  const paragraph = blocks[0]
  if (blocks.length !== 1 || !(paragraph instanceof Y.XmlElement) || paragraph.nodeName !== 'paragraph')
    return undefined
  const children = paragraph.toArray()
  if (children.length === 0) return { paragraph }
  if (children.length === 1 && children[0] instanceof Y.XmlText) return { paragraph, text: children[0] }
  return undefined
}

/**
 * Rewrites the matched cells from `before` (the copy that matched) to `after`, in the caller's transaction.
 * Checks every cell first, so a refusal changes nothing.
 */
export function rewriteRow(match: RowMatch, before: RowCopy, after: RowCopy): Result<void> {
  const { block } = match
  if (after.plain.length !== before.plain.length) {
    return refuseFor(
      'not_text',
      `newText: it has ${after.plain.length} cells where oldText has ${before.plain.length}; replace_text ` +
        `changes the text of cells, not the columns. To add or remove a column, call edit_blocks with ` +
        `remove_blocks: [${block}] and the table's new Markdown.`,
      'newText',
    )
  }
  const writes: Array<{ cell: ReturnType<typeof cellTextOf> & {}; runs: TextRun[]; types: Set<string> }> = []
  for (let k = 0; k < after.cells.length; k++) {
    const runs = after.cells[k]!
    const old = before.cells[k]!
    if (after.plain[k] === before.plain[k] && stableJSON(runs) === stableJSON(old)) continue
    const column = match.from + k + 1
    const cell = cellTextOf(match.cells[k]!)
    if (!cell) {
      return refuseFor(
        'not_text',
        `oldText: cell ${column} of that row (block ${block}) holds a line break, an image or more than one ` +
          `block; replace the text on one side of it (old_text from inside the cell), or call edit_blocks ` +
          `with in_block: ${block} and the row's new line.`,
        'oldText',
      )
    }
    if (runs.some((run) => run.text.includes('\n'))) {
      return refuseFor(
        'newline_in_text',
        `newText: cell ${column} has a line break (<br>); replace_text does not add one. Call edit_blocks ` +
          `with in_block: ${block} and the row's new line.`,
        'newText',
      )
    }
    const types = new Set<string>()
    for (const run of [...old, ...runs]) for (const key of Object.keys(run.attributes)) types.add(key)
    writes.push({ cell, runs, types })
  }
  if (writes.length === 0) {
    return refuseFor(
      'nothing_to_change',
      'newText: its cells read the same as oldText; this edit would change nothing.',
      'newText',
    )
  }
  for (const { cell, runs, types } of writes) {
    let text = cell.text
    if (!text) {
      text = new Y.XmlText()
      cell.paragraph.insert(0, [text])
    }
    rewriteText(text, 0, yTextString(text).length, runs, types)
  }
  return ok(undefined)
}
