import * as Y from 'yjs'
import { isHeadingId, newHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'

/**
 * Gives a fresh id to every top-level heading whose id is missing, malformed (not `newHeadingId`'s shape)
 * or repeats an earlier heading's (copy and paste), in one transaction with `origin`; the first heading with
 * a well-formed id keeps it. Returns how many headings changed.
 */
export function reassignDuplicateIds(fragment: Y.XmlFragment, origin?: unknown): number {
  const seen = new Set<string>()
  const stale: Y.XmlElement[] = []
  for (const child of fragment.toArray()) {
    if (!(child instanceof Y.XmlElement) || child.nodeName !== 'heading') continue
    const id = child.getAttribute(HEADING_ID_ATTR)
    if (isHeadingId(id) && !seen.has(id)) seen.add(id)
    else stale.push(child)
  }
  return giveFreshIds(fragment, stale, seen, origin)
}

/**
 * After an editor's update is applied: the headings it created or re-labelled (items named by
 * `checkEditorUpdate`) get a fresh id when theirs is missing, malformed, or already another heading's. The
 * other heading keeps its id, so an agent's section ids stay valid. One transaction with `origin`; returns
 * how many headings changed. Walks the top level only when a touched heading has a well-formed id.
 */
export function repairHeadingIds(
  fragment: Y.XmlFragment,
  touched: readonly Y.ID[],
  origin?: unknown,
): number {
  const doc = fragment.doc
  if (!doc || touched.length === 0) return 0
  const headings = new Set<Y.XmlElement>()
  for (const id of touched) {
    let item: Y.Item | Y.GC
    try {
      item = Y.getItem(doc.store, id) as Y.Item | Y.GC
    } catch {
      continue // not integrated (pending): nothing to repair yet
    }
    if (!(item instanceof Y.Item) || item.deleted) continue
    const heading =
      item.content instanceof Y.ContentType
        ? item.content.type
        : item.parentSub === HEADING_ID_ATTR
          ? item.parent
          : null
    if (heading instanceof Y.XmlElement && heading.nodeName === 'heading' && !heading._item?.deleted)
      headings.add(heading)
  }
  if (headings.size === 0) return 0
  const stale: Y.XmlElement[] = []
  const wellFormed: Y.XmlElement[] = []
  for (const heading of headings) {
    if (isHeadingId(heading.getAttribute(HEADING_ID_ATTR))) wellFormed.push(heading)
    else stale.push(heading)
  }
  const seen = new Set<string>()
  if (wellFormed.length > 0) {
    // Ids held by headings this update did not touch win; among touched ones, the first in document order.
    const holders = new Map<string, Y.XmlElement>()
    for (const child of fragment.toArray()) {
      if (!(child instanceof Y.XmlElement) || child.nodeName !== 'heading') continue
      const id = child.getAttribute(HEADING_ID_ATTR)
      if (!isHeadingId(id)) continue
      seen.add(id)
      const holder = holders.get(id)
      if (!holder || (headings.has(holder) && !headings.has(child))) holders.set(id, child)
    }
    for (const heading of wellFormed) {
      const id = heading.getAttribute(HEADING_ID_ATTR) as string
      const holder = holders.get(id)
      if (holder && holder !== heading) stale.push(heading)
      else holders.set(id, heading)
    }
  }
  return giveFreshIds(fragment, stale, seen, origin)
}

function giveFreshIds(
  fragment: Y.XmlFragment,
  stale: readonly Y.XmlElement[],
  seen: Set<string>,
  origin: unknown,
): number {
  if (stale.length === 0) return 0
  const apply = () => {
    for (const heading of stale) {
      let id = newHeadingId()
      while (seen.has(id)) id = newHeadingId()
      seen.add(id)
      heading.setAttribute(HEADING_ID_ATTR, id)
    }
  }
  if (fragment.doc) fragment.doc.transact(apply, origin)
  else apply()
  return stale.length
}
