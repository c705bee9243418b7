import type * as Y from 'yjs'
import { type Result, refuse } from '../result.ts'
import { type LocatedSection, locateSection } from '../sections/section-index.ts'
import { sectionRev } from '../sections/section-rev.ts'

export type EditTarget = { doc: Y.Doc; section: LocatedSection }

/** Finds the section and checks the caller's rev: every edit starts here, before anything changes. */
export function editTarget(fragment: Y.XmlFragment, sectionId: string, rev: string): Result<EditTarget> {
  const doc = fragment.doc
  if (!doc)
    return refuse('detached', 'fragment: it belongs to no Y.Doc; edit a fragment read from a document.')
  const section = locateSection(fragment, sectionId)
  if (!section) {
    return refuse(
      'section_not_found',
      `section_id: no heading has id "${sectionId}"; read the outline for ids.`,
      'section_id',
    )
  }
  const current = sectionRev(section.heading, section.blocks)
  if (current !== rev) {
    return refuse(
      'stale_rev',
      `rev: "${rev}" is not the section's current rev ("${current}"); read the section again and redo the edit.`,
      'rev',
    )
  }
  return { kind: 'ok', value: { doc, section } }
}

/** The section's rev after an edit, found again by id. */
export function revAfterEdit(fragment: Y.XmlFragment, sectionId: string): string {
  const section = locateSection(fragment, sectionId)
  return section ? sectionRev(section.heading, section.blocks) : ''
}
