import * as Y from 'yjs'
import { isHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { eachTopLevelChange } from '../yjs/top-level-changes.ts'
import { headingTree, type OutlineNode } from './outline.ts'
import { headingLevel, headingTitle, type LocatedSection, locateSections } from './section-index.ts'
import { sectionStats } from './section-rev.ts'
import {
  adoptedRev,
  adoptedTotal,
  elementItemsOver,
  elementReadLength,
  keepTotal,
  keptTotal,
  sectionReadLength,
} from './section-total.ts'

/**
 * An outline kept current for one live fragment: `outline()` equals `readOutline(fragment)` (revs and
 * sizes included) but only re-hashes and re-counts the sections whose heading or blocks changed since the
 * last call. The caller holds the memo (one per live document) and destroys it with the document.
 *
 * How it stays current: a deep observer marks the top-level block under every change dirty; a section is
 * reused only when its heading and its exact list of block elements (by identity) are unchanged and none
 * of them is dirty. Inserting, removing or moving blocks changes the list, so it needs no event of its own.
 * Call it outside a transaction (observers run when a transaction ends), as readers do.
 *
 * It also keeps each section's total (the exact length of the section read whole, `section-total.ts`), only
 * when a read or the store step asks for it: per revision with the section's entry (found first among
 * totals kept by rev and those adopted from the stored outline), and per element (the Markdown length of a
 * heading or block, dropped when a change lands under it), so the total of an edited section re-renders
 * only the blocks the edit touched.
 */
export type OutlineMemo = {
  /** The outline; the same array while the fragment is unchanged, so callers must not modify it. */
  outline(): OutlineNode[]
  /** The rev of one located section of this fragment, equal to `sectionRev`; kept while it is unchanged. */
  sectionRev(section: LocatedSection): string
  /**
   * The total of one located section of this fragment, kept with its revision (see above). With
   * `keptOnly`, undefined rather than rendering anything: when neither its revision's total nor every one
   * of its elements' lengths is kept.
   */
  sectionTotal(section: LocatedSection, keptOnly?: boolean): number | undefined
  /**
   * Whether the section's total is known without rendering: its entry is current and holds a total (or
   * its elements' lengths), or, never described yet, its rev (hashed once) has a total kept or adopted. A
   * section changed since it was described is not hashed again here: it is not known.
   */
  totalKnown(section: LocatedSection): boolean
  /**
   * Measures the section's elements not measured yet, one per step (a caller may pause between steps);
   * with `maxItems`, only those of at most that many Yjs items (`elementItemsOver`): one step renders one
   * element whole, so a dearer one would hold the caller's thread that long.
   */
  measureSteps(section: LocatedSection, maxItems?: number): Generator<void, void, undefined>
  /**
   * `locateSection(fragment, sectionId)`, the same object again while the fragment is unchanged, so reads
   * of an unchanged document neither walk to the section's end again nor compare its blocks with the memo's.
   * After a change it starts at the section's heading, found through the memo's index of top-level
   * positions (kept until the fragment's own list of children or a heading's attributes change), so it
   * walks the section's blocks only, not every block before them.
   */
  locate(sectionId: string): LocatedSection | undefined
  /**
   * A read of this section kept under `key` (the caller's: what else the read depends on) with the
   * section's current revision, or undefined: a read kept with an earlier revision is never answered.
   * Never hashes the section: a section changed since its read was kept has no read (a dense section's
   * hash held the event loop 100-230 ms after each edit, load ~15, before its read went to the worker).
   */
  keptRead<T>(section: LocatedSection, key: string): T | undefined
  /**
   * Keeps a read of this section as it is now under `key`, `chars` long (MAX_KEPT_READ_CHARS): with the
   * section's revision when it is described and unchanged since, else (a read made on the documents'
   * worker after an edit) with the fragment as it is now, so keeping it hashes nothing here.
   */
  keepRead(section: LocatedSection, key: string, read: unknown, chars: number): void
  destroy(): void
}

type Entry = { blocks: Y.XmlElement[]; rev: string; size: number; title: string; total?: number }

/**
 * Where the top-level elements sit: each one's index among the fragment's children (as `locateSections`
 * counts them), the elements in that order, and the first heading of each id, from one walk of Yjs's item
 * list. `stale`: the first index a change since may have moved (Infinity: none); everything before it is
 * still true, so `refreshed` walks again only from there (`positionsOf` from the start).
 */
type Positions = {
  index: Map<Y.XmlElement, number>
  order: Y.XmlElement[]
  headings: Map<string, Y.XmlElement>
  /** The id each heading in `headings` holds it under (a deleted heading's attributes read as none). */
  headingIds: Map<Y.XmlElement, string>
  stale: number
}

function positionsOf(fragment: Y.XmlFragment): Positions {
  const positions: Positions = {
    index: new Map(),
    order: [],
    headings: new Map(),
    headingIds: new Map(),
    stale: 0,
  }
  return refreshed(fragment, positions)
}

/**
 * The positions made true again after changes from index `stale` on: the elements before it are kept
 * (their index, their place in `order`, a heading there keeps its id's section), those from it on dropped
 * and found again by a walk from the last element kept. An edit at the end of a long document (an agent's
 * edit of its last section, a paragraph typed at the end) walks a few items, not every top-level block
 * (the walk from the start was ~5 ms of each edit_blocks of a 1 MiB document at load, the bench's edit
 * propagation row, before the edit could apply).
 */
function refreshed(fragment: Y.XmlFragment, positions: Positions): Positions {
  const { index, order, headings, headingIds } = positions
  // The last element before `stale` (order is by index): the walk starts right after it.
  let low = 0
  let high = order.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (index.get(order[mid]!)! < positions.stale) low = mid + 1
    else high = mid
  }
  for (const dropped of order.splice(low)) {
    index.delete(dropped)
    const id = headingIds.get(dropped)
    if (id === undefined) continue
    headingIds.delete(dropped)
    headings.delete(id)
  }
  const kept = order.at(-1)
  let at = kept ? index.get(kept)! + kept._item!.length : 0
  for (let item = kept ? kept._item!.right : fragment._start; item; item = item.right) {
    if (item.deleted || !item.countable) continue
    const child = item.content instanceof Y.ContentType ? item.content.type : undefined
    if (child instanceof Y.XmlElement) {
      index.set(child, at)
      order.push(child)
      if (child.nodeName === 'heading') {
        const id = child.getAttribute(HEADING_ID_ATTR)
        if (isHeadingId(id) && !headings.has(id)) {
          headings.set(id, child)
          headingIds.set(child, id)
        }
      }
    }
    at += item.length
  }
  positions.stale = Number.POSITIVE_INFINITY
  return positions
}

