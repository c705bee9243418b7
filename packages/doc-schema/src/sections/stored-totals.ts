/**
 * Section totals stored beside the outline, so a read of a section nobody edited since the store step
 * never renders the section to name its total (`section-total.ts`). The store step writes each section's
 * exact total into its node of the stored outline, with the section's block count; the rev the node
 * already carries makes the pair the revision's key. Whoever decodes stored content adopts those totals
 * for its fragment (`adoptTotals`), and the outline memo takes a section's total from them when the
 * section's rev and block count match: an edited section has a new rev, so its stored total is never used.
 *
 * Where the totals are measured: the import worker measures every section of the new document as it
 * builds its outline (`derivedStream`, block by block as it builds the document, off the event loop);
 * on a live document, the sections whose total is not known (edited since the store step) are
 * measured in slices after a store (the server: at most every SEARCH_REFRESH_MS) and before each compaction takes the document's lock
 * (`outlineMeasureSteps`), and compaction stores the memo's totals (`liveOutlineWithTotals`): an edited
 * section is rendered whole once, then each edit re-measures only the blocks it touched.
 */
import type * as Y from 'yjs'
import { type FlatDocument, flatTopLevel } from '../yjs/flat-read.ts'
import { liveOutline, memoMeasureSteps, memoSectionTotal, memoTotalKnown } from './live-memo.ts'
import { headingTree, type OutlineNode, readOutlineOf } from './outline.ts'
import { headingTitle, locateSections, locateSectionsInSteps } from './section-index.ts'
import { sectionStats } from './section-rev.ts'
import {
  elementReadLength,
  type StoredSectionRev,
  sectionReadLength,
  sectionReadLengthOf,
  totalKey,
} from './section-total.ts'

/** An outline node as the store step writes it: with the section's exact total and block count when measured. */
export type StoredOutlineNode = OutlineNode & {
  /** The exact length of the section read whole (`sectionReadLength`) at this node's `rev`. */
  total?: number
  /** How many blocks the section had at this `rev` (with it, the key of `total`). */
  blocks?: number
  children: StoredOutlineNode[]
}

/**
 * `readOutline(fragment)` with every section's total measured now: for a fragment decoded to be stored
 * (an import on the worker, a create), whose content nobody reads yet. Renders the whole document once.
 */
export function readOutlineWithTotals(
  fragment: Y.XmlFragment,
  /** Called after each section is measured, with how many are: the import worker collects its garbage. */
  measured?: (sections: number) => void,
  /** Called after each part of a long list is rendered to measure it (elementReadLength), for the same. */
  rendered?: () => void,
): StoredOutlineNode[] {
  const lengthOf = (element: Y.XmlElement) => elementReadLength(element, rendered)
  const tree = headingTree<StoredOutlineNode>()
  let count = 0
  for (const section of locateSections(fragment)) {
    if (count > 0) measured?.(count)
    count++
    const { rev, size } = sectionStats(section.heading, section.blocks)
    const node: StoredOutlineNode = {
      sectionId: section.sectionId,
      level: section.level,
      title: headingTitle(section.heading),
      rev,
      size,
      total: sectionReadLength(section.heading, section.blocks, lengthOf),
      blocks: section.blocks.length,
      children: [],
    }
    tree.add(node)
  }
  return tree.roots
}

/**
 * `readOutlineWithTotals` of a state read flat (yjs/flat-read.ts), no Y.Doc: a section's total is taken from
 * `adopted` (`storedTotals` of the outline stored with the content it was read from) when its rev and block
 * count match, else rendered now (`sectionReadLengthOf`).
 */
export function flatOutlineWithTotals(
  flat: FlatDocument,
  adopted: ReadonlyMap<string, number>,
): StoredOutlineNode[] {
  return readOutlineOf(
    flat.tree,
    flatTopLevel(flat),
    (heading, blocks, rev) =>
      adopted.get(totalKey(rev, blocks.length)) ?? sectionReadLengthOf(flat, heading, blocks),
  )
}

/**
 * The live fragment's outline (`liveOutline`, through its shared memo) with the totals the memo keeps:
 * a section whose elements are not all measured has none (nothing is rendered here). Call it outside a
 * transaction; the memo's outline array is copied, not changed.
 */
