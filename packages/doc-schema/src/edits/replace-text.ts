import * as Y from 'yjs'
import { parseInlineMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { yTextString } from '../yjs/plain-text.ts'
import { editTarget, sectionsFrom } from './edit-target.ts'
import { type Controlled, rewriteText, type TextRun, textRuns } from './rewrite-text.ts'

/** One Y.XmlText of the section: its block number (0 = the heading), its text, and whether it is code. */
type TextUnit = { text: Y.XmlText; string: string; block: number; inCode: boolean }

type Occurrence = { unit: TextUnit; index: number }

export type ReplaceTextOptions = {
  /** Search only this block (0 = the section's heading, 1… as a section read numbers them). */
  block?: number
}

/**
 * The start of a line as a section read shows a block, which an agent may copy with the text: the block
 * label `[3] `, then a heading's `## `, a quote's `> `, or a list item's `- `, `1. ` and task box `[ ] `.
 */
const LINE_START = /^(?:\[\d+\] )?(?:#{1,6} +|(?:> ?)+|(?:[-*+]|\d{1,9}[.)]) +(?:\[[ xX]\] +)?)?/

/** Longest stretch of old text quoted back in a refusal (the caller's own text, never the document's). */
const QUOTED_CHARS = 40

/**
 * Replaces the one occurrence of `oldText` in a section (heading included) inside its Y.XmlText.
 *
 * `oldText` is looked for as written, then, if it is not there, as `read_document` shows text: Markdown
 * with escapes (`https\://`) and inline syntax (`` `code` ``, `**bold**`, `[text](url)`). Found that way,
 * `newText` is read as Markdown too, and the marks either spells out are set as it says.
 *
 * The change is a character diff applied in place: shared characters keep their Yjs items and formatting
 * (a person's cursor and typing next to them survive); a new character takes the formatting of the text
 * it replaces at that position. Refusals say why the text did not match, and where it is ambiguous.
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
  const elements = [section.heading, ...section.blocks]
  const units: TextUnit[] = []
  elements.forEach((element, number) => {
    if (block === undefined || block === number) collectTexts(element, number, units)
  })
  const where = block === undefined ? 'the section' : block === 0 ? 'the heading' : `block ${block}`

  const literal = occurrences(units, oldText)
  let found: Occurrence | undefined
  let runs: TextRun[] = [{ text: newText, attributes: {} }]
  let controlled: Controlled = new Set<string>()
  let readAs: string | undefined
  if (literal.length > 1) return ambiguous(literal, where, block)
  if (literal.length === 1) found = literal[0]
  else {
    // Not there as written: read it as the section read shows text (Markdown), outside code blocks, without
    // the start of line a copied line may carry.
    const source = oldText.replace(LINE_START, '')
    const parsed = parseInlineMarkdown(source)
    const oldRuns = textRuns(parsed.nodes)
    const plain = oldRuns.map((run) => run.text).join('')
    if (plain !== oldText && plain !== '' && !parsed.media) {
      readAs = plain
      let matches = occurrences(
        units.filter((unit) => !unit.inCode),
        plain,
      )
      // Marks spelled out in oldText choose among equal texts (`**word**` among plain ones).
      if (matches.length > 1) {
        const marked = matches.filter((match) => sameMarks(match, oldRuns))
        if (marked.length > 0) matches = marked
      }
      if (matches.length > 1) return ambiguous(matches, where, block, plain)
      if (matches.length === 1) {
        found = matches[0]
        const next = parseInlineMarkdown(source === oldText ? newText : newText.replace(LINE_START, ''))
        if (next.media) {
          return refuseFor(
            'media_in_text',
            'newText: it holds an image, which cannot go inside text; use edit_blocks to insert it as a block.',
            'newText',
          )
        }
        runs = textRuns(next.nodes)
        const types = new Set<string>()
        for (const run of [...oldRuns, ...runs]) for (const key of Object.keys(run.attributes)) types.add(key)
        controlled = types
      }
    }
  }
  if (!found) return notFound(units, oldText, readAs, where)

  const { unit, index } = found
  const length = readAs?.length ?? oldText.length
  // Read as Markdown, a line break in newText would quietly become a space: refuse it as in plain text.
  const lineBreak =
    runs.some((run) => run.text.includes('\n')) || (readAs !== undefined && newText.includes('\n'))
  if (lineBreak && !unit.inCode) {
    return refuseFor(
      'newline_in_text',
      `newText: a line break cannot go inside the text of ${unit.block === 0 ? 'a heading' : 'a paragraph, list item or table cell'}; ` +
        `use edit_blocks with remove_blocks: [${Math.max(1, unit.block)}] and the block's new Markdown instead.`,
      'newText',
    )
  }
  doc.transact(() => rewriteText(unit.text, index, length, runs, controlled))
  return ok({ rev: sectionsFrom(section.heading, new Set())[0]!.rev })
}

/** Every Y.XmlText under `root`, in document order. Iterative: depth is the document's choice. */
function collectTexts(root: Y.XmlElement, block: number, out: TextUnit[]) {
  const stack: Array<[Y.XmlElement | Y.XmlText, boolean]> = [[root, false]]
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, code] = entry
    if (node instanceof Y.XmlText) {
      out.push({ text: node, string: yTextString(node), block, inCode: code })
      continue
    }
    const childCode = code || node.nodeName === 'codeBlock'
    const children = node.toArray()
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i]
      if (child instanceof Y.XmlElement || child instanceof Y.XmlText) stack.push([child, childCode])
    }
  }
}

