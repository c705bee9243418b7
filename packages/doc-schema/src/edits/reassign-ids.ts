import * as Y from 'yjs'
import { newHeadingId } from '../heading-id.ts'
import { HEADING_ID_ATTR } from '../limits.ts'

/**
 * Gives a fresh id to every top-level heading whose id repeats an earlier heading's (copy and paste) or is
 * missing, in one transaction; the first heading with an id keeps it. Returns how many headings changed.
 */
export function reassignDuplicateIds(fragment: Y.XmlFragment): number {
  const seen = new Set<string>()
  const stale: Y.XmlElement[] = []
  for (const child of fragment.toArray()) {
    if (!(child instanceof Y.XmlElement) || child.nodeName !== 'heading') continue
    const id = child.getAttribute(HEADING_ID_ATTR)
    if (typeof id === 'string' && id !== '' && !seen.has(id)) seen.add(id)
    else stale.push(child)
  }
  if (stale.length === 0) return 0
  const apply = () => {
    for (const heading of stale) {
      let id = newHeadingId()
      while (seen.has(id)) id = newHeadingId()
      seen.add(id)
      heading.setAttribute(HEADING_ID_ATTR, id)
    }
  }
  if (fragment.doc) fragment.doc.transact(apply)
  else apply()
  return stale.length
}
