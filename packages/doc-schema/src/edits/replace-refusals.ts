/**
 * replace_text's refusals: text found more than once (where), text not found (the longest start of it that
 * is there, and the first character that differs), and lines a read shows that are not text (what they
 * are, and the call that changes them).
 */
import { type Result, refuseFor } from '../result.ts'
import { CODE_FENCE, TABLE_DELIMITER, THEMATIC_BREAK } from './copied-line.ts'
import { mediaPlaceholder, type Shape, type TextUnit } from './text-units.ts'

/** Longest stretch of old text quoted back in a refusal (the caller's own text, never the document's). */
const QUOTED_CHARS = 40

export const placeName = (block: number) => (block === 0 ? 'the heading' : `block ${block}`)

/** The caller's text, shortened from the start for a message. */
export function quote(text: string): string {
  return text.length <= QUOTED_CHARS ? text : `…${text.slice(text.length - QUOTED_CHARS)}`
}

export function ambiguous(
  blocks: readonly number[],
  where: string,
  block: number | undefined,
  readAs?: string,
  /** What the occurrences are when every one is a whole line: lines of code, or whole texts (items, rows). */
  wholeLines?: 'code' | 'text',
): Result<never> {
  const perBlock = new Map<number, number>()
  for (const number of blocks) perBlock.set(number, (perBlock.get(number) ?? 0) + 1)
  const places = [...perBlock]
    .map(([number, times]) => (times > 1 ? `${placeName(number)} (${times} times)` : placeName(number)))
    .join(', ')
  const as = readAs === undefined ? '' : ` as read_document shows it ("${quote(readAs)}")`
  const only = [...perBlock.keys()][0]!
  const choose =
    perBlock.size > 1 && block === undefined
      ? ' Add surrounding text so it occurs once, or pass block with the one to change (0 = the heading).'
      : wholeLines === 'code'
        ? ' Each is a whole line of code: add the line before or after it (old_text may span lines of code).'
        : wholeLines === 'text'
          ? ` Each is a whole line (an item, a row or a paragraph of its own), so no surrounding text tells them apart: call edit_blocks with in_block: ${only} and the number of the one to change.`
          : ' Add surrounding text so it occurs once.'
  return refuseFor(
    'text_ambiguous',
    `oldText: it occurs ${blocks.length} times in ${where}${as} (count ${blocks.length}): ${places}.${choose}`,
    'oldText',
  )
}

/** A table row (or some of its cells) that no row of the section's tables has, cell for cell. */
export function rowNotFound(cells: readonly string[], where: string): Result<never> {
  const shown = cells.map((cell) => `"${quote(cell)}"`).join(', ')
  return refuseFor(
    'text_not_found',
    `oldText: it reads as a table row, and no row of a table in ${where} has the cells ${shown} side by side ` +
      '(count 0). Copy the row from a fresh read (read_document with section_id), or give the text of one cell.',
    'oldText',
  )
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
export function notFound(
  units: readonly TextUnit[],
  oldText: string,
  readAs: string | undefined,
  where: string,
): Result<never> {
  const needle = readAs ?? oldText
  const tried =
    readAs === undefined
      ? ''
      : `, neither as read_document shows it (its text without escapes and inline Markdown: "${quote(readAs)}") nor as written`
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

/** The edit_blocks call that replaces a shape: the block itself, or the item or row of a list or table. */
function replacing(shape: Shape, markdown: string): string {
  return shape.top
    ? `call edit_blocks with remove_blocks: [${shape.block}] and the block's new Markdown (${markdown})`
    : `call edit_blocks with in_block: ${shape.block} to replace the item or row that holds it (${markdown})`
}

/**
 * When `line` (a copied line without its label and start) is one a read shows for something that is not
 * text in this section, the refusal that says what it is and which call changes it; else undefined.
 */
export function notTextLine(line: string, shapes: readonly Shape[]): Result<never> | undefined {
  const trimmed = line.trim()
  const first = (name: string) => shapes.find((shape) => shape.element.nodeName === name)
  for (const shape of shapes) {
    if (mediaPlaceholder(shape.element) !== trimmed) continue
    const { block } = shape
    const how = replacing(shape, 'an image as ![alt](url)')
    const flag = shape.top
      ? '; removing it without its placeholder line in the Markdown also needs allow_media_removal: true'
      : ''
    return refuseFor(
      'not_text',
      `oldText: "${quote(trimmed)}" is how a read shows media (${shape.element.nodeName}) in ${placeName(block)}, ` +
        `not text; replace_text changes text only. To change it, ${how}${flag}.`,
      'oldText',
    )
  }
  const table = first('table')
  if (table && TABLE_DELIMITER.test(trimmed) && trimmed.includes('-')) {
    return refuseFor(
      'not_text',
      `oldText: "${quote(trimmed)}" is the line under the header row of the table in ${placeName(table.block)}, ` +
        `not text. To change the columns or their alignment, call edit_blocks with remove_blocks: ` +
        `[${table.block}] and the table's new Markdown; rows are replaced here by copying a row's line.`,
      'oldText',
    )
  }
  const code = first('codeBlock')
  if (code && CODE_FENCE.test(trimmed)) {
    return refuseFor(
      'not_text',
      `oldText: "${quote(trimmed)}" is the fence line of a code block (${placeName(code.block)}), not text. ` +
        `To change its language, ${replacing(code, 'the code block fenced anew')}; its code lines are ` +
        'replaced here as the read shows them.',
      'oldText',
    )
  }
  const rule = first('horizontalRule')
  if (rule && THEMATIC_BREAK.test(trimmed)) {
    return refuseFor(
      'not_text',
      `oldText: "${quote(trimmed)}" is a horizontal rule (${placeName(rule.block)}), not text. To remove or ` +
        `replace it, call edit_blocks with remove_blocks: [${rule.block}].`,
      'oldText',
    )
  }
  return undefined
}
