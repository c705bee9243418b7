/**
 * A file's top-level blocks read one at a time, and a long list's items a slice at a time, so that the
 * tokens of only one block (or one slice of 1,000 items) are ever held (the import, import-markdown.ts).
 *
 * markdown-it reads a file in two phases: its block rules make every block's tokens, then its inline rules
 * read every block's text. A file of one flat list of 75,000 items made ~450,000 tokens (~100 MB) before
 * any was converted. Here the block rules run twice over the file:
 *
 * 1. A scan: the block rules run over the whole file as markdown-it runs them, each token counted into the
 *    parse's `MarkdownWork` and let go as soon as it is made. What is kept: each top-level block's lines, its
 *    first token's type and tag, and for a list its items' first lines and how deep its tokens go. The
 *    reference definitions land in the parse's `env`, as they do in one parse, so a link used before its
 *    definition reads the same.
 * 2. A block at a time: the block rules run again over that block's lines only (on the same line tables),
 *    then the inline rules over its tokens (counted). A block's tokens depend only on its own lines: each
 *    rule stops at the line where the next block starts and reads no line past it, so the tokens are the
 *    ones one parse makes (`import-blocks.test.ts` holds this over the corpus and random files).
 *
 * A list of more than LIST_SLICE_ITEMS items is read in slices of items (`slices`): the lines from one
 * item's first line to a later item's, read as a list of their own. An item's tokens depend only on its own
 * lines too, with one exception a slice must avoid: a line that starts an item of the list but would start
 * something else at the top of a file (`- a | b` over `- | -` is two items of a list, or a table); such a
 * line is never a slice's first (the slice goes on to the next item). Whether a list is tight or loose is
 * the whole list's (a blank line between any two items) and a slice could not tell, but the document has
 * no such attribute: the conversion never reads it. A list whose tokens go deeper than the nesting the
 * measuring of its parts allows (`MAX_NESTING_DEPTH`) or near markdown-it's `maxNesting` (where it swallows
 * the rest of the lines it was given) is read whole.
 */
import type MarkdownIt from 'markdown-it'
import type StateBlock from 'markdown-it/lib/rules_block/state_block.mjs'
import type Token from 'markdown-it/lib/token.mjs'
import type { Nesting } from 'markdown-it/lib/token.mjs'
import { markdownIt } from '../lazy-libs.ts'
import { MAX_NESTING_DEPTH } from '../limits.ts'
import { footnoteDefinitions } from './footnotes.ts'
import { countTokens, type MarkdownWork } from './markdown-work.ts'

/** Items of a long list read at a time (a slice's tokens, ~6,000 for one-word items). */
export const LIST_SLICE_ITEMS = 1_000

/** markdown-it as an import reads a file (the same configuration for both phases). */
export function importParser(): MarkdownIt {
  // linkify: a bare `https://…` or `mailto:` URL in a file is a link (a GFM autolink), written back as
  // `<https://…>`; fuzzy forms (`example.com`, `a@b.c`) stay text. Link targets are kept as written
  // (markdown-it would percent-encode `^` or `–`); validateLink still refuses `javascript:` and other
  // unsafe schemes.
  const md = new (markdownIt())('default', { html: true, linkify: true, typographer: false })
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false })
  md.normalizeLink = (url) => url
  md.use(footnoteDefinitions)
  countTokens(md)
  return md
}

/** The parsers an import reads with, built at the first import (markdown-it loads then: lazy-libs.ts). */
type ImportParsers = {
  blockParser: MarkdownIt
  /** The core rules after the block phase (inline, linkify, text joining, the attributes' count). */
  inlineParser: MarkdownIt
  /** The block rules tried before `list` at a line: one that matches there makes it no place to cut a list. */
  beforeList: ReturnType<MarkdownIt['block']['ruler']['getRules']>
  /** A block state whose tokens can be let go as they are made (the scan) and that reports each one. */
  ScanState: new (
    ...args: ConstructorParameters<typeof StateBlock>
  ) => ScanState
}

type ScanState = StateBlock & { keep: boolean; made?: (token: Token) => void }

let parsers: ImportParsers | undefined

function importParsers(): ImportParsers {
  if (parsers) return parsers
  const blockParser = importParser()
  const inlineParser = importParser()
  inlineParser.core.ruler.disable(['normalize', 'block'])
  const all = blockParser.block.ruler.getRules('')
  const withoutList = importParser()
  withoutList.block.ruler.disable('list')
  const others = new Set(withoutList.block.ruler.getRules(''))
  const beforeList = all.slice(
    0,
    all.findIndex((rule) => !others.has(rule)),
  )
  class ScanStateOf extends (blockParser.block.State as typeof StateBlock) {
    keep = true
    made?: (token: Token) => void

    override push(type: string, tag: string, nesting: Nesting): Token {
      const token = super.push(type, tag, nesting)
      if (!this.keep) this.tokens.pop()
      this.made?.(token)
      return token
    }
  }
  parsers = { blockParser, inlineParser, beforeList, ScanState: ScanStateOf }
  return parsers
}

