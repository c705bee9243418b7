/**
 * The editor-update check: decides, before a Yjs update from an editor is applied, whether everything it
 * inserts fits the document model. It decodes the update (cost proportional to the update, not the document)
 * and places each inserted item, looking up parents and neighbours in the update itself or in the live
 * document, without recursion (a forged chain of a million items is walked with a loop, and a cycle is refused).
 *
 * Checked: only the TipTap fragment is written; every element is a node type of the schema, allowed inside
 * its parent (the set of child types the parent's content expression can hold); nesting stays within
 * MAX_NESTING_DEPTH; text sits only in text blocks; marks are the schema's and allowed in their block;
 * attributes are the node's or mark's own, with scalar values of bounded size. Not checked here: the order
 * and count rules of content expressions (e.g. "a list item starts with a paragraph"); those cannot make a
 * store, a walk or a read fail. Each item's place and content are judged in check-content.ts.
 *
 * Deletions (check-deletions.ts): an editor may delete what it can represent. A bound editor deletes content
 * its schema lacks as soon as it opens a document, so an update that deletes an element of a node type the
 * connection did not declare, a mark boundary of an undeclared mark type, or anything inside such an element
 * is refused (`EditorTypes`, editor-types.ts).
 *
 * Heading ids are not refused: the check reports which headings the update creates or re-labels, and the
 * caller replaces ids that are malformed or taken (`repairHeadingIds`); and which headings it strips of
 * their id, with the id read now (after the update, Yjs may have collected the deleted value), so the
 * caller puts it back (`restoreHeadingIds`): an editor without the id attribute (StarterKit) removes it
 * whenever it edits the heading's text.
 */
import * as Y from 'yjs'
import type { EditorTypes } from '../editor-types.ts'
import { FRAGMENT_NAME, HEADING_ID_ATTR } from '../limits.ts'
import { contentProblem, describeType, inside, MAX_SUGGESTION_WALK, type Place } from './check-content.ts'
import { checkDeletions, type DeleteRanges, type StrippedId } from './check-deletions.ts'
import type { InsertedText } from './own-text.ts'

type YItem = Y.Item
type Struct = Y.Item | Y.GC | Y.Skip

export type UpdateCheck =
  | {
      ok: true
      /** Whether the update inserts anything (an update that only deletes never grows a document). */
      inserts: boolean
      /** Ids of items that create a heading or set a heading's id: look them up after applying. */
      headingItems: Y.ID[]
      /** Headings whose id the update removes, with that id: put it back after applying. */
      strippedIds: StrippedId[]
      /** Text the update inserts: unmarked after applying where it lands inside a suggestion (own-text.ts). */
      textItems: InsertedText[]
      /**
       * Structs this check looked at: the update's own items, the live items it deletes and their
       * ancestors. What its cost follows (a test holds it independent of the document's size).
       */
      examined: number
    }
  | {
      ok: false
      reason: string
      /** Set when the update would delete content of this node or mark type, which the editor did not declare. */
      undeclaredType?: string
      /**
       * Set when the update builds on content the document does not have (yet): nothing else was found wrong
       * before that. Yjs would keep it pending; it can be checked once the content it builds on is there.
       */
      missingContent?: true
    }

/**
 * Checks `update` (Yjs v1 encoding, as sync messages carry) against the live document `doc` it is about to be
 * applied to. Pure apart from reading `doc`.
 */
