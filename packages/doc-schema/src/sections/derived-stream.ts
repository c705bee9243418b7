/**
 * What a store derives from a new document (its outline with every section's total, `readOutlineWithTotals`,
 * and its search text, `readPlainText`), measured a top-level block at a time as the document is built, so a
 * builder may let go of each block once it is measured (the import worker: import-state.ts). A long list may
 * be measured a part of its items at a time (`listOpen`, `listItems`, `listClose`). Fed the blocks of a
 * document in order, `finish` gives what the two whole-document reads give.
 */
import type * as Y from 'yjs'
import { isHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { blockPlainText } from '../yjs/plain-text.ts'
import { headingTree } from './outline.ts'
import { headingLevel, headingTitle } from './section-index.ts'
import { type SectionStats, sectionStatsStream } from './section-rev.ts'
import { blockReadCost, elementReadLength, listPartReadLength } from './section-total.ts'
import type { StoredOutlineNode } from './stored-totals.ts'

export type DerivedStream = {
  /** A whole top-level block (a heading starts a section). */
  block(element: Y.XmlElement): void
  /**
   * A long top-level list (more than LIST_ITEMS_PER_RENDER items, all items, within the render ceiling:
   * what `elementReadLength` measures in parts) opened: its name and its attributes as the element will hold them.
   */
  listOpen(nodeName: string, attrs: Record<string, unknown>): void
  /** Its next items, `from` the index of the first: LIST_ITEMS_PER_RENDER of them but for the last part. */
  listItems(items: readonly Y.XmlElement[], from: number): void
  listClose(): void
  finish(): { text: string; outline: StoredOutlineNode[] }
}

export function derivedStream(
  maxTextChars: number,
  /** Called after each section is measured, with how many are (the import worker collects its garbage). */
  measured?: (sections: number) => void,
  /** Called after each part of a long list is rendered to measure it. */
  rendered?: () => void,
): DerivedStream {
  const tree = headingTree<StoredOutlineNode>()
  let sections = 0
  let section:
    | { node: StoredOutlineNode; stats: ReturnType<typeof sectionStatsStream>; blocks: number }
    | undefined
  const closeSection = () => {
    if (!section) return
    const { rev, size }: SectionStats = section.stats.done()
    section.node.rev = rev
    section.node.size = size
    section.node.blocks = section.blocks
    section = undefined
  }
  // readPlainText: each block's non-empty text a line, until maxTextChars are gathered.
  const lines: string[] = []
  let chars = 0
  const addText = (text: string) => {
    if (chars >= maxTextChars || text === '') return
    lines.push(text)
    chars += text.length + 1
  }
  let list: { nodeName: string; attrs: Record<string, unknown>; length: number; texts: string[] } | undefined

  return {
    block(element) {
      if (element.nodeName === 'heading') {
        closeSection()
        if (sections > 0) measured?.(sections)
        sections++
        const id = element.getAttribute(HEADING_ID_ATTR)
        const node: StoredOutlineNode = {
          sectionId: isHeadingId(id) ? id : '',
          level: headingLevel(element),
          title: headingTitle(element),
          rev: '',
          size: 0,
          total: elementReadLength(element, rendered),
          blocks: 0,
          children: [],
        }
        tree.add(node)
        section = { node, stats: sectionStatsStream(element), blocks: 0 }
      } else if (section) {
        section.stats.block(element)
        section.blocks++
        section.node.total! += blockReadCost(section.blocks, elementReadLength(element, rendered))
      }
      if (chars < maxTextChars) addText(blockPlainText(element))
    },
    listOpen(nodeName, attrs) {
      list = { nodeName, attrs, length: 0, texts: [] }
      section?.stats.listOpen(nodeName, attrs)
    },
    listItems(items, from) {
      if (!list) throw new Error('derivedStream: listItems before listOpen')
      if (section) {
        for (const item of items) section.stats.listItem(item)
        list.length += listPartReadLength(list.nodeName, list.attrs, items, from)
        rendered?.()
      }
      // blockPlainText of the list: its items' texts, one line each (a block's text is taken whole).
      if (chars < maxTextChars)
        for (const item of items) {
          const text = blockPlainText(item)
          if (text !== '') list.texts.push(text)
        }
    },
    listClose() {
      if (!list) throw new Error('derivedStream: listClose before listOpen')
      if (section) {
        section.stats.listClose()
        section.blocks++
        section.node.total! += blockReadCost(section.blocks, list.length)
      }
      if (chars < maxTextChars) addText(list.texts.join('\n'))
      list = undefined
    },
    finish() {
      closeSection()
      return { text: lines.join('\n'), outline: tree.roots }
    },
  }
}
