import type { Root, RootContent } from 'mdast'
import type { Handle, Join, Options, State } from 'mdast-util-to-markdown'
import type { DocNode } from '../doc-json.ts'
import { gfmLib, type ToMarkdownLib, toMarkdownLib } from '../lazy-libs.ts'
import { flowToMdast, type SerializeOptions } from './blocks-to-mdast.ts'
import { withNarrowAmpersand } from './escape-links.ts'
import { textHandler } from './escape-text.ts'
import { usePhrasingWriter } from './phrasing-writer.ts'

/**
 * An HTML block (inside a list item or a quote, blocks-to-mdast.ts) has a blank line before and after it:
 * only a blank line ends it, and one of kind 7 cannot interrupt a paragraph. Tight list items would join
 * it to its neighbours with a bare line break.
 */
const joinHtmlBlock: Join = (left, right) => (left.type === 'html' || right.type === 'html' ? 1 : undefined)

/**
 * A rule has a blank line before it. In a tight list item a nested list's last line would run into it
 * (`- 2. word |` then `  ---`), and a line holding `|` above a `---` line is a one-column table's header to
 * markdown-it.
 */
const joinRule: Join = (_, right) => (right.type === 'thematicBreak' ? 1 : undefined)

let baseOptions: Options | undefined

/** The serialiser's options, built at its first use (the library loads then: lazy-libs.ts). */
function toMarkdownOptions(): Options {
  baseOptions ??= markdownOptions(toMarkdownLib().defaultHandlers)
  return baseOptions
}

// Every option spelled out: output must not change if a library default does.
const markdownOptions = (defaultHandlers: ToMarkdownLib['defaultHandlers']): Options => ({
  // Unpadded tables: fewer characters for agents, same table.
  extensions: [gfmLib().gfmToMarkdown({ tablePipeAlign: false })],
  bullet: '-',
  bulletOther: '*',
  bulletOrdered: '.',
  emphasis: '*',
  strong: '*',
  fence: '`',
  fences: true,
  rule: '-',
  listItemIndent: 'one',
  incrementListMarker: true,
  setext: false,
  closeAtx: false,
  resourceLink: false,
  join: [joinHtmlBlock, joinRule],
  // Escapes only what would change the meaning; inline HTML tags as written (escape-text.ts).
  handlers: {
    text: textHandler,
    link: withNarrowAmpersand(defaultHandlers.link),
    image: withNarrowAmpersand(defaultHandlers.image),
  },
})

/** The options with our phrasing writer (phrasing-writer.ts) installed by the root handler. */
function withOurPhrasing(fallbacks?: string[]): Options {
  return {
    ...toMarkdownOptions(),
    handlers: {
      ...toMarkdownOptions().handlers,
      root: (node, parent, state, info) => {
        usePhrasingWriter(state, fallbacks)
        return toMarkdownLib().defaultHandlers.root(node, parent, state, info)
      },
    },
  }
}
let withOurs: Options | undefined

function optionsFor(opts: SerializeOptions): Options {
  if (opts.phrasing === 'library') return toMarkdownOptions()
  if (opts.phrasing) return withOurPhrasing(opts.phrasing.fallbacks)
  withOurs ??= withOurPhrasing()
  return withOurs
}

/** Markdown of a run of sibling blocks, serialised together so adjacent lists stay apart. */
export function blocksToMarkdown(blocks: DocNode[], opts: SerializeOptions = {}): string {
  const children: RootContent[] = [...flowToMdast(blocks, opts)]
  if (children.length === 0) return ''
  const root: Root = { type: 'root', children }
  return toMarkdownLib().toMarkdown(root, optionsFor(opts)).replace(/\n+$/, '')
}

export type MarkdownPrefix = {
  /** The start of `blocksToMarkdown(blocks)`, at least `minChars` long unless it is all of it. */
  text: string
  /** True when `text` is the whole of `blocksToMarkdown(blocks)`. */
  complete: boolean
  /** True when a bounded render stopped at its work allowance (MAX_RENDER_WORK) before `minChars`. */
  byWork?: boolean
}

/**
 * The start of `blocksToMarkdown(blocks, opts)`, character for character, serialising blocks one at a time
 * (and reading them from the iterable only as needed) until at least `minChars` characters are known.
 * The cost follows `minChars` (plus the one block that crosses it), not the number of blocks.
 */
export function blocksToMarkdownPrefix(
  blocks: Iterable<DocNode>,
  minChars: number,
  opts: SerializeOptions = {},
): MarkdownPrefix {
  const results: string[] = []
  let length = 0
  /** Characters written so far up to the last one that is not a newline (what trimming would keep). */
  let shown = 0
  const complete = writeFlow(blocks, opts, {
    push(value) {
      results.push(value)
      const end = withoutTrailingNewlines(value)
      if (end > 0) shown = length + end
      length += value.length
    },
    enough: () => shown >= minChars,
  })
  return { text: results.join('').replace(/\n+$/, ''), complete }
}

