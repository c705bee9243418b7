/**
 * A line an agent copied from a section read, taken apart the way the read put it together: the block
 * label (`[3] `), the start of line the read writes before a block's text (indentation of a nested block,
 * quote markers, a list marker and task box, a heading's `## `), the text itself, and the `\` that ends a
 * line followed by a hard break. What is text goes to the inline Markdown reader; what is not is compared,
 * never written.
 */

/** The label a section read puts before a block's first line. */
const LABEL = /^\[\d+\] /

/**
 * What a read writes before the text of a line: a heading's `## `, or any mix of indentation, quote
 * markers (`> `) and list markers (`- `, `* `, `1. `, `1) `) each with an optional task box (`[ ] `, `[x] `).
 * A marker needs the space after it (or the end of the line), so `*emphasis*` and `-1` stay text.
 */
const LINE_START =
  /^(?:#{1,6}(?: +|$)|(?:[ \t]*(?:>[ \t]?|(?:[-*+]|\d{1,9}[.)])(?: +|$)(?:\[[ xX]\](?: +|$))?))*[ \t]*)/

export type CopiedLine = {
  /** The text of the line, without its label, start and hard-break backslash. */
  body: string
  /** The start of line the copy carried ('' when none), without the label. */
  start: string
  /** Whether it carried the block label or a start: it was copied from the beginning of a line. */
  whole: boolean
  /** Whether it ended with the `\` a read writes before a hard break. */
  hardBreak: boolean
  /** The block number of its label (`[3] ` → 3), when it carried one. */
  labelBlock?: number
}

/** Takes one copied line (or a piece of one) apart; see the module comment. */
export function copiedLine(text: string): CopiedLine {
  const label = LABEL.exec(text)?.[0] ?? ''
  const rest = text.slice(label.length)
  const start = LINE_START.exec(rest)?.[0] ?? ''
  let body = rest.slice(start.length)
  const hardBreak = endsWithBreak(body)
  if (hardBreak) body = body.slice(0, -1)
  const line: CopiedLine = { body, start, whole: label !== '' || start !== '', hardBreak }
  if (label !== '') line.labelBlock = Number(label.slice(1, -2))
  return line
}

/** A `\` at the end that no other backslash escapes: how a read ends a line followed by a hard break. */
function endsWithBreak(text: string): boolean {
  let slashes = 0
  for (let at = text.length - 1; at >= 0 && text.charCodeAt(at) === 92; at--) slashes++
  return slashes % 2 === 1 && text.length > 1
}

/**
 * Text copied from a code block's lines, without the start the read writes before each of them inside a
 * list or quote (`prefix`: `  `, `> `…; a blank code line shows it without its trailing spaces). The first
 * line may have been copied from its middle, so it loses the prefix only when it has it; every other line
 * must have it, else undefined (the copy is not of these lines).
 */
export function withoutCodePrefix(text: string, prefix: string): string | undefined {
  if (prefix === '') return text
  const bare = prefix.trimEnd()
  const lines = text.split('\n')
  const out: string[] = []
  for (const [index, line] of lines.entries()) {
    if (line.startsWith(prefix)) out.push(line.slice(prefix.length))
    else if (line === bare) out.push('')
    else if (index === 0) out.push(line)
    else return undefined
  }
  return out.join('\n')
}

/** New code for those lines: each line loses the prefix where it has it, and is kept as written where not. */
export function newCodeText(text: string, prefix: string): string {
  if (prefix === '') return text
  const bare = prefix.trimEnd()
  return text
    .split('\n')
    .map((line) => (line.startsWith(prefix) ? line.slice(prefix.length) : line === bare ? '' : line))
    .join('\n')
}

/** A table's delimiter line (`| - | :-: |`), which a read shows under the header row. */
export const TABLE_DELIMITER = /^\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?$/

/** A code fence line (```` ```js ````, `~~~`). */
export const CODE_FENCE = /^(?:`{3,}|~{3,})[^`]*$/

/** A horizontal rule as a read writes it (`---`, `***`, `___`, spaces allowed between). */
export const THEMATIC_BREAK = /^(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$/

/** The pieces of a table row between its unescaped `|` (the edge pipes dropped); undefined without one. */
export function rowPieces(line: string): string[] | undefined {
  const pieces: string[] = []
  let current = ''
  let pipes = 0
  for (let at = 0; at < line.length; at++) {
    const char = line[at]!
    if (char === '\\' && at + 1 < line.length) {
      current += char + line[at + 1]
      at++
      continue
    }
    if (char === '|') {
      pieces.push(current)
      current = ''
      pipes++
      continue
    }
    current += char
  }
  pieces.push(current)
  if (pipes === 0) return undefined
  if (pieces[0]!.trim() === '') pieces.shift()
  if (pieces.length > 0 && pieces.at(-1)!.trim() === '') pieces.pop()
  return pieces.length === 0 ? undefined : pieces
}