/**
 * The first index among the fragment's children that `transaction` may have moved (it changed the list of
 * children), from the items it inserted into or deleted from the fragment, not by walking the list: an
 * element known to the positions before it, nearest to the left of each such item, bounds it
 * (`eachTopLevelChange`: not Yjs's delta, which walks every top-level item).
 */
function firstMoved(transaction: Y.Transaction, fragment: Y.XmlFragment, positions: Positions): number {
  let first = positions.stale
  /** The index of the nearest element left of `item` that the positions knew (0 when none). */
  const bound = (item: Y.Item): number => {
    for (let left = item.left; left; left = left.left) {
      const element = left.content instanceof Y.ContentType ? left.content.type : undefined
      const known = element instanceof Y.XmlElement ? positions.index.get(element) : undefined
      if (known !== undefined) return known
    }
    return 0
  }
  /** Made by this transaction: its left neighbour among them is bounded the same way, and visited too. */
  const isNew = (item: Y.Item) => item.id.clock >= (transaction.beforeState.get(item.id.client) ?? 0)
  eachTopLevelChange(transaction, fragment, (item) => {
    const element = item.content instanceof Y.ContentType ? item.content.type : undefined
    const known = element instanceof Y.XmlElement ? positions.index.get(element) : undefined
    if (known !== undefined) first = Math.min(first, known)
    // Only the first of a run of new items walks left (a paste of n blocks walked n times over the run).
    else if (!(item.left && isNew(item.left))) first = Math.min(first, bound(item))
  })
  return first
}

