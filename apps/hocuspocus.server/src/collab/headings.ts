/**
 * Whether a document has a heading with a given id now: the live document's (an editor has it open,
 * the usual case for the web editor's chat), else the stored content's. Headings are top-level blocks
 * (the flat document model), so only the fragment's children are looked at.
 */

import { FRAGMENT_NAME, HEADING_ID_ATTR, isHeadingId } from '@collab/doc-schema'
import type { Hocuspocus } from '@hocuspocus/server'
import * as Y from 'yjs'
import { applyStored } from '../documents/stored-parts.ts'
import type { Services } from '../services.ts'

function hasHeading(doc: Y.Doc, sectionId: string): boolean {
  for (const child of doc.getXmlFragment(FRAGMENT_NAME).toArray()) {
    if (child instanceof Y.XmlElement && child.nodeName === 'heading') {
      if (child.getAttribute(HEADING_ID_ATTR) === sectionId) return true
    }
  }
  return false
}

export async function headingExists(
  services: Pick<Services, 'documents'>,
  hocuspocus: Pick<Hocuspocus, 'documents'>,
  room: string,
  sectionId: string,
): Promise<boolean> {
  if (!isHeadingId(sectionId)) return false
  const live = hocuspocus.documents.get(room)
  if (live) return hasHeading(live, sectionId)
  const stored = await services.documents.loadStored(room)
  if (!stored) return false
  const doc = new Y.Doc()
  try {
    applyStored(doc, stored)
    return hasHeading(doc, sectionId)
  } finally {
    doc.destroy()
  }
}
