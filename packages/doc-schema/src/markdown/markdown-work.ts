/**
 * What a Markdown input may expand to, counted while markdown-it reads it, before the cost is paid.
 *
 * Bytes do not bound the work Markdown causes: two bytes (`|a`) make a table cell, which becomes a cell, a
 * paragraph and a text run in ProseMirror and in Yjs (0.6 MB of table built 300,000 cells, 3.5 GB and 48 s),
 * and a reference link (`[x][r]`, a few bytes) copies its definition's target every time it is used (30 KB
 * made 40 MB). So each parse carries a `MarkdownWork`, and markdown-it's own token constructors count into it:
 *
 * - **Elements**: every opening token markdown-it makes (a block, a list item, a table cell, a run of text,
 *   a mark, a link, a break, an image), counted as the token is made, block tokens while the block rules
 *   run and inline tokens while the inline rules run. One element is about one node or mark of the built
 *   document, so the ceiling bounds the tokens held, the nodes checked and the Yjs items written.
 * - **Table cells**, per table: a table is shown and edited as one unit in every editor.
 * - **Expanded characters**: the characters of link targets, link titles and image sources and titles,
 *   beyond the input's own length. An inline link's target is in the input, so only reuse of a reference
 *   definition can pass it.
 *
 * Crossing a ceiling throws `MarkdownTooComplex` out of markdown-it at once (nothing past the ceiling is
 * made); the parse functions turn it into a `too_complex` refusal that names the limit and what to do.
 */
import type MarkdownIt from 'markdown-it'
import type Token from 'markdown-it/lib/token.mjs'
import type { Nesting } from 'markdown-it/lib/token.mjs'
import { MAX_MARKDOWN_EXPANSION_CHARS, MAX_TABLE_CELLS } from '../limits.ts'
import { type Result, refuseFor } from '../result.ts'

export type MarkdownCeilings = {
  /** Most elements (opening tokens) the input may make. */
  elements: number
  /** What the input is, in the refusal: "an import", "one write". */
  scope: string
}

/** Thrown out of markdown-it when an input crosses a ceiling; `message` is the refusal's text. */
export class MarkdownTooComplex extends Error {
  constructor(
    readonly limit: 'elements' | 'table_cells' | 'expansion',
    message: string,
  ) {
    super(message)
    this.name = 'MarkdownTooComplex'
  }
}

/** The running count of one parse (kept in markdown-it's `env` as `work`). */
export class MarkdownWork {
  elements = 0
  private tableCells = 0
  private expandedChars = 0

  constructor(
    readonly ceilings: MarkdownCeilings,
    /** The input's length in UTF-16 units: link targets up to it are the input's own. */
    readonly sourceChars: number,
  ) {}

  token(type: string, nesting: number): void {
    if (nesting < 0) return
    if (++this.elements > this.ceilings.elements) {
      throw new MarkdownTooComplex(
        'elements',
        `markdown: it makes more than ${this.ceilings.elements.toLocaleString('en-US')} elements (blocks, list items, table cells, text runs, marks, links), the limit of ${this.ceilings.scope}; split it into several smaller parts.`,
      )
    }
    if (type === 'table_open') this.tableCells = 0
    else if ((type === 'td_open' || type === 'th_open') && ++this.tableCells > MAX_TABLE_CELLS) {
      throw new MarkdownTooComplex(
        'table_cells',
        `markdown: a table has more than ${MAX_TABLE_CELLS.toLocaleString('en-US')} cells, the limit of one table; split it into several tables or attach the data as a file.`,
      )
    }
  }

  /** Characters of link and image attributes the conversion copies into the document. */
  attributes(chars: number): void {
    this.expandedChars += chars
    if (this.expandedChars > this.sourceChars + MAX_MARKDOWN_EXPANSION_CHARS) {
      throw new MarkdownTooComplex(
        'expansion',
        `markdown: its links and images repeat more than ${MAX_MARKDOWN_EXPANSION_CHARS.toLocaleString('en-US')} characters of targets beyond the text itself (a reference definition used many times); write shorter targets or fewer uses.`,
      )
    }
  }
}

type Env = { work?: MarkdownWork }

/**
 * Makes an instance of markdown-it count every token it makes into `env.work` (see `parseCounted`). Its
 * block and inline states are subclassed on this instance only; parses without `work` are not counted.
 */
export function countTokens(md: MarkdownIt): void {
  const BlockState = md.block.State
  md.block.State = class CountedBlockState extends BlockState {
    override push(type: string, tag: string, nesting: Nesting): Token {
      ;(this.env as Env).work?.token(type, nesting)
      return super.push(type, tag, nesting)
    }
  }
  const InlineState = md.inline.State
  md.inline.State = class CountedInlineState extends InlineState {
    override push(type: string, tag: string, nesting: Nesting): Token {
      ;(this.env as Env).work?.token(type, nesting)
      return super.push(type, tag, nesting)
    }
    override pushPending(): Token {
      ;(this.env as Env).work?.token('text', 0)
      return super.pushPending()
    }
  }
  // After the inline rules (so after references are resolved), before linkify: a linkified URL is its own
  // text, so its target is never an expansion.
  md.core.ruler.after('inline', 'count_attributes', (state) => {
    const work = (state.env as Env).work
    if (!work) return
    for (const block of state.tokens) {
      for (const token of block.children ?? []) {
        if (token.type !== 'link_open' && token.type !== 'image') continue
        let chars = 0
        for (const [name, value] of token.attrs ?? []) if (name !== 'alt') chars += value.length
        work.attributes(chars)
      }
    }
  })
}

/** markdown-it's token stream of `source`, or the refusal of the ceiling it crossed. */
export function parseCounted(md: MarkdownIt, source: string, ceilings: MarkdownCeilings): Result<Token[]> {
  const work = new MarkdownWork(ceilings, source.length)
  try {
    return { kind: 'ok', value: md.parse(source, { work } satisfies Env) }
  } catch (error) {
    if (error instanceof MarkdownTooComplex) return refuseFor('too_complex', error.message, 'markdown')
    throw error
  }
}
