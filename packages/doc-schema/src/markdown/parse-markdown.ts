import type { Node as PMNode } from '@tiptap/pm/model'
import type MarkdownIt from 'markdown-it'
import type { DocNode } from '../doc-json.ts'
import { newHeadingId } from '../heading-id.ts'
import { editorSchema, markdownIt } from '../lazy-libs.ts'
import { HEADING_ID_ATTR, MAX_MARKDOWN_CHARS, MAX_WRITE_ELEMENTS } from '../limits.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { footnoteDefinitions } from './footnotes.ts'
import { convertInline } from './inline-tokens.ts'
import { countTokens, MarkdownTooComplex, MarkdownWork, parseCounted } from './markdown-work.ts'
import { tokensToBlocks } from './tokens-to-blocks.ts'

export type ParseOptions = {
  /** Shallowest heading level the Markdown may contain (default 2: level 1 is the document title). */
  minHeadingLevel?: number
  /** Accept a level-1 heading as the very first block: the title of a document being created. */
  allowTitle?: boolean
  /** The element ceiling (default MAX_WRITE_ELEMENTS, one agent write built on the live document). */
  elements?: number
}

// html: true so the few allowed inline tags (<u>, <mark>, <sub>, <sup>, <br>) can be read as marks;
// every other tag is turned back into visible text by the token conversion.
let parser: MarkdownIt | undefined

/** The parser, built at its first use (lazy-libs.ts). */
function writeParser(): MarkdownIt {
  if (parser) return parser
  const made = new (markdownIt())('default', { html: true, linkify: false, typographer: false })
  made.use(footnoteDefinitions)
  countTokens(made)
  parser = made // kept only once it is set up whole
  return parser
}

/**
 * Parses GFM Markdown into checked top-level blocks (ProseMirror JSON), each heading with a fresh id.
 * Refusals: `empty`, `too_large`, `too_complex` (over MAX_WRITE_ELEMENTS, MAX_TABLE_CELLS or
 * MAX_MARKDOWN_EXPANSION_CHARS, counted while it is read), `h1_not_allowed`, `heading_too_shallow`,
 * `invalid_content`.
 */
export function parseMarkdown(markdown: string, opts: ParseOptions = {}): Result<DocNode[]> {
  if (markdown.length > MAX_MARKDOWN_CHARS) {
    return refuseFor(
      'too_large',
      `markdown: ${markdown.length} characters is over the limit of ${MAX_MARKDOWN_CHARS}; send it in smaller parts.`,
      'markdown',
    )
  }
  if (markdown.trim() === '')
    return refuseFor('empty', 'markdown: it is empty; send at least one block of content.', 'markdown')
  const tokens = parseCounted(writeParser(), markdown, {
    elements: opts.elements ?? MAX_WRITE_ELEMENTS,
    scope: 'one write',
  })
  if (tokens.kind === 'error') return tokens
  const blocks = tokensToBlocks(tokens.value)
  if (blocks.length === 0)
    return refuseFor('empty', 'markdown: it holds no content; send at least one block.', 'markdown')

  const minLevel = opts.minHeadingLevel ?? 2
  for (const [index, block] of blocks.entries()) {
    if (block.type !== 'heading') continue
    const level = Number(block.attrs?.level)
    if (level === 1 && index === 0 && opts.allowTitle) continue
    if (level === 1 && minLevel <= 2) {
      return refuseFor(
        'h1_not_allowed',
        'markdown: a level-1 heading (# …) is only the document title; use ## or deeper for sections.',
        'markdown',
      )
    }
    if (level < minLevel) {
      const need =
        minLevel > 6
          ? 'no headings here (the section is already level 6)'
          : `${'#'.repeat(minLevel)} or deeper`
      return refuseFor(
        'heading_too_shallow',
        `markdown: heading level ${level} is not deeper than the section; use ${need}.`,
        'markdown',
      )
    }
    block.attrs = { ...block.attrs, [HEADING_ID_ATTR]: newHeadingId() }
  }
  return checkBlocks(blocks)
}

/**
 * One line of inline Markdown, as a read shows a block's text, read back into text runs with marks:
 * escapes (`https\://`), character references, code spans, emphasis, links and the mark tags, the same
 * way `parseMarkdown` reads a paragraph. No block syntax (a leading `- ` or `#` stays text). `media` is
 * true when it holds an image, which has no place in a text run (it is left out). Counted as it is read,
 * like `parseMarkdown`: over `elements` (default MAX_WRITE_ELEMENTS) it is refused `too_complex`.
 */
export function parseInlineMarkdown(
  text: string,
  elements = MAX_WRITE_ELEMENTS,
): Result<{ nodes: DocNode[]; media: boolean }> {
  const work = new MarkdownWork({ elements, scope: 'one write' }, text.length)
  let tokens: ReturnType<MarkdownIt['parseInline']>
  try {
    tokens = writeParser().parseInline(text, { work })
  } catch (error) {
    if (error instanceof MarkdownTooComplex) return refuseFor('too_complex', error.message, 'markdown')
    throw error
  }
  const nodes: DocNode[] = []
  let media = false
  for (const token of tokens) {
    for (const piece of convertInline(token.children ?? [])) {
      if (piece.kind === 'image') media = true
      else nodes.push(piece.node)
    }
  }
  return ok({ nodes, media })
}

/** Normalises every block through the schema and checks it: nothing invalid is ever written to Yjs. */
export function checkBlocks(blocks: DocNode[]): Result<DocNode[]> {
  const checked = checkNodes(blocks)
  return checked.kind === 'error' ? checked : ok(checked.value.map((node) => node.toJSON() as DocNode))
}

/** `checkBlocks` as the checked ProseMirror nodes (what the Yjs build reads), without their JSON. */
export function checkNodes(blocks: DocNode[]): Result<PMNode[]> {
  const checked: PMNode[] = []
  for (const block of blocks) {
    try {
      const node = editorSchema().nodeFromJSON(block)
      node.check()
      checked.push(node)
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      return refuseFor(
        'invalid_content',
        `markdown: a ${block.type} block is not valid here (${reason}); rewrite it.`,
        'markdown',
      )
    }
  }
  return ok(checked)
}
