/**
 * Which raw HTML the Markdown export writes as HTML. The document model has no HTML node: a file's inline
 * `<b>fast</b>` and its escaped `\<string\>` both import as the text `<b>`, `<string>`. The export tells
 * them apart by what an author writes on purpose:
 *
 * - Inline, a tag is HTML when it has attributes (`<a name="x">`, `<img src="…">`), is a comment,
 *   processing instruction, declaration or CDATA, or names an inline HTML element in lower case (`<b>`,
 *   `</i>`, `<kbd>`, `<code>`). Any other bare tag (`<string>`, `<T>`, `Vec<u8>`, `"<main>"`, `<Object>`)
 *   is text an author escaped, or would have: written raw, a renderer hides it or starts an element, so it
 *   is escaped. The tag alone decides, not the rest of its block: a bounded read renders a block cut short
 *   and must write its start as the whole block is written (block-prefix.ts).
 * - A block: the lines of an HTML block inside a list item or a quote import as a paragraph, one text line
 *   per source line (tokens-to-blocks.ts); such a paragraph is written back as those lines, an HTML block
 *   again (blocks-to-mdast.ts), not as escaped text.
 */

import blockNames from 'markdown-it/lib/common/html_blocks.mjs'
import { HTML_OPEN_CLOSE_TAG_RE } from 'markdown-it/lib/common/html_re.mjs'
import type { DocNode } from '../doc-json.ts'

/** A start tag with at least one attribute. */
const WITH_ATTRIBUTES = /^<[A-Za-z][A-Za-z0-9-]*\s+[A-Za-z_:]/
/** Comments, processing instructions, declarations, CDATA: never an escaped word. */
const NOT_AN_ELEMENT = /^<[!?]/
/** HTML's inline (phrasing) elements that Markdown files use bare, in lower case as HTML is written. */
const INLINE_ELEMENT = new RegExp(
  `^</?(?:${[
    'a',
    'abbr',
    'b',
    'bdi',
    'bdo',
    'big',
    'cite',
    'code',
    'data',
    'del',
    'dfn',
    'em',
    'i',
    'kbd',
    'mark',
    'nobr',
    'q',
    'rp',
    'rt',
    'ruby',
    's',
    'samp',
    'small',
    'span',
    'strike',
    'strong',
    'sub',
    'sup',
    'time',
    'tt',
    'u',
    'var',
    'wbr',
    'ins',
    'br',
    'img',
    'font',
    'center',
  ].join('|')})\\s*/?>$`,
)

/** Whether a complete inline tag (markdown-it's HTML_TAG_RE match) reads as HTML its author meant. */
export function tagMeantAsHtml(tag: string): boolean {
  return NOT_AN_ELEMENT.test(tag) || WITH_ATTRIBUTES.test(tag) || INLINE_ELEMENT.test(tag)
}

/** markdown-it's HTML block kind 6: a block-level element's open or close tag starts the line. */
const HTML_BLOCK_6 = new RegExp(`^</?(?:${blockNames.join('|')})(?:\\s|/?>|$)`, 'i')
/** Kind 7: the line is one complete open or close tag (not script, pre, style, textarea), then nothing. */
const HTML_BLOCK_7 = new RegExp(`^(?:${HTML_OPEN_CLOSE_TAG_RE.source})$`)
const RAW_TEXT_ELEMENT = /^<\/?(?:script|pre|style|textarea)(?:\s|\/?>|$)/i

/**
 * The lines of a paragraph that reads back as itself when written as a raw HTML block, or null. It must be
 * plain text lines (no marks) separated by hard breaks, each line trimmed and non-empty, the first one
 * starting an HTML block that only a blank line ends (kinds 6 and 7). Read back, such a block is the same
 * paragraph: its lines trimmed, joined by hard breaks.
 */
export function htmlBlockLines(block: DocNode): string | null {
  if (block.type !== 'paragraph') return null
  const content = block.content ?? []
  const first = content[0]
  if (first?.type !== 'text' || first.marks?.length || !first.text?.startsWith('<')) return null
  const lines: string[] = ['']
  for (const node of content) {
    if (node.type === 'hardBreak') lines.push('')
    else if (node.type === 'text' && !node.marks?.length) lines[lines.length - 1] += node.text ?? ''
    else return null
  }
  for (const line of lines) {
    if (line === '' || line !== line.trim() || /[\r\n]/.test(line)) return null
  }
  const head = lines[0]!
  if (RAW_TEXT_ELEMENT.test(head)) return null
  if (!HTML_BLOCK_6.test(head) && !HTML_BLOCK_7.test(head)) return null
  return lines.join('\n')
}
