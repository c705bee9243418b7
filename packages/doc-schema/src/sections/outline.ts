import type * as Y from 'yjs'
import { isHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { blockPlainTextOf } from '../yjs/plain-text.ts'
import { ELEMENT, type TreeSource } from '../yjs/tree-source.ts'
import { headingTitle, levelOf, locateSections, titleOf } from './section-index.ts'
import { sectionStats, sectionStatsOf } from './section-rev.ts'
import type { StoredOutlineNode } from './stored-totals.ts'

export type OutlineNode = {
  sectionId: string
  level: number
  title: string
  rev: string
  /**
   * About how many characters a read of this section alone shows (its heading and blocks up to the next
   * heading; `sectionStats`). An outline stored before sizes were counted lacks it.
   */
  size: number
  children: OutlineNode[]
}

/**
 * The heading tree in document order. A heading nests under the nearest earlier heading that is
 * shallower, so a skipped level (## then ####) still nests under the ##.
 */
export function readOutline(fragment: Y.XmlFragment): OutlineNode[] {
  const tree = headingTree<OutlineNode>()
  for (const section of locateSections(fragment)) {
    const { sectionId, level } = section
    const { rev, size } = sectionStats(section.heading, section.blocks)
    const node: OutlineNode = {
      sectionId,
      level,
      title: headingTitle(section.heading),
      rev,
      size,
      children: [],
    }
    tree.add(node)
  }
  return tree.roots
}

/**
 * `readOutline` of a document read through `source` (a stored state read flat, yjs/flat-read.ts), its
 * top-level content in order: the same sections, titles, revs and sizes, with no Y.Doc built.
 */
export function readOutlineOf<N>(
  source: TreeSource<N>,
  topLevel: Iterable<N>,
  /**
   * A section's total (section-total.ts) for its heading, blocks and rev, written into its node with
   * the block count (stored-totals.ts); undefined: none.
   */
  totalOf?: (heading: N, blocks: readonly N[], rev: string) => number | undefined,
): StoredOutlineNode[] {
  const tree = headingTree<StoredOutlineNode>()
  let heading: N | undefined
  let blocks: N[] = []
  const add = () => {
    if (heading === undefined) return
    const id = source.attribute(heading, HEADING_ID_ATTR)
    const { rev, size } = sectionStatsOf(source, heading, blocks)
    const node: StoredOutlineNode = {
      sectionId: isHeadingId(id) ? id : '',
      level: levelOf(source.attribute(heading, 'level')),
      title: titleOf(blockPlainTextOf(source, heading)),
      rev,
      size,
      children: [],
    }
    const total = totalOf?.(heading, blocks, rev)
    if (total !== undefined) {
      node.total = total
      node.blocks = blocks.length
    }
    tree.add(node)
  }
  for (const child of topLevel) {
    if (source.kind(child) !== ELEMENT) continue
    if (source.name(child) !== 'heading') {
      // Blocks before the first heading belong to no section (locateSections).
      if (heading !== undefined) blocks.push(child)
      continue
    }
    add()
    heading = child
    blocks = []
  }
  add()
  return tree.roots
}

/**
 * Builds a heading tree from nodes in document order: `add` puts each under the nearest earlier node that
 * is shallower, so a skipped level (## then ####) still nests under the ##. `roots` is the tree.
 */
export function headingTree<T extends { level: number; children: T[] }>(): {
  roots: T[]
  add(node: T): void
} {
  const roots: T[] = []
  const stack: T[] = []
  return {
    roots,
    add(node) {
      while (stack.length > 0 && stack.at(-1)!.level >= node.level) stack.pop()
      const parent = stack.at(-1)
      if (parent) parent.children.push(node)
      else roots.push(node)
      stack.push(node)
    },
  }
}

/**
 * An outline read back from storage, made safe to print: a section id that is not well-formed (stored by a
 * version before ids were checked) becomes '' (no id), as `locateSections` reports it. Iterative, in place.
 */
export function withWellFormedIds(roots: OutlineNode[]): OutlineNode[] {
  const stack = [...roots]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (!isHeadingId(node.sectionId)) node.sectionId = ''
    if (Array.isArray(node.children)) stack.push(...node.children)
  }
  return roots
}
