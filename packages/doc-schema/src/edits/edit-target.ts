import * as Y from 'yjs'
import { isHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'
import { type Result, refuseFor } from '../result.ts'
import { observersCaughtUp } from '../sections/block-text-memo.ts'
import { memoLocateSection, memoSectionRev } from '../sections/live-memo.ts'
import { type LocatedSection, locateSection } from '../sections/section-index.ts'
import { sectionRev } from '../sections/section-rev.ts'

export type EditTarget = { doc: Y.Doc; section: LocatedSection }

/** Finds the section and checks the caller's rev: every edit starts here, before anything changes. */
export function editTarget(fragment: Y.XmlFragment, sectionId: string, rev: string): Result<EditTarget> {
  const doc = fragment.doc
  if (!doc)
    return refuseFor('detached', 'fragment: it belongs to no Y.Doc; edit a fragment read from a document.')
  // Through the live document's memo, which a read of the section just filled: the same located section
  // while the document is unchanged, and its rev kept with it, so an edit by a fresh read's rev neither
  // walks to the section nor hashes it again. When the memo may not have heard of a change yet (its
  // observer runs when a transaction ends: a change earlier in this transaction), both are computed.
  const memo = observersCaughtUp(fragment)
  const section = memo ? memoLocateSection(fragment, sectionId) : locateSection(fragment, sectionId)
  if (!section) {
    return refuseFor(
      'section_not_found',
      `section_id: no heading has id "${sectionId}"; read the outline for ids. Call get_outline for the current section ids.`,
      'section_id',
    )
  }
  const current = memo ? memoSectionRev(fragment, section) : sectionRev(section.heading, section.blocks)
  if (current !== rev) {
    return refuseFor(
      'stale_rev',
      `rev: "${rev}" is not the section's current rev ("${current}"); the section changed since you read it. ` +
        `Call read_document with section_id: ${sectionId} for its text and rev, then redo the edit.`,
      'rev',
    )
  }
  return { kind: 'ok', value: { doc, section } }
}

/** A section a write changed or created, as its answer names it. */
export type WrittenSection = { sectionId: string; rev: string }

/**
 * The section of `heading` and the sections after it whose heading ids are in `created`, with revs:
 * walked from the heading through Yjs's item list, so the cost follows those sections, not the document.
 */
export function sectionsFrom(heading: Y.XmlElement, created: ReadonlySet<string>): WrittenSection[] {
  const out: WrittenSection[] = []
  let current: { heading: Y.XmlElement; blocks: Y.XmlElement[] } | undefined = { heading, blocks: [] }
  const close = (section: { heading: Y.XmlElement; blocks: Y.XmlElement[] }) => {
    const id = section.heading.getAttribute(HEADING_ID_ATTR)
    out.push({ sectionId: isHeadingId(id) ? id : '', rev: sectionRev(section.heading, section.blocks) })
  }
  for (let item = heading._item?.right ?? null; item && current; item = item.right) {
    if (item.deleted || !item.countable) continue
    for (const child of item.content.getContent()) {
      if (!(child instanceof Y.XmlElement)) continue
      if (child.nodeName !== 'heading') {
        current.blocks.push(child)
        continue
      }
      close(current)
      const id = child.getAttribute(HEADING_ID_ATTR)
      current = typeof id === 'string' && created.has(id) ? { heading: child, blocks: [] } : undefined
      if (!current) break
    }
  }
  if (current) close(current)
  return out
}
