/**
 * Which raw HTML the Markdown export writes as HTML. The document model has no HTML node: a file's inline
 * `<b>fast</b>` and its escaped `\<string\>` both import as the text `<b>`, `<string>`. The export tells
 * them apart by what an author writes on purpose:
 *
 * - Inline, a tag is HTML when it has attributes (`<a name="x">`, `<img src="…">`), is a comment,
 *   processing instruction, declaration or CDATA, or its element is both opened and closed in the same
 *   block (`<b>…</b>`, `<i>…</i>`). A lone bare tag (`<string>`, `<T>`, `Vec<u8>`, `"<main>"`) is text an
 *   author escaped, or would have: written raw, a renderer hides it or starts an element, so it is escaped.
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
/** The element name of a start or end tag, lower-cased by the callers. */
const TAG_NAME = /^<\/?([A-Za-z][A-Za-z0-9-]*)/
/** Every start or end tag in a text, for pairing (a `>` inside an attribute value only ends it early). */
const TAGS = /<(\/?)([A-Za-z][A-Za-z0-9-]*)(?=[\s/>])[^<>]*>/g

/**
 * Element names both opened and closed somewhere in `text` (a block's text, code spans left out), or
 * undefined when there are none. Computed once per block and handed to its text nodes (inline-to-mdast.ts).
 */
export function pairedTagNames(text: string): ReadonlySet<string> | undefined {
  if (!text.includes('</')) return undefined
  const opened = new Set<string>()
  const closed = new Set<string>()
  for (const match of text.matchAll(TAGS)) (match[1] ? closed : opened).add(match[2]!.toLowerCase())
  const paired = new Set([...closed].filter((name) => opened.has(name)))
  return paired.size > 0 ? paired : undefined
}

/** Whether a complete inline tag (markdown-it's HTML_TAG_RE match) reads as HTML its author meant. */
export function tagMeantAsHtml(tag: string, paired: ReadonlySet<string> | undefined): boolean {
  if (NOT_AN_ELEMENT.test(tag) || WITH_ATTRIBUTES.test(tag)) return true
  const name = TAG_NAME.exec(tag)?.[1]
  return name !== undefined && paired?.has(name.toLowerCase()) === true
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