/** Every occurrence of `needle`; overlapping ones count ("aa" in "aaa" is ambiguous). */
function occurrences(units: readonly TextUnit[], needle: string): Occurrence[] {
  const found: Occurrence[] = []
  for (const unit of units) {
    for (let at = unit.string.indexOf(needle); at >= 0; at = unit.string.indexOf(needle, at + 1))
      found.push({ unit, index: at })
  }
  return found
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

const placeName = (block: number) => (block === 0 ? 'the heading' : `block ${block}`)

function ambiguous(
  matches: readonly Occurrence[],
  where: string,
  block: number | undefined,
  readAs?: string,
): Result<never> {
  const perBlock = new Map<number, number>()
  for (const match of matches) perBlock.set(match.unit.block, (perBlock.get(match.unit.block) ?? 0) + 1)
  const places = [...perBlock]
    .map(([number, times]) => (times > 1 ? `${placeName(number)} (${times} times)` : placeName(number)))
    .join(', ')
  const as = readAs === undefined ? '' : ` as read_document shows it ("${quote(readAs)}")`
  const choose =
    perBlock.size > 1 && block === undefined
      ? ' Add surrounding text so it occurs once, or pass block with the one to change (0 = the heading).'
      : ' Add surrounding text so it occurs once.'
  return refuseFor(
    'text_ambiguous',
    `oldText: it occurs ${matches.length} times in ${where}${as} (count ${matches.length}): ${places}.${choose}`,
    'oldText',
  )
}

/** The caller's text, shortened from the start for a message. */
function quote(text: string): string {
  return text.length <= QUOTED_CHARS ? text : `…${text.slice(text.length - QUOTED_CHARS)}`
}

/** Characters a message names in words: they look like nothing, or like each other. */
const CHARACTER_NAMES: Record<number, string> = {
  9: 'a tab',
  10: 'a line break',
  32: 'a space',
  160: 'a no-break space',
  8203: 'a zero-width space',
}

/** One character for a message: itself and its code point (a curly quote and a straight one differ). */
function describeChar(text: string, at: number): string {
  const code = text.codePointAt(at)
  if (code === undefined) return 'nothing more'
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
  const named = CHARACTER_NAMES[code]
  if (named) return `${named} (${hex})`
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) ? hex : `"${String.fromCodePoint(code)}" (${hex})`
}

/**
 * Why `oldText` is not there: the longest start of it that occurs, where, and the first character that
 * differs there (the document's character is named by its code point only, never quoted at length).
 */
function notFound(
  units: readonly TextUnit[],
  oldText: string,
  readAs: string | undefined,
  where: string,
): Result<never> {
  const needle = readAs ?? oldText
  const tried =
    readAs === undefined
      ? ''
      : `, neither as written nor as read_document shows it (without escapes and inline Markdown: "${quote(readAs)}")`
  let low = 0
  let high = needle.length
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    const prefix = needle.slice(0, mid)
    if (units.some((unit) => unit.string.includes(prefix))) low = mid
    else high = mid - 1
  }
  let why: string
  if (low === 0)
    why = ` None of it occurs there; check section_id, or call read_document with that section_id for its current text.`
  else {
    const prefix = needle.slice(0, low)
    const unit = units.find((u) => u.string.includes(prefix))!
    const at = unit.string.indexOf(prefix) + low
    const there =
      at >= unit.string.length
        ? 'its text ends (a line break, an image or another block follows)'
        : `the text has ${describeChar(unit.string, at)}`
    why =
      ` Its first ${low} characters ("${quote(prefix)}") occur in ${placeName(unit.block)}; after them ` +
      `${there} where oldText has ${describeChar(needle, low)}.`
  }
  const lines = oldText.includes('\n')
    ? ' replace_text changes text within one paragraph, heading, list item or table cell (code blocks excepted); for more, use edit_blocks.'
    : ''
  return refuseFor(
    'text_not_found',
    `oldText: it does not occur in ${where} (count 0)${tried}.${why}${lines}`,
    'oldText',
  )
}
