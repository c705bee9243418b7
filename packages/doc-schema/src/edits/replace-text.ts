import type * as Y from 'yjs'
import { parseInlineMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { type CopiedLine, copiedLine, newCodeText, withoutCodePrefix } from './copied-line.ts'
import { editTarget, sectionsFrom } from './edit-target.ts'
import { ambiguous, notFound, notTextLine, placeName, quote, rowNotFound } from './replace-refusals.ts'
import { rewriteText, type TextRun, textRuns } from './rewrite-text.ts'
import { findRows, readRow, rewriteRow } from './table-row.ts'
import { codeLinePrefix, sectionTexts, type TextUnit } from './text-units.ts'

export type ReplaceTextOptions = {
  /** Search only this block (0 = the section's heading, 1… as a section read numbers them). */
  block?: number
}

/**
 * Where old text was found: `length` characters from `index` of a unit. `shown`: as a read shows it
 * (inline Markdown read back outside code, a code line without the prefix a list or quote gives it);
 * `literal`: as written, when it was not there as shown. `prefix` is a code unit's line prefix.
 */
type Occurrence = { unit: TextUnit; index: number; length: number; shown: boolean; prefix: string }

/**
 * Replaces the one occurrence of `oldText` in a section (heading included) inside its Y.XmlText.
 *
 * `oldText` is looked for as `read_document` shows text, and then, if it is not there, as written: outside
 * code as inline Markdown (escapes such as `https\://`, `` `code` ``, `**bold**`, `[text](url)`), without the
 * start of line a copied line may carry (label, indentation, quote and list markers, task box, `## `); in
 * code as the code's lines, without the indentation a list or quote gives them; a table row (`| a | b |`)
 * as its cells. `newText` is read the same way: inline Markdown outside code (a literal `*` is `\*`, as
 * reads show it), the code's text inside it. Lines a read shows that are not text (media placeholders, a
 * table's delimiter line, code fences, rules) are refused, naming the edit_blocks call that changes them.
 *
 * The change is a character diff applied in place: shared characters keep their Yjs items and formatting
 * (a person's cursor and typing next to them survive); a new character takes the formatting of the text
 * it replaces at that position, except for the marks the Markdown of either text spells out.
 */
export function replaceText(
  fragment: Y.XmlFragment,
  sectionId: string,
  rev: string,
  oldText: string,
  newText: string,
  opts: ReplaceTextOptions = {},
): Result<{ rev: string }> {
  if (oldText === '')
    return refuseFor('empty_old_text', 'oldText: it is empty; give the exact text to replace.', 'oldText')
  if (oldText === newText) {
    return refuseFor(
      'nothing_to_change',
      'newText: it equals oldText; this edit would change nothing.',
      'newText',
    )
  }
  const target = editTarget(fragment, sectionId, rev)
  if (target.kind === 'error') return target
  const { doc, section } = target.value
  const count = section.blocks.length
  const { block } = opts
  if (block !== undefined && (!Number.isInteger(block) || block < 0 || block > count)) {
    return refuseFor(
      'block_out_of_range',
      `block: ${block} is not in 0..${count}; 0 is the heading, 1..${count} the blocks as read_document numbers them.`,
      'block',
    )
  }
  const { units, shapes } = sectionTexts([section.heading, ...section.blocks], block)
  const where = block === undefined ? 'the section' : placeName(block)
  const done = () => ok({ rev: sectionsFrom(section.heading, new Set())[0]!.rev })

  const oldLine = copiedLine(oldText)
  const parsed = inlineMarkdown(oldLine.body, 'oldText')
  if (parsed.kind === 'error') return parsed
  const oldRuns = parsed.value.media ? [] : textRuns(parsed.value.nodes)
  const plain = oldRuns.map((run) => run.text).join('')
  const readAs = plain !== oldText && plain !== '' ? plain : undefined

  let matches = shownOccurrences(units, oldText, oldLine, plain, oldRuns)
  if (matches.length === 0) matches = literalOccurrences(units, oldText)
  else if (matches.length > 1 && oldLine.start !== '') {
    // What looked like a line start may be text copied from the middle of a line (`3) and`, which a read
    // prints unescaped there): as written, it may occur once.
    const literal = literalOccurrences(units, oldText)
    if (literal.length === 1) matches = literal
  }
  if (matches.length > 1) {
    const whole = matches.every((m) => (m.unit.inCode ? wholeLines(m) : wholeText(m)))
    const kind = matches.some((m) => m.unit.inCode) ? 'code' : 'text'
    return ambiguous(
      matches.map((match) => match.unit.block),
      where,
      block,
      matches[0]!.shown ? readAs : undefined,
      whole ? kind : undefined,
    )
  }
  const found = matches[0]
  if (!found) {
    const row = readRow(oldLine.body)
    if (row) {
      const rows = findRows(shapes, row)
      if (rows.length > 1)
        return ambiguous(
          rows.map((match) => match.block),
          where,
          block,
          undefined,
          'text',
        )
      if (rows.length === 1) {
        const after = readRow(copiedLine(newText).body)
        if (!after) {
          return refuseFor(
            'not_text',
            `newText: oldText is a table row (block ${rows[0]!.block}), so give the row's new line with as ` +
              `many cells ("| a | b |"); to change the table otherwise, call edit_blocks with in_block: ${rows[0]!.block}.`,
            'newText',
          )
        }
        const written = doc.transact(() => rewriteRow(rows[0]!, row, after))
        return written.kind === 'error' ? written : done()
      }
      if (shapes.some((shape) => shape.element.nodeName === 'table'))
        return notTextLine(oldLine.body, shapes) ?? rowNotFound(row.plain, where)
    }
    if (parsed.value.nodes.some((node) => node.type === 'hardBreak')) {
      return refuseFor(
        'text_not_found',
        'oldText: it spans a line break (a read ends the line before a hard break with "\\"); replace_text ' +
          'changes one line at a time: give the text of each line in a call of its own, or rewrite the block ' +
          'with edit_blocks.',
        'oldText',
      )
    }
    return notTextLine(oldLine.body, shapes) ?? notFound(units, oldText, readAs, where)
  }

  const next = newRuns(found, oldLine, oldRuns, newText)
  if (next.kind === 'error') return next
  const { runs, controlled } = next.value
  doc.transact(() => rewriteText(found.unit.text, found.index, found.length, runs, controlled))
  return done()
}

/** Inline Markdown read back within a write's work ceiling; a refusal names `field` (oldText, newText). */
function inlineMarkdown(text: string, field: string) {
  const parsed = parseInlineMarkdown(text)
  if (parsed.kind === 'ok') return parsed
  return { ...parsed, field, message: parsed.message.replace(/^markdown:/, `${field}:`) }
}

/** Every occurrence of `needle` in a unit; overlapping ones count ("aa" in "aaa" is ambiguous). */
function indexesOf(haystack: string, needle: string): number[] {
  const out: number[] = []
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) out.push(at)
  return out
}

