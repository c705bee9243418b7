/**
 * One outline memo per long-lived fragment (a document Hocuspocus holds), shared by every caller: the store
 * step, the MCP readers and the edits keep each other's work (`createOutlineMemo`, outline-memo.ts). Each
 * function here is the shared memo's method of the same name. Call them outside a transaction.
 */
import type * as Y from 'yjs'
import type { OutlineNode } from './outline.ts'
import { createOutlineMemo, type OutlineMemo } from './outline-memo.ts'
import type { LocatedSection } from './section-index.ts'

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

/**
 * A section read kept under `key` with the section's current revision, through the shared memo
 * (`OutlineMemo.keptRead`). Outside a transaction.
 */
export function memoKeptRead<T>(
  fragment: Y.XmlFragment,
  section: LocatedSection,
  key: string,
): T | undefined {
  return sharedMemo(fragment).keptRead<T>(section, key)
}

/** Keeps a section read with the section's current revision (`OutlineMemo.keepRead`). Outside a transaction. */
export function memoKeepRead(
  fragment: Y.XmlFragment,
  section: LocatedSection,
  key: string,
  read: unknown,
  chars: number,
): void {
  sharedMemo(fragment).keepRead(section, key, read, chars)
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
  maxItems?: number,
): Generator<void, void, undefined> {
  return sharedMemo(fragment).measureSteps(section, maxItems)
}

function sharedMemo(fragment: Y.XmlFragment): OutlineMemo {
  let memo = shared.get(fragment)
  if (!memo) {
    memo = createOutlineMemo(fragment)
    shared.set(fragment, memo)
  }
  return memo
}
