import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { topLevelElements } from '../yjs/read-y.ts'
import type { SerializeOptions } from './blocks-to-mdast.ts'
import { yBlockForRender } from './render-depth.ts'
import { blocksToMarkdown, blocksToMarkdownPrefix, type MarkdownPrefix } from './serialize-markdown.ts'

/** The whole document as Markdown, deterministic for the same content. Accepts a fragment or doc JSON. */
export function documentToMarkdown(source: Y.XmlFragment | DocNode, opts: SerializeOptions = {}): string {
  if (source instanceof Y.XmlFragment)
    return blocksToMarkdown(topLevelElements(source).map(yBlockForRender), opts)
  return blocksToMarkdown(source.type === 'doc' ? (source.content ?? []) : [source], opts)
}

/**
 * The start of `documentToMarkdown(source, opts)`, the same characters, at least `minChars` long unless it
 * is the whole (`complete`). Top-level blocks are read from the fragment and written one at a time until
 * `minChars` is reached, so a bounded read of a large document costs what it shows, not the document.
 */
export function documentMarkdownPrefix(
  source: Y.XmlFragment | DocNode,
  minChars: number,
  opts: SerializeOptions = {},
): MarkdownPrefix {
  if (source instanceof Y.XmlFragment) return blocksToMarkdownPrefix(lazyBlocks(source), minChars, opts)
  return blocksToMarkdownPrefix(source.type === 'doc' ? (source.content ?? []) : [source], minChars, opts)
}

function* lazyBlocks(fragment: Y.XmlFragment): Generator<DocNode> {
  for (const element of topLevelElements(fragment)) yield yBlockForRender(element)
}
