/**
 * Whether a document has a heading with a given id now: the live document's (an editor has it open,
 * the usual case for the web editor's chat), else the stored content's. Headings are top-level blocks
 * (the flat document model), so only the fragment's children are looked at. For a document nobody has
 * open, its stored outline answers without decoding the state whenever it is current (`loadOutline` gives
 * none when updates were logged after the snapshot); only then is the stored content decoded: here when
 * small, on the documents' worker when large (deriveStored), and here after all when the worker refuses
 * (its queue is full), as a compaction does: the answer is needed.
 */

import { FRAGMENT_NAME, HEADING_ID_ATTR, isHeadingId, type OutlineNode } from '@collab/doc-schema'
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

function listsHeading(outline: readonly OutlineNode[], sectionId: string): boolean {
  const pending = [...outline]
  for (let node = pending.pop(); node; node = pending.pop()) {
    if (node.sectionId === sectionId) return true
    pending.push(...node.children)
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
  const listed = await services.documents.loadOutline(room)
  if (!listed) return false
  if (listed.outline) return listsHeading(listed.outline, sectionId)
  const stored = await services.documents.loadStored(room)
  if (!stored) return false
  const derived = await services.documents.deriveStored(stored, { what: 'headings' })
  if (derived.kind === 'ok') return (derived.value as string[]).includes(sectionId)
  // Read again: the bytes of a job the worker took are gone from here (transferred).
  const again = await services.documents.loadStored(room)
  if (!again) return false
  const doc = new Y.Doc()
  try {
    applyStored(doc, again)
    return hasHeading(doc, sectionId)
  } finally {
    doc.destroy()
  }
}
