import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { fragmentToJSON } from '../yjs/read-y.ts'
import type { SerializeOptions } from './blocks-to-mdast.ts'
import { blocksToMarkdown } from './serialize-markdown.ts'

/** The whole document as Markdown, deterministic for the same content. Accepts a fragment or doc JSON. */
export function documentToMarkdown(source: Y.XmlFragment | DocNode, opts: SerializeOptions = {}): string {
  const doc = source instanceof Y.XmlFragment ? fragmentToJSON(source) : source
  const blocks = doc.type === 'doc' ? (doc.content ?? []) : [doc]
  return blocksToMarkdown(blocks, opts)
}
