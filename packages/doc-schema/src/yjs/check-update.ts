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
import { checkDeletions, type StrippedId } from './check-deletions.ts'
import type { InsertedText } from './own-text.ts'
import {
  CONTENT,
  GC_ROW,
  PARENT,
  readUpdateRows,
  SKIP_ROW,
  TYPE_REF,
  type UpdateRows,
} from './update-rows.ts'
import { Malformed } from './update-work.ts'

type YItem = Y.Item

const noLeft = () => undefined
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
 * applied to. Pure apart from reading `doc`. The update is read into rows (update-rows.ts), not into Yjs
 * objects: the check never holds a second decoded copy of what the apply decodes.
 */
export function checkEditorUpdate(
  doc: Y.Doc,
  update: Uint8Array,
  types: EditorTypes = { all: true },
): UpdateCheck {
  let rows: UpdateRows
  try {
    rows = readUpdateRows(update)
  } catch (error) {
    if (error instanceof Malformed) return { ok: false, reason: 'the update is not a valid Yjs update' }
    throw error
  }
  const fragment = doc.share.get(FRAGMENT_NAME) as Y.AbstractType<unknown> | undefined
  const isItem = (row: number) => rows.kind[row] !== GC_ROW && rows.kind[row] !== SKIP_ROW
  // This update's items per client, in clock order, to find the item holding a given id.
  const byClient = new Map<number, number[]>()
  for (let row = 0; row < rows.count; row++) {
    if (!isItem(row)) continue
    const client = rows.client[row]!
    const list = byClient.get(client)
    if (list) list.push(row)
    else byClient.set(client, [row])
  }
  for (const list of byClient.values())
    for (let i = 1; i < list.length; i++)
      if (rows.clock[list[i]!]! < rows.clock[list[i - 1]!]!) {
        list.sort((a, b) => rows.clock[a]! - rows.clock[b]!)
        break
      }
  /** The row of this update's item holding the id, or -1. */
  const findInUpdate = (client: number, clock: number): number => {
    const list = byClient.get(client)
    if (!list) return -1
    let lo = 0
    let hi = list.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      const row = list[mid]!
      if (clock < rows.clock[row]!) hi = mid - 1
      else if (clock >= rows.clock[row]! + rows.length[row]!) lo = mid + 1
      else return row
    }
    return -1
  }
  const findInDoc = (client: number, clock: number): Struct | undefined => {
    const structs = doc.store.clients.get(client)
    if (!structs || structs.length === 0) return undefined
    const last = structs[structs.length - 1]!
    if (clock >= last.id.clock + last.length) return undefined
    return Y.getItem(doc.store, Y.createID(client, clock)) as Struct
  }

  /** The live item left of where `row` goes: its origin, followed through this update's items. */
  const leftInDoc = (row: number): YItem | undefined => {
    let client = rows.originClient[row]!
    let clock = rows.originClock[row]!
    for (let steps = 0; !Number.isNaN(client) && steps < MAX_SUGGESTION_WALK; steps++) {
      const live = findInDoc(client, clock)
      if (live instanceof Y.Item) return live
      const own = findInUpdate(client, clock)
      if (own < 0) return undefined
      client = rows.originClient[own]!
      clock = rows.originClock[own]!
    }
    return undefined
  }
  const places: Array<Place | undefined> = new Array(rows.count)
  const missing: Place = {
    kind: 'refused',
    reason: 'the update depends on content this server does not have; reconnect to resync',
    missing: true,
  }
  const typeOf = (row: number) => {
    const content = rows.content.get(row)
    return content?.kind === CONTENT.type ? content : undefined
  }

  /** The update item the last `step` depended on, and how (a parent: its children; a sibling: its place). */
  let via = -1
  let viaParent = false
  /**
   * One step of placing `row`: its place when it is known without other update items; otherwise undefined,
   * with `via` the update item it depends on.
   */
  const step = (row: number): Place | undefined => {
    const sub = rows.sub.get(row) ?? null
    if (rows.parent[row] === PARENT.root) {
      const name = rows.rootName.get(row)!
      if (name !== FRAGMENT_NAME)
        return {
          kind: 'refused',
          reason: `the update writes the shared type "${name.slice(0, 40)}"; only "${FRAGMENT_NAME}" is a document`,
        }
      return { kind: 'fragment', sub }
    }
    if (rows.parent[row] === PARENT.item) {
      const client = rows.parentClient[row]!
      const clock = rows.parentClock[row]!
      const own = findInUpdate(client, clock)
      if (own >= 0) {
        if (!typeOf(own) || rows.clock[own] !== clock)
          return { kind: 'refused', reason: 'the update names a parent that is not a shared type' }
        via = own
        viaParent = true
        return undefined
      }
      const struct = findInDoc(client, clock)
      if (!struct) return missing
      if (!(struct instanceof Y.Item)) return { kind: 'gone' }
      if (!(struct.content instanceof Y.ContentType))
        return { kind: 'refused', reason: 'the update names a parent that is not a shared type' }
      return describeType(struct.content.type, fragment, sub)
    }
    // No parent written: Yjs takes it (and the attribute key) from the left or right neighbour.
    const fromLeft = !Number.isNaN(rows.originClient[row]!)
    const client = fromLeft ? rows.originClient[row]! : rows.rightClient[row]!
    const clock = fromLeft ? rows.originClock[row]! : rows.rightClock[row]!
    if (Number.isNaN(client)) return { kind: 'refused', reason: 'the update holds an item with no parent' }
    const own = findInUpdate(client, clock)
    if (own >= 0) {
      via = own
      viaParent = false
      return undefined
    }
    const struct = findInDoc(client, clock)
    if (!struct) return missing
    if (!(struct instanceof Y.Item)) return { kind: 'gone' }
    if (!(struct.parent instanceof Y.AbstractType)) return { kind: 'gone' }
    return describeType(struct.parent, fragment, struct.parentSub)
  }

  // Reused by every placing: the chain of dependencies followed, and a mark of the rows on it.
  const chain: number[] = []
  const chainParent: boolean[] = []
  const onChain = new Int32Array(rows.count)
  let walk = 0
  const placeOf = (start: number): Place => {
    const known = places[start]
    if (known) return known
    // Follow dependencies with a loop until a known place, then assign back along the chain.
    walk++
    chain.length = 0
    chainParent.length = 0
    let row = start
    let place: Place
    for (;;) {
      const cached = places[row]
      if (cached) {
        place = cached
        break
      }
      if (onChain[row] === walk) {
        place = { kind: 'refused', reason: 'the update holds items that are their own ancestors' }
        break
      }
      onChain[row] = walk
      const next = step(row)
      if (next) {
        places[row] = next
        place = next
        break
      }
      chain.push(row)
      chainParent.push(viaParent)
      row = via
    }
    let nextRow = row
    let nextPlace = place
    for (let i = chain.length - 1; i >= 0; i--) {
      const link = chain[i]!
      // A neighbour shares the parent (and attribute key); a parent's children sit inside the type it creates.
      const derived = chainParent[i]
        ? inside(typeOf(nextRow)!, nextPlace, rows.sub.get(link) ?? null)
        : nextPlace
      places[link] = derived
      nextRow = link
      nextPlace = derived
    }
    return places[start]!
  }

  let inserts = false
  const headingItems: Y.ID[] = []
  const textItems: InsertedText[] = []
  for (let row = 0; row < rows.count; row++) {
    const kind = rows.kind[row]!
    if (kind === GC_ROW || kind === SKIP_ROW || kind === CONTENT.deleted) continue
    inserts = true
    const place = placeOf(row)
    if (place.kind === 'gone') continue
    if (place.kind === 'refused')
      return { ok: false, reason: place.reason, ...(place.missing ? { missingContent: true as const } : {}) }
    const content = kind === CONTENT.string ? 'text' : rows.content.get(row)!
    // Only a mark asks for its left neighbour: no closure for each character of text.
    const problem = contentProblem(content, place, content === 'text' ? noLeft : () => leftInDoc(row))
    if (problem) return { ok: false, reason: problem }
    const client = rows.client[row]!
    const clock = rows.clock[row]!
    if (place.kind === 'text' && content === 'text') {
      // Consecutive clocks of one client join one range (a run typed character by character).
      const last = textItems[textItems.length - 1]
      if (last && last.id.client === client && last.id.clock + last.length === clock)
        last.length += rows.length[row]!
      else textItems.push({ id: Y.createID(client, clock), length: rows.length[row]! })
    }
    if (place.kind === 'element' && place.name === 'heading' && place.sub === HEADING_ID_ATTR)
      headingItems.push(Y.createID(client, clock))
    if (
      content !== 'text' &&
      content.kind === CONTENT.type &&
      content.ref === TYPE_REF.xmlElement &&
      content.name === 'heading'
    )
      headingItems.push(Y.createID(client, clock))
  }
  const deletions = checkDeletions(doc, { clients: rows.deletes }, types)
  if (!deletions.ok) return deletions
  return {
    ok: true,
    inserts,
    headingItems,
    strippedIds: deletions.strippedIds,
    textItems,
    examined: rows.count + deletions.examined,
  }
}