/**
 * `blocksToMarkdown(blocks, opts)` given to `write` in pieces of about `pieceChars` characters (a piece ends
 * where a block's Markdown does, so one block larger than that is a piece of its own), in order: joined,
 * exactly the same characters. Blocks are read from the iterable one ahead of the one written, and each is
 * let go once written, so a large document's Markdown is never held whole, nor its syntax tree (an export:
 * each piece is sent on as it is made).
 */
export function blocksToMarkdownPieces(
  blocks: Iterable<DocNode>,
  write: (piece: string) => void,
  pieceChars: number,
  opts: SerializeOptions = {},
): void {
  let pending: string[] = []
  let pendingChars = 0
  /** Newlines written last: kept back until more follows (the whole's trailing newlines are trimmed). */
  let newlines = ''
  writeFlow(
    blocks,
    opts,
    {
      push(value) {
        const end = withoutTrailingNewlines(value)
        if (end === 0) {
          newlines += value
          return
        }
        pending.push(newlines, end === value.length ? value : value.slice(0, end))
        pendingChars += newlines.length + end
        newlines = value.slice(end)
        if (pendingChars < pieceChars) return
        write(pending.join(''))
        pending = []
        pendingChars = 0
      },
      enough: () => false,
    },
    true,
  )
  if (pendingChars > 0) write(pending.join(''))
}

/** The length of `value` without the newlines it ends with. */
function withoutTrailingNewlines(value: string): number {
  let end = value.length
  while (end > 0 && value.charCodeAt(end - 1) === 10) end--
  return end
}

/** A placeholder for a written block let go (`release`): nothing reads a root's earlier children again. */
const RELEASED: RootContent = Object.freeze({ type: 'html', value: '' }) as RootContent

/**
 * Serialises blocks one at a time, giving each written part (a block's Markdown, the join after it) to
 * `out.push`, until they end (true) or `out.enough()` says stop after a block (false). Same characters as
 * `blocksToMarkdown` because it is the same serialisation: one `toMarkdown` call whose root handler is the
 * library's `containerFlow` loop (state carried from block to block: the bullet alternation of adjacent
 * lists, the join between siblings), only fed lazily and stopped early; the caller trims the trailing
 * newlines as blocksToMarkdown does. `release`: each block's syntax tree is let go once it is written and
 * joined to the next (the root's earlier children are read by no handler: they only read their own node,
 * the one after it and their own children).
 */
function writeFlow(
  blocks: Iterable<DocNode>,
  opts: SerializeOptions,
  out: { push(value: string): void; enough(): boolean },
  release = false,
): boolean {
  const source = flowToMdast(blocks, opts)
  let complete = true
  /** `containerFlow` (mdast-util-to-markdown/lib/util/container-flow.js) over the lazily built children. */
  const root: Handle = (node, _parent, state, info) => {
    const parent = node as Root
    if (opts.phrasing !== 'library') usePhrasingWriter(state, opts.phrasing?.fallbacks)
    const tracker = state.createTracker(info)
    // Children are appended as they are read, one ahead of the one being written, as `between` needs.
    let next = source.next()
    if (!next.done) parent.children.push(next.value)
    state.indexStack.push(-1)
    for (let index = 0; !next.done; index++) {
      const child = next.value
      next = source.next()
      if (!next.done) parent.children.push(next.value)
      state.indexStack[state.indexStack.length - 1] = index
      out.push(
        tracker.move(state.handle(child, parent, state, { before: '\n', after: '\n', ...tracker.current() })),
      )
      if (child.type !== 'list') state.bulletLastUsed = undefined
      if (next.done) break
      if (out.enough()) {
        complete = false
        break
      }
      out.push(tracker.move(between(child, next.value, parent, state)))
      if (release) parent.children[index] = RELEASED
    }
    state.indexStack.pop()
    return ''
  }
  toMarkdownLib().toMarkdown(
    { type: 'root', children: [] },
    { ...toMarkdownOptions(), handlers: { ...toMarkdownOptions().handlers, root } },
  )
  return complete
}

/** The library's `between` (container-flow.js): the last join rule with an answer decides. */
function between(left: RootContent, right: RootContent, parent: Root, state: State): string {
  let index = state.join.length
  while (index--) {
    const result = state.join[index]!(left, right, parent, state)
    if (result === true || result === 1) break
    if (typeof result === 'number') return '\n'.repeat(1 + result)
    if (result === false) return '\n\n<!---->\n\n'
  }
  return '\n\n'
}
