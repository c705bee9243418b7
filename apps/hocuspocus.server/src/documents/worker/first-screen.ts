/**
 * The first screen of a stored document (http/first-screen.ts): its state decoded and the first blocks
 * written as HTML (`firstScreenHtml`, bounded by FIRST_SCREEN_BLOCKS and FIRST_SCREEN_WORK). Pure work, run
 * on the worker (worker.ts) for a document stored larger than EXPORT_INLINE_BYTES, whose decoding would
 * hold the event loop as long as its size. Read flat from the stored bytes when it can be (stored-parts.ts
 * `readStoredFlat`): no Y.Doc of the whole document for its first blocks.
 */
import { type FirstScreen, FRAGMENT_NAME, firstScreenHtml } from '@collab/doc-schema'
import * as Y from 'yjs'
import { applyStored, readStoredFlat, type StoredParts } from '../stored-parts.ts'

export type FirstScreenLimits = { maxBlocks: number; maxWork: number }

export function renderFirstScreen(
  stored: Pick<StoredParts, 'snapshot' | 'updates'>,
  limits: FirstScreenLimits,
): FirstScreen {
  const flat = readStoredFlat(stored)
  if (flat) return firstScreenHtml(flat, limits)
  const doc = new Y.Doc()
  try {
    applyStored(doc, stored)
    return firstScreenHtml(doc.getXmlFragment(FRAGMENT_NAME), limits)
  } finally {
    doc.destroy()
  }
}
