import type * as Y from 'yjs'
import type { OutlineNode } from './outline.ts'
import { headingTitle, type LocatedSection, locateSection, locateSections } from './section-index.ts'
import { sectionStats } from './section-rev.ts'
import {
  adoptedTotal,
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
  /** Measures the section's elements not measured yet, one per step (a caller may pause between steps). */
  measureSteps(section: LocatedSection): Generator<void, void, undefined>
  /**
   * `locateSection(fragment, sectionId)`, the same object again while the fragment is unchanged, so reads
   * of an unchanged document neither walk to the section's end again nor compare its blocks with the memo's.
   */
  locate(sectionId: string): LocatedSection | undefined
  destroy(): void
}

type Entry = { blocks: Y.XmlElement[]; rev: string; size: number; title: string; total?: number }

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
  const observer = (events: Array<Y.YEvent<Y.AbstractType<unknown>>>) => {
    changed = true
    version++
    for (const event of events) {
      let target: Y.AbstractType<unknown> | null = event.target
      if (target === fragment) continue
      while (target && target.parent !== fragment) target = target.parent as Y.AbstractType<unknown> | null
      if (target) {
        dirty.add(target)
        lengths.delete(target as Y.XmlElement)
      }
      // A change under something no longer in the fragment needs nothing: its section's list changed.
    }
  }
  fragment.observeDeep(observer)

  const describe = (section: LocatedSection): Entry => {
    const described = describedAt.get(section)
    if (described && described.version === version) return described.entry
    let entry = entries.get(section.heading)
    if (!entry || dirty.has(section.heading) || !sameBlocks(entry.blocks, section.blocks, dirty)) {
      const { rev, size } = sectionStats(section.heading, section.blocks)
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
      const roots: OutlineNode[] = []
      const stack: OutlineNode[] = []
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
        while (stack.length > 0 && stack.at(-1)!.level >= node.level) stack.pop()
        const parent = stack.at(-1)
        if (parent) parent.children.push(node)
        else roots.push(node)
        stack.push(node)
      })
      last = roots
      changed = false
      return roots
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
    *measureSteps(section) {
      for (const element of elementsOf(section)) {
        // An element deleted since the section was located needs no length.
        if (lengths.has(element) || element._item?.deleted) continue
        lengthOf(element)
        yield
      }
    },
    locate(sectionId) {
      if (locatedVersion !== version || locatedAt.size >= MAX_LOCATED) {
        locatedAt.clear()
        locatedVersion = version
      }
      if (!locatedAt.has(sectionId)) locatedAt.set(sectionId, locateSection(fragment, sectionId))
      return locatedAt.get(sectionId)
    },
    destroy() {
      locatedAt.clear()
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

const shared = new WeakMap<Y.XmlFragment, OutlineMemo>()

/**
 * The outline of a long-lived fragment (a document Hocuspocus holds) through one memo per fragment,
 * shared by every caller: the store step and the MCP readers keep each other's work. The memo goes with
 * the fragment when it is dropped (weak keys). For a throwaway fragment use `readOutline`.
 */
export function liveOutline(fragment: Y.XmlFragment): OutlineNode[] {
  return sharedMemo(fragment).outline()
}

/**
 * The rev of one section through the same shared memo: a section read of an unchanged section does not
 * hash it again (the store step's outline keeps it current). Call it outside a transaction.
 */
export function memoSectionRev(fragment: Y.XmlFragment, section: LocatedSection): string {
  return sharedMemo(fragment).sectionRev(section)
}

/**
 * The total of one section (the exact length of the section read whole) through the same shared memo:
 * measured once per revision, an edited section re-rendering only its changed blocks. Outside a transaction.
 */
export function memoSectionTotal(fragment: Y.XmlFragment, section: LocatedSection): number
export function memoSectionTotal(
  fragment: Y.XmlFragment,
  section: LocatedSection,
  keptOnly: boolean,
): number | undefined
export function memoSectionTotal(
  fragment: Y.XmlFragment,
  section: LocatedSection,
  keptOnly = false,
): number | undefined {
  return sharedMemo(fragment).sectionTotal(section, keptOnly)
}

/** The section with this id through the shared memo (`OutlineMemo.locate`). Outside a transaction. */
export function memoLocateSection(fragment: Y.XmlFragment, sectionId: string): LocatedSection | undefined {
  return sharedMemo(fragment).locate(sectionId)
}

/** Whether the shared memo knows the section's total without rendering (`OutlineMemo.totalKnown`). */
export function memoTotalKnown(fragment: Y.XmlFragment, section: LocatedSection): boolean {
  return sharedMemo(fragment).totalKnown(section)
}

/** The shared memo's measuring steps for one section (`OutlineMemo.measureSteps`). */
export function memoMeasureSteps(
  fragment: Y.XmlFragment,
  section: LocatedSection,
): Generator<void, void, undefined> {
  return sharedMemo(fragment).measureSteps(section)
}

function sharedMemo(fragment: Y.XmlFragment): OutlineMemo {
  let memo = shared.get(fragment)
  if (!memo) {
    memo = createOutlineMemo(fragment)
    shared.set(fragment, memo)
  }
  return memo
}
