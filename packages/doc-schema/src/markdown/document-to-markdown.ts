import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { MAX_RENDER_WORK } from '../limits.ts'
import type { FlatDocument } from '../yjs/flat-read.ts'
import { topLevelElements } from '../yjs/read-y.ts'
import {
  type BlockSource,
  exactBefore,
  markedBlockPrefix,
  PREFIX_SLACK_CHARS,
  type RenderWork,
  Y_BLOCKS,
} from './block-prefix.ts'
import type { SerializeOptions } from './blocks-to-mdast.ts'
import { yBlockForRender } from './render-depth.ts'
import {
  blocksToMarkdown,
  blocksToMarkdownPieces,
  blocksToMarkdownPrefix,
  type MarkdownPrefix,
} from './serialize-markdown.ts'

/** The whole document as Markdown, deterministic for the same content. Accepts a fragment or doc JSON. */
export function documentToMarkdown(source: Y.XmlFragment | DocNode, opts: SerializeOptions = {}): string {
  if (source instanceof Y.XmlFragment)
    return blocksToMarkdown(topLevelElements(source).map(yBlockForRender), opts)
  return blocksToMarkdown(source.type === 'doc' ? (source.content ?? []) : [source], opts)
}

/**
 * `documentToMarkdown(source, opts)` given to `write` in pieces of about `pieceChars` characters, in order
 * (joined, the same characters): each top-level block is read from the fragment as it is written and let
 * go after, so a large document's Markdown, its JSON and its syntax tree are never held whole (an export
 * of a large document: worker/export.ts).
 */
export function documentMarkdownPieces(
  source: Y.XmlFragment | DocNode,
  write: (piece: string) => void,
  pieceChars: number,
  opts: SerializeOptions = {},
): void {
  if (!(source instanceof Y.XmlFragment)) {
    blocksToMarkdownPieces(source.type === 'doc' ? (source.content ?? []) : [source], write, pieceChars, opts)
    return
  }
  function* blocks(): Generator<DocNode> {
    for (const element of topLevelElements(source as Y.XmlFragment)) yield yBlockForRender(element)
  }
  blocksToMarkdownPieces(blocks(), write, pieceChars, opts)
}

/**
 * The start of `documentToMarkdown(source, opts)`, the same characters, at least `minChars` long unless it
 * is the whole (`complete`). Top-level blocks are read from the fragment and written one at a time until
 * `minChars` is reached, so a bounded read of a large document costs what it shows, not the document; a
 * block larger than what is left to show is converted and written only as far as needed (block-prefix.ts).
 *
 * With `bounded` (fragments only), the conversion also stops where it has spent MAX_RENDER_WORK nodes and
 * marks, so what markup costs is bounded too: the start is then shorter than `minChars` and `byWork` says
 * so (still exact characters of the whole Markdown).
 */
export function documentMarkdownPrefix(
  source: Y.XmlFragment | DocNode | FlatDocument,
  minChars: number,
  opts: SerializeOptions = {},
  bounded = false,
): MarkdownPrefix {
  if (source instanceof Y.XmlFragment)
    return elementsMarkdownPrefix(() => topLevelElements(source), Y_BLOCKS, minChars, opts, bounded)
  if ('topLevel' in source) {
    // A document read flat (yjs/flat-read.ts): its top-level elements' rows, read the same way.
    const flat = source
    function* rows(): Generator<number> {
      for (const item of flat.topLevel()) if (item.name !== null) yield item.row
    }
    return elementsMarkdownPrefix(rows, flat.blockSource, minChars, opts, bounded)
  }
  return blocksToMarkdownPrefix(source.type === 'doc' ? (source.content ?? []) : [source], minChars, opts)
}

function elementsMarkdownPrefix<E>(
  elements: () => Iterable<E>,
  source: BlockSource<E>,
  minChars: number,
  opts: SerializeOptions,
  bounded: boolean,
): MarkdownPrefix {
  let limited = bounded
  for (let slack = PREFIX_SLACK_CHARS; ; slack *= 4) {
    let cutBlock: { markable: boolean; byWork?: boolean } | undefined
    const work: RenderWork | undefined = limited ? { left: MAX_RENDER_WORK } : undefined
    function* blocks(): Generator<DocNode> {
      for (const element of elements()) {
        const prefix = markedBlockPrefix(element, minChars + slack, work, 0, source)
        yield prefix.node
        if (prefix.cut) {
          // Nothing after a cut block can be shown: the writer stops within it.
          cutBlock = prefix
          return
        }
      }
    }
    const prefix = blocksToMarkdownPrefix(blocks(), minChars, opts)
    if (!cutBlock) return prefix
    const exact = exactBefore(prefix.text)
    // The writer stopped before the cut block (it was only read ahead): all of it is exact.
    if (exact === -1 && !prefix.complete && cutBlock.markable) return prefix
    if (exact >= minChars) return { text: prefix.text.slice(0, minChars), complete: false }
    if (cutBlock.byWork) {
      if (exact > 0) return { text: prefix.text.slice(0, exact), complete: false, byWork: true }
      // Nothing exact before the cut (work spent on elements without text): render without the bound,
      // which the character budget still holds (each element counts one).
      limited = false
    }
    // Too little was written before the cut: read further.
  }
}