export function createOutlineMemo(fragment: Y.XmlFragment): OutlineMemo {
  let entries = new WeakMap<Y.XmlElement, Entry>()
  /** Markdown length of each top-level element measured, until a change lands under it. */
  let lengths = new WeakMap<Y.XmlElement, number>()
  const dirty = new Set<unknown>()
  /** The last outline, and whether anything changed since: an unchanged document answers it at once. */
  let last: OutlineNode[] | undefined
  let changed = true
  /** Counts the transactions that changed the fragment: what was located or described at a count stays true. */
  let version = 0
  /** Sections located at `version` (a few: any change drops them). */
  const locatedAt = new Map<string, LocatedSection | undefined>()
  let locatedVersion = 0
  /** The entry each located section was described with, and at which `version`. */
  let describedAt = new WeakMap<LocatedSection, { version: number; entry: Entry }>()
  /**
   * Where the top-level elements sit; made true again from the first index a change to the list of children
   * moved (`stale`), dropped when a top-level heading itself changes.
   */
  let positions: Positions | undefined
  /** Reads kept per section revision (`keptRead`), oldest first, and the characters they hold. */
  const reads = new Map<string, { entry: Entry | undefined; version: number; read: unknown; chars: number }>()
  let readChars = 0
  const observer = (events: Array<Y.YEvent<Y.AbstractType<unknown>>>) => {
    changed = true
    version++
    for (const event of events) {
      let target: Y.AbstractType<unknown> | null = event.target
      if (target === fragment) {
        if (positions) positions.stale = firstMoved(event.transaction, fragment, positions)
        continue
      }
      // An attribute of a top-level heading (its id) or its own children: typing into a heading's text is
      // an event on that text, not on the heading, and keeps the positions.
      if (target.parent === fragment && (target as Y.XmlElement).nodeName === 'heading') positions = undefined
      while (target && target.parent !== fragment) target = target.parent as Y.AbstractType<unknown> | null
      if (target) {
        dirty.add(target)
        lengths.delete(target as Y.XmlElement)
      }
      // A change under something no longer in the fragment needs nothing: its section's list changed.
    }
  }
  fragment.observeDeep(observer)

  /** The section's entry when it is unchanged since it was described; undefined (never hashed) otherwise. */
  const currentEntry = (section: LocatedSection): Entry | undefined => {
    const described = describedAt.get(section)
    if (described && described.version === version) return described.entry
    const entry = entries.get(section.heading)
    if (!entry || dirty.has(section.heading) || !sameBlocks(entry.blocks, section.blocks, dirty))
      return undefined
    return entry
  }

  const describe = (section: LocatedSection): Entry => {
    const described = describedAt.get(section)
    if (described && described.version === version) return described.entry
    let entry = entries.get(section.heading)
    if (!entry || dirty.has(section.heading) || !sameBlocks(entry.blocks, section.blocks, dirty)) {
      // Never described: the stored outline's rev when the fragment is still what it describes (adoptRevs),
      // so a cold read does not hash the section; else (and after any change to it) hashed here.
      const adopted = entry ? undefined : adoptedRev(fragment, section.sectionId, section.blocks.length)
      const { rev, size } = adopted ?? sectionStats(section.heading, section.blocks)
      entry = { blocks: section.blocks, rev, size, title: headingTitle(section.heading) }
      entries.set(section.heading, entry)
    }
    describedAt.set(section, { version, entry })
    return entry
  }

  const lengthOf = (element: Y.XmlElement): number => {
    let length = lengths.get(element)
    if (length === undefined) {
      length = elementReadLength(element)
      lengths.set(element, length)
    }
    return length
  }

  return {
    outline() {
      if (!changed && last) return last
      const located = locateSections(fragment)
      const described = located.map(describe)
      dirty.clear()
      const tree = headingTree<OutlineNode>()
      located.forEach((section, i) => {
        const { rev, size, title } = described[i]!
        const node: OutlineNode = {
          sectionId: section.sectionId,
          level: section.level,
          title,
          rev,
          size,
          children: [],
        }
        tree.add(node)
      })
      last = tree.roots
      changed = false
      return tree.roots
    },
    // `dirty` is left as it is: only `outline()`, which visits every section, may clear it.
    sectionRev: (section) => describe(section).rev,
    sectionTotal(section, keptOnly = false) {
      const entry = describe(section)
      entry.total ??=
        keptTotal(entry.rev, section.blocks.length) ??
        adoptedTotal(fragment, entry.rev, section.blocks.length)
      if (entry.total === undefined) {
        if (keptOnly && !elementsOf(section).every((element) => lengths.has(element))) return undefined
        entry.total = sectionReadLength(section.heading, section.blocks, lengthOf)
      }
      keepTotal(entry.rev, section.blocks.length, entry.total)
      return entry.total
    },
    totalKnown(section) {
      const entry = entries.get(section.heading)
      if (entry && (dirty.has(section.heading) || !sameBlocks(entry.blocks, section.blocks, dirty)))
        return false
      return this.sectionTotal(section, true) !== undefined
    },
    *measureSteps(section, maxItems) {
      for (const element of elementsOf(section)) {
        // An element deleted since the section was located needs no length.
        if (lengths.has(element) || element._item?.deleted) continue
        if (maxItems !== undefined && elementItemsOver(element, maxItems)) continue
        lengthOf(element)
        yield
      }
    },
    locate(sectionId) {
      if (locatedVersion !== version || locatedAt.size >= MAX_LOCATED) {
        locatedAt.clear()
        locatedVersion = version
      }
      if (!locatedAt.has(sectionId)) {
        if (positions && positions.stale !== Number.POSITIVE_INFINITY)
          positions = refreshed(fragment, positions)
        let section = positions && sectionAt(positions, sectionId)
        if (section === null || positions === undefined) {
          positions = positionsOf(fragment)
          section = sectionAt(positions, sectionId)
        }
        locatedAt.set(sectionId, section ?? undefined)
      }
      return locatedAt.get(sectionId)
    },
    keptRead<T>(section: LocatedSection, key: string): T | undefined {
      const id = `${section.sectionId}\n${key}`
      const kept = reads.get(id)
      if (!kept) return undefined
      const current =
        kept.version === version || (kept.entry !== undefined && kept.entry === currentEntry(section))
      if (!current) {
        reads.delete(id)
        readChars -= kept.chars
        return undefined
      }
      // Read again: the newest, so the last to go.
      reads.delete(id)
      reads.set(id, kept)
      return kept.read as T
    },
    keepRead(section, key, read, chars) {
      if (chars > MAX_KEPT_READ_CHARS) return
      const id = `${section.sectionId}\n${key}`
      const before = reads.get(id)
      if (before) {
        reads.delete(id)
        readChars -= before.chars
      }
      for (const [oldest, kept] of reads) {
        if (readChars + chars <= MAX_KEPT_READ_CHARS && reads.size < MAX_KEPT_READS) break
        reads.delete(oldest)
        readChars -= kept.chars
      }
      reads.set(id, { entry: currentEntry(section), version, read, chars })
      readChars += chars
    },
    destroy() {
      locatedAt.clear()
      positions = undefined
      reads.clear()
      readChars = 0
      describedAt = new WeakMap()
      fragment.unobserveDeep(observer)
      entries = new WeakMap()
      lengths = new WeakMap()
      last = undefined
      dirty.clear()
    },
  }
}

