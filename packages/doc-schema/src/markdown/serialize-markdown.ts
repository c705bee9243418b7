import type { Root, RootContent } from 'mdast'
import { gfmToMarkdown } from 'mdast-util-gfm'
import { type Options, toMarkdown } from 'mdast-util-to-markdown'
import type { DocNode } from '../doc-json.ts'
import { blockToMdast, type SerializeOptions } from './blocks-to-mdast.ts'

// Every option spelled out: output must not change if a library default does.
const TO_MARKDOWN_OPTIONS: Options = {
  // Unpadded tables: fewer characters for agents, same table.
  extensions: [gfmToMarkdown({ tablePipeAlign: false })],
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
}

/** Markdown of a run of sibling blocks, serialised together so adjacent lists stay apart. */
export function blocksToMarkdown(blocks: DocNode[], opts: SerializeOptions = {}): string {
  const children: RootContent[] = blocks.flatMap((block) => blockToMdast(block, opts))
  if (children.length === 0) return ''
  const root: Root = { type: 'root', children }
  return toMarkdown(root, TO_MARKDOWN_OPTIONS).replace(/\n+$/, '')
}