/**
 * Occurrences of old text as a read shows it: its inline Markdown read back, in text outside code; its
 * lines without the code's line prefix, in code. Among several, marks it spells out choose (`**word**` among
 * plain ones), then a line copied from its start prefers a text that is all of one line.
 */
function shownOccurrences(
  units: readonly TextUnit[],
  oldText: string,
  line: CopiedLine,
  plain: string,
  oldRuns: readonly TextRun[],
): Occurrence[] {
  let found: Occurrence[] = []
  const prefixes = new Map<unknown, string>()
  const needles = new Map<string, string | undefined>()
  for (const unit of units) {
    if (unit.inCode) {
      let prefix = prefixes.get(unit.code)
      if (prefix === undefined) {
        prefix = codeLinePrefix(unit.root, unit.code!)
        prefixes.set(unit.code, prefix)
      }
      // Most code blocks share a few prefixes: the copy is taken apart once per prefix.
      let needle = needles.get(prefix)
      if (!needles.has(prefix)) {
        needle = withoutCodePrefix(oldText, prefix)
        needles.set(prefix, needle)
      }
      if (needle === undefined || needle === '') continue
      for (const index of indexesOf(unit.string, needle))
        found.push({ unit, index, length: needle.length, shown: true, prefix })
    } else if (plain !== '' && !plain.includes('\n')) {
      for (const index of indexesOf(unit.string, plain))
        found.push({ unit, index, length: plain.length, shown: true, prefix: '' })
    }
  }
  if (found.length > 1) {
    const marked = found.filter((match) => match.unit.inCode || sameMarks(match, oldRuns))
    if (marked.length > 0) found = marked
  }
  if (found.length > 1) {
    // A code line is copied whole (the read prints it on a line of its own); a text copied with its line
    // start is all of one text. Such copies prefer what is all of a line over the same text inside longer ones.
    const whole = found.filter((match) =>
      match.unit.inCode ? wholeLines(match) : line.whole && wholeText(match),
    )
    if (whole.length > 0) found = whole
  }
  if (found.length > 1 && line.labelBlock !== undefined) {
    // The label it was copied with names its block.
    const labelled = found.filter((match) => match.unit.block === line.labelBlock)
    if (labelled.length > 0) found = labelled
  }
  return found
}