export function liveOutlineWithTotals(fragment: Y.XmlFragment): StoredOutlineNode[] {
  const outline = liveOutline(fragment)
  // The outline lists the located sections in document order (a tree walked depth first).
  const sections = locateSections(fragment)
  let next = 0
  const copy = (node: OutlineNode): StoredOutlineNode => {
    const section = sections[next++]
    const total = section && memoSectionTotal(fragment, section, true)
    const children = node.children.map(copy)
    return total === undefined || !section
      ? { ...node, children }
      : { ...node, total, blocks: section.blocks.length, children }
  }
  return outline.map(copy)
}

/**
 * Measures, one heading or block per step, the sections of the live fragment whose total its memo does
 * not know (kept by rev, adopted from the stored outline, or summed from its elements' lengths): after a
 * load, the sections edited since the store step; later, the blocks an edit touched. A section whose total
 * is known is not rendered, so a document loaded and read costs nothing here, and an edited section is not
 * hashed for its new rev here either (called after every store, that would hash a section being typed into
 * over and over): its unmeasured elements are measured, the rev is left to whoever needs it. Sections
 * are located at the start, in steps; a caller pauses between steps as it likes (an element deleted
 * meanwhile is skipped). A step yields true when it measured a heading or block, false when it only found
 * a section's total known or located a stretch of blocks.
 */
export function* outlineMeasureSteps(
  fragment: Y.XmlFragment,
  /**
   * Only elements of at most this many Yjs items are measured (`elementItemsOver`): the event loop's
   * measuring after each store leaves a dear block (a paragraph of 10,000 marks renders in ~150 ms, in
   * one step) to whoever needs its total; a section read renders it then.
   */
  maxItems?: number,
): Generator<boolean, void, undefined> {
  // Located in steps too (a pause every LOCATE_STEP_CHILDREN blocks, measuring nothing).
  const located = locateSectionsInSteps(fragment)
  let step = located.next()
  for (; !step.done; step = located.next()) yield false
  for (const section of step.value) {
    if (memoTotalKnown(fragment, section)) {
      // Telling that a section's total is known describes it, which hashes it when the memo has no rev
      // for it yet (after a load whose log held updates: every section, ~37 ms in one piece for a 1.9 MiB
      // state at load 1, red-team-history's profile): a pause point of its own, measuring nothing.
      yield false
      continue
    }
    for (const _ of memoMeasureSteps(fragment, section, maxItems)) yield true
  }
}

/** The totals a stored outline carries, by revision key (`totalKey`, section-total.ts). A node without one adds nothing. */
export function storedTotals(roots: readonly StoredOutlineNode[]): Map<string, number> {
  const totals = new Map<string, number>()
  const stack = [...roots]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const { rev, total, blocks } = node
    if (typeof rev === 'string' && Number.isSafeInteger(total) && Number.isSafeInteger(blocks))
      totals.set(totalKey(rev, blocks!), total!)
    if (Array.isArray(node.children)) stack.push(...node.children)
  }
  return totals
}

/**
 * The revs a stored outline carries, by section id (`adoptRevs`): the first node of an id in document
 * order, as `locateSection` finds the first heading of an id. Only for an outline that describes the
 * fragment's content exactly (stored with the snapshot, no update logged after it); a node without a
 * string rev or a numeric size (an outline stored before sizes were counted) adds nothing.
 */
export function storedRevs(roots: readonly StoredOutlineNode[]): Map<string, StoredSectionRev> {
  const revs = new Map<string, StoredSectionRev>()
  const visit = (nodes: readonly StoredOutlineNode[]) => {
    for (const node of nodes) {
      const { sectionId, rev, size, blocks } = node
      if (typeof sectionId === 'string' && sectionId !== '' && !revs.has(sectionId)) {
        if (typeof rev === 'string' && Number.isSafeInteger(size))
          revs.set(sectionId, {
            rev,
            size: size as number,
            blocks: Number.isSafeInteger(blocks) ? blocks : undefined,
          })
      }
      if (Array.isArray(node.children)) visit(node.children)
    }
  }
  visit(roots)
  return revs
}