/** One top-level block of a file, as the scan found it. */
export type ScannedBlock = {
  /** Its lines, `[start, end)`, 0-based. */
  start: number
  end: number
  /** Its first token's type and tag (`heading_open` `h2`, `bullet_list_open` `ul`, `html_block`…). */
  type: string
  tag: string
  /** A list read in slices: the first line of each slice's first item (the first is `start`). */
  slices?: number[]
  /** A long list's items' first lines, until the scan has chosen its slices. */
  items?: number[]
}

type Env = { work?: MarkdownWork; references?: unknown }

/**
 * A file's text (markdown-it's normalisation applied) scanned into its top-level blocks, every block token
 * counted into `env.work` (a ceiling crossed throws `MarkdownTooComplex` as one parse does). `tokens(block)`
 * then gives a block's tokens, `sliceTokens` a slice of a long list's.
 */
export function scanBlocks(
  source: string,
  env: Env,
  /** Items a slice holds (a test cuts lists finer to try every cut). */
  sliceItems = LIST_SLICE_ITEMS,
) {
  const { blockParser, inlineParser, beforeList, ScanState } = importParsers()
  const src = source.replace(/\r\n?|\n/g, '\n').replace(/\0/g, '\uFFFD')
  const state = new ScanState(src, blockParser, env, [])
  const blocks: ScannedBlock[] = []
  if (src !== '') {
    state.keep = false
    let open: Token | null = null // the current top-level block's first token (its map is set after push)
    let item: Token | null = null // the last top-level list's last item opened
    let items: number[] = []
    let deepest = 0
    const close = () => {
      if (item) items.push(item.map![0])
      item = null
      if (!open) return
      const block: ScannedBlock = { start: open.map![0], end: open.map![1], type: open.type, tag: open.tag }
      // Below the levels the measuring in parts allows (the list is level 1, its tokens' levels + 1 bound
      // its nodes'), and two below markdown-it's maxNesting.
      const shallow =
        deepest + 2 <= MAX_NESTING_DEPTH &&
        deepest + 2 < ((blockParser.options as { maxNesting?: number }).maxNesting ?? 100)
      if (items.length > sliceItems && shallow) block.items = items
      blocks.push(block)
      open = null
      items = []
      deepest = 0
    }
    state.made = (token) => {
      if (item) {
        items.push(item.map![0])
        item = null
      }
      if (token.level === 0 && token.nesting >= 0) {
        close()
        open = token
      }
      if (token.level > deepest) deepest = token.level
      if (token.level === 1 && token.type === 'list_item_open' && open?.type.endsWith('_list_open'))
        item = token
    }
    blockParser.block.tokenize(state, 0, state.lineMax)
    close()
    state.made = undefined
    // Where each long list may be cut, tried at the top level once the scan is over (uncounted, let go).
    const work = env.work
    env.work = undefined
    try {
      for (const block of blocks) {
        if (!block.items) continue
        block.slices = sliceStarts(state, block.items, sliceItems, beforeList)
        block.items = undefined
      }
    } finally {
      env.work = work
    }
    state.keep = true
  }

  /** The tokens of lines `[start, end)` read at the top level: block rules uncounted, inline counted. */
  function read(start: number, end: number): Token[] {
    const work = env.work
    env.work = undefined // counted by the scan
    const tokens: Token[] = []
    state.tokens = tokens
    state.line = start
    try {
      blockParser.block.tokenize(state, start, end)
    } finally {
      env.work = work
      state.tokens = []
    }
    const core = new inlineParser.core.State('', inlineParser, env)
    core.tokens = tokens
    inlineParser.core.process(core)
    return tokens
  }

  return {
    blocks,
    /** A block's tokens, inline ones included (counted into `env.work` as they are made). */
    tokens(block: ScannedBlock): Token[] {
      const tokens = read(block.start, block.end)
      if (tokens[0]?.type !== block.type)
        throw new Error(`import: block at line ${block.start + 1} read apart`)
      return tokens
    },
    /** The tokens of a long list's slice `index`: a list (`…_list_open … _close`) of its items. */
    sliceTokens(block: ScannedBlock, index: number): Token[] {
      const slices = block.slices!
      const tokens = read(slices[index]!, slices[index + 1] ?? block.end)
      if (tokens[0]?.type !== block.type || tokens.at(-1)?.level !== 0 || tokens.at(-1)?.nesting !== -1) {
        throw new Error(`import: list at line ${block.start + 1} read apart`)
      }
      return tokens
    },
  }
}

/** Every `every`-th item's line where a list may be cut (its first line starts the list at the top). */
function sliceStarts(
  state: StateBlock,
  items: number[],
  every: number,
  beforeList: ImportParsers['beforeList'],
): number[] {
  const starts = [items[0]!]
  let since = 0
  for (let i = 1; i < items.length; i++) {
    if (++since < every) continue
    const line = items[i]!
    if (beforeList.some((rule) => rule(state, line, state.lineMax, true))) continue
    starts.push(line)
    since = 0
  }
  return starts
}