export function checkEditorUpdate(
  doc: Y.Doc,
  update: Uint8Array,
  types: EditorTypes = { all: true },
): UpdateCheck {
  let decoded: { structs: Struct[]; ds: DeleteRanges }
  try {
    decoded = Y.decodeUpdate(update) as { structs: Struct[]; ds: DeleteRanges }
  } catch {
    return { ok: false, reason: 'the update is not a valid Yjs update' }
  }
  const fragment = doc.share.get(FRAGMENT_NAME) as Y.AbstractType<unknown> | undefined
  // This update's items per client, in clock order, to find the item holding a given id.
  const byClient = new Map<number, YItem[]>()
  for (const struct of decoded.structs) {
    if (!(struct instanceof Y.Item)) continue
    const list = byClient.get(struct.id.client)
    if (list) list.push(struct)
    else byClient.set(struct.id.client, [struct])
  }
  for (const list of byClient.values()) list.sort((a, b) => a.id.clock - b.id.clock)
  const findInUpdate = (id: Y.ID): YItem | undefined => {
    const list = byClient.get(id.client)
    if (!list) return undefined
    let lo = 0
    let hi = list.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      const item = list[mid]!
      if (id.clock < item.id.clock) hi = mid - 1
      else if (id.clock >= item.id.clock + item.length) lo = mid + 1
      else return item
    }
    return undefined
  }
  const findInDoc = (id: Y.ID): Struct | undefined => {
    const structs = doc.store.clients.get(id.client)
    if (!structs || structs.length === 0) return undefined
    const last = structs[structs.length - 1]!
    if (id.clock >= last.id.clock + last.length) return undefined
    return Y.getItem(doc.store, id) as Struct
  }

  /** The live item left of where `item` goes: its origin, followed through this update's items. */
  const leftInDoc = (item: YItem): YItem | undefined => {
    let origin = item.origin
    for (let steps = 0; origin && steps < MAX_SUGGESTION_WALK; steps++) {
      const live = findInDoc(origin)
      if (live instanceof Y.Item) return live
      origin = findInUpdate(origin)?.origin ?? null
    }
    return undefined
  }
  const places = new Map<YItem, Place>()
  const missing: Place = {
    kind: 'refused',
    reason: 'the update depends on content this server does not have; reconnect to resync',
    missing: true,
  }

  /**
   * One step of placing `item`: either its place (known without other update items), or the update item it
   * depends on and how to derive its place from that one's.
   */
  const step = (item: YItem): Place | { via: YItem; how: 'parent' | 'sibling' } => {
    const parent = item.parent as unknown
    if (typeof parent === 'string') {
      if (parent !== FRAGMENT_NAME)
        return {
          kind: 'refused',
          reason: `the update writes the shared type "${parent.slice(0, 40)}"; only "${FRAGMENT_NAME}" is a document`,
        }
      return { kind: 'fragment', sub: item.parentSub }
    }
    if (parent && typeof parent === 'object' && 'client' in parent) {
      const id = parent as Y.ID
      const own = findInUpdate(id)
      if (own) {
        if (!(own.content instanceof Y.ContentType) || own.id.clock !== id.clock)
          return { kind: 'refused', reason: 'the update names a parent that is not a shared type' }
        return { via: own, how: 'parent' }
      }
      const struct = findInDoc(id)
      if (!struct) return missing
      if (!(struct instanceof Y.Item)) return { kind: 'gone' }
      if (!(struct.content instanceof Y.ContentType))
        return { kind: 'refused', reason: 'the update names a parent that is not a shared type' }
      return describeType(struct.content.type, fragment, item.parentSub)
    }
    // No parent written: Yjs takes it (and the attribute key) from the left or right neighbour.
    const neighbour = item.origin ?? item.rightOrigin
    if (!neighbour) return { kind: 'refused', reason: 'the update holds an item with no parent' }
    const own = findInUpdate(neighbour)
    if (own) return { via: own, how: 'sibling' }
    const struct = findInDoc(neighbour)
    if (!struct) return missing
    if (!(struct instanceof Y.Item)) return { kind: 'gone' }
    if (!(struct.parent instanceof Y.AbstractType)) return { kind: 'gone' }
    return describeType(struct.parent, fragment, struct.parentSub)
  }

  const placeOf = (start: YItem): Place => {
    const known = places.get(start)
    if (known) return known
    // Follow dependencies with a loop until a known place, then assign back along the chain.
    const chain: Array<{ item: YItem; how: 'parent' | 'sibling' }> = []
    const onChain = new Set<YItem>()
    let item = start
    let place: Place
    for (;;) {
      const cached = places.get(item)
      if (cached) {
        place = cached
        break
      }
      if (onChain.has(item)) {
        place = { kind: 'refused', reason: 'the update holds items that are their own ancestors' }
        break
      }
      onChain.add(item)
      const next = step(item)
      if (!('via' in next)) {
        places.set(item, next)
        place = next
        break
      }
      chain.push({ item, how: next.how })
      item = next.via
    }
    let nextItem = item
    let nextPlace = place
    for (let i = chain.length - 1; i >= 0; i--) {
      const { item: link, how } = chain[i]!
      // A neighbour shares the parent (and attribute key); a parent's children sit inside the type it creates.
      const derived = how === 'sibling' ? nextPlace : inside(nextItem, nextPlace, link.parentSub)
      places.set(link, derived)
      nextItem = link
      nextPlace = derived
    }
    return places.get(start)!
  }

  let inserts = false
  const headingItems: Y.ID[] = []
  const textItems: InsertedText[] = []
  for (const struct of decoded.structs) {
    if (!(struct instanceof Y.Item)) continue
    const content = struct.content
    if (content instanceof Y.ContentDeleted) continue
    inserts = true
    const place = placeOf(struct)
    if (place.kind === 'gone') continue
    if (place.kind === 'refused')
      return { ok: false, reason: place.reason, ...(place.missing ? { missingContent: true as const } : {}) }
    const problem = contentProblem(struct, place, leftInDoc)
    if (problem) return { ok: false, reason: problem }
    if (place.kind === 'text' && content instanceof Y.ContentString)
      textItems.push({ id: struct.id, length: struct.length })
    if (place.kind === 'element' && place.name === 'heading' && place.sub === HEADING_ID_ATTR)
      headingItems.push(struct.id)
    if (
      content instanceof Y.ContentType &&
      content.type instanceof Y.XmlElement &&
      content.type.nodeName === 'heading'
    )
      headingItems.push(struct.id)
  }
  const deletions = checkDeletions(doc, decoded.ds, types)
  if (!deletions.ok) return deletions
  return {
    ok: true,
    inserts,
    headingItems,
    strippedIds: deletions.strippedIds,
    textItems,
    examined: decoded.structs.length + deletions.examined,
  }
}
