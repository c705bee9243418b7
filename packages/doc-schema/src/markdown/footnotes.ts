/**
 * GFM footnotes, kept as their Markdown text (the schema has no footnote node): a reference `[^1]` is text
 * and a definition `[^1]: …` is a paragraph starting with that label, so both are visible and editable in
 * the editor, export writes them back unescaped (escape-text.ts) and a GFM renderer shows the footnotes with
 * the same labels, content and numbering (the order of first references).
 *
 * markdown-it without this rule reads a definition whose text is one word or URL as a link reference
 * definition (it vanishes), and merges consecutive definitions into one paragraph. The rule below reads each
 * definition as its own paragraph: its first line, lazy continuation lines, and the indented paragraphs after
 * it (GFM's further paragraphs of the footnote), joined by hard breaks.
 */
import type MarkdownIt from 'markdown-it'
import type StateBlock from 'markdown-it/lib/rules_block/state_block.mjs'

/** `[^label]:` at the start of a line: a label of non-space characters other than `]`. */
export const FOOTNOTE_DEFINITION = /^\[\^[^\]\s]+\]:/

function lineText(state: StateBlock, line: number): string {
  return state.src.slice(state.bMarks[line]! + state.tShift[line]!, state.eMarks[line]!)
}

function startsDefinition(state: StateBlock, line: number): boolean {
  return state.sCount[line]! - state.blkIndent < 4 && FOOTNOTE_DEFINITION.test(lineText(state, line))
}

function footnoteDefinition(state: StateBlock, startLine: number, endLine: number, silent: boolean) {
  if (!startsDefinition(state, startLine)) return false
  if (silent) return true
  const terminators = state.md.block.ruler.getRules('paragraph')
  const first = lineText(state, startLine)
  const label = FOOTNOTE_DEFINITION.exec(first)![0]
  // The first line's text as written after the label (a space or none), so the text reads back the same.
  const rest = first.slice(label.length).trimEnd()
  const paragraphs: string[][] = [[rest]]
  let line = startLine + 1
  while (line < endLine) {
    if (state.isEmpty(line)) {
      // A blank line ends the definition unless an indented paragraph of it follows.
      const next = state.skipEmptyLines(line)
      if (next >= endLine || state.sCount[next]! - state.blkIndent < 4) break
      paragraphs.push([])
      line = next
      continue
    }
    const indented = state.sCount[line]! - state.blkIndent >= 4
    if (!indented && startsDefinition(state, line)) break
    if (!indented && terminators.some((rule) => rule(state, line, endLine, true))) break
    paragraphs.at(-1)!.push(lineText(state, line).trim())
    line++
  }
  const body = paragraphs
    .map((lines) => lines.filter((text) => text.trim() !== '').join('\n'))
    .filter((text) => text !== '')
    .join('\\\n')
  const open = state.push('paragraph_open', 'p', 1)
  open.map = [startLine, line]
  const inline = state.push('inline', '', 0)
  inline.content = rest.trim() === '' && body !== '' ? `${label} ${body}` : `${label}${body}`
  inline.map = [startLine, line]
  inline.children = []
  state.push('paragraph_close', 'p', -1)
  state.line = line
  return true
}

/** Adds the footnote-definition rule (before link reference definitions) to a markdown-it instance. */
export function footnoteDefinitions(md: MarkdownIt): void {
  md.block.ruler.before('reference', 'footnote_definition', footnoteDefinition)
}