const wholeText = (match: Occurrence) => match.index === 0 && match.length === match.unit.string.length

/** Whether a match in code starts at the start of a line and ends at the end of one. */
function wholeLines({ unit, index, length }: Occurrence): boolean {
  const end = index + length
  return (
    (index === 0 || unit.string.charCodeAt(index - 1) === 10) &&
    (end === unit.string.length || unit.string.charCodeAt(end) === 10)
  )
}

/** Occurrences of old text as written, in every text (it was not there as a read shows it). */
function literalOccurrences(units: readonly TextUnit[], oldText: string): Occurrence[] {
  return units.flatMap((unit) =>
    indexesOf(unit.string, oldText).map((index) => ({
      unit,
      index,
      length: oldText.length,
      shown: false,
      prefix: '',
    })),
  )
}

/**
 * The runs new text becomes where old text was found: in code its text as written (without the code's
 * line prefix when old text was found with it), elsewhere its inline Markdown read back; with the mark
 * types the runs decide (those either text spells out).
 */
function newRuns(
  found: Occurrence,
  oldLine: CopiedLine,
  oldRuns: readonly TextRun[],
  newText: string,
): Result<{ runs: TextRun[]; controlled: ReadonlySet<string> }> {
  const { unit } = found
  if (unit.inCode) {
    const text = found.shown ? newCodeText(newText, found.prefix) : newText
    return ok({ runs: [{ text, attributes: {} }], controlled: new Set() })
  }
  let body = newText
  if (found.shown && (oldLine.whole || oldLine.hardBreak)) {
    const newLine = copiedLine(newText)
    if (newLine.start !== '' && newLine.start !== oldLine.start) {
      const how =
        unit.block === 0
          ? 'replace_text changes the words of a heading, not its level'
          : `To change it, call edit_blocks on block ${unit.block} (in_block: ${unit.block} for one item of a list)`
      return refuseFor(
        'not_text',
        `newText: it starts "${quote(newLine.start)}" where oldText starts "${quote(oldLine.start)}"; a list ` +
          `marker, task box, indentation or heading level is not text. ${how}.`,
        'newText',
      )
    }
    if (newLine.hardBreak !== oldLine.hardBreak) {
      return refuseFor(
        'newline_in_text',
        `newText: ${oldLine.hardBreak ? 'it drops the line break (the "\\" at the end) oldText has' : 'it ends with "\\", a line break'}; ` +
          `replace_text changes the text of one line and keeps its breaks. To join or split lines, call ` +
          `edit_blocks with remove_blocks: [${Math.max(1, unit.block)}] and the block's new Markdown.`,
        'newText',
      )
    }
    body = newLine.body
  }
  const next = inlineMarkdown(body, 'newText')
  if (next.kind === 'error') return next
  if (next.value.media) {
    return refuseFor(
      'media_in_text',
      'newText: it holds an image, which cannot go inside text; use edit_blocks to insert it as a block.',
      'newText',
    )
  }
  const runs = textRuns(next.value.nodes)
  if (body.includes('\n') || runs.some((run) => run.text.includes('\n'))) {
    return refuseFor(
      'newline_in_text',
      `newText: a line break cannot go inside the text of ${unit.block === 0 ? 'a heading' : 'a paragraph, list item or table cell'}; ` +
        `use edit_blocks with remove_blocks: [${Math.max(1, unit.block)}] and the block's new Markdown instead.`,
      'newText',
    )
  }
  const controlled = new Set<string>()
  for (const run of [...(found.shown ? oldRuns : []), ...runs])
    for (const key of Object.keys(run.attributes)) controlled.add(key)
  return ok({ runs, controlled })
}

/** Whether the marks at an occurrence are the ones the parsed old text spells out, character by character. */
function sameMarks(match: Occurrence, oldRuns: readonly TextRun[]): boolean {
  let offset = match.index
  let position = 0
  const delta = match.unit.text.toDelta() as { insert: unknown; attributes?: Record<string, unknown> }[]
  const marksAt = (at: number): string => {
    let start = 0
    for (const op of delta) {
      if (typeof op.insert !== 'string') continue
      if (at < start + op.insert.length)
        return Object.keys(op.attributes ?? {})
          .sort()
          .join(' ')
      start += op.insert.length
    }
    return ''
  }
  for (const run of oldRuns) {
    const want = Object.keys(run.attributes).sort().join(' ')
    for (let i = 0; i < run.text.length; i++, position++) if (marksAt(offset + i) !== want) return false
    offset += run.text.length
  }
  return position > 0
}