/** Sections a memo keeps located at once (reads of an unchanged document name a few). */
const MAX_LOCATED = 16

/**
 * Characters of section reads a memo keeps (`keepRead`: a read's text, kept with its section's revision
 * so a read of an unchanged section is not rendered again), the oldest read dropped first; a longer read
 * is not kept. Five reads at the MCP ceiling (MAX_READ_CHARS, 100,000), or many short ones.
 */
export const MAX_KEPT_READ_CHARS = 500_000

/** Reads a memo keeps at most, whatever their length (an agent re-reads a few sections, not hundreds). */
export const MAX_KEPT_READS = 64

/**
 * The section whose heading is the first with this id, as `locateSection` finds it: from its heading, found
 * in the positions, to the next heading, one step per block of the section. Null when the positions
 * disagree with what the walk finds (a heading gone or renamed, a block not indexed), which the observer
 * rules out; the caller then indexes the fragment again rather than answer from stale positions.
 */
function sectionAt(positions: Positions, sectionId: string): LocatedSection | undefined | null {
  const heading = isHeadingId(sectionId) ? positions.headings.get(sectionId) : undefined
  if (!heading) return undefined
  const headingIndex = positions.index.get(heading)
  if (!heading._item || heading._item.deleted || headingIndex === undefined) return null
  if (heading.getAttribute(HEADING_ID_ATTR) !== sectionId) return null
  const section: LocatedSection = {
    sectionId,
    level: headingLevel(heading),
    heading,
    headingIndex,
    blocks: [],
    blockIndexes: [],
  }
  for (let item = heading._item.right; item; item = item.right) {
    if (item.deleted || !item.countable) continue
    const child = item.content instanceof Y.ContentType ? item.content.type : undefined
    if (!(child instanceof Y.XmlElement)) continue
    if (child.nodeName === 'heading') break
    const index = positions.index.get(child)
    if (index === undefined) return null
    section.blocks.push(child)
    section.blockIndexes.push(index)
  }
  return section
}

const elementsOf = (section: LocatedSection) => [section.heading, ...section.blocks]

function sameBlocks(
  cached: readonly Y.XmlElement[],
  current: readonly Y.XmlElement[],
  dirty: ReadonlySet<unknown>,
): boolean {
  if (cached.length !== current.length) return false
  for (let i = 0; i < current.length; i++) {
    if (cached[i] !== current[i] || dirty.has(current[i])) return false
  }
  return true
}
