/**
 * Which top-level blocks a change touched, for restores and reverts (history-undo.ts): a block is keyed by
 * its Yjs item id, so it is matched across states; the blocks one transaction changed, those changed since
 * a state (its vector and deletions), and how a refusal names the blocks in conflict, where they are now.
 * Structural: nothing here renders a block but the few a refusal quotes.
 */
import { blockMarkdown, HEADING_ID_ATTR } from '@collab/doc-schema'
import * as Y from 'yjs'

/** A block the undone changes touched and someone changed since: where it is now. */
export type UndoConflict = {
  sectionId: string
  sectionTitle: string
  /** Its number in its section now, as section reads number them (the heading is 0). */
  block: number
  /** The block's start now. */
  text: string
}

/** Conflicts a refusal names at most (the count is exact). */
export const MAX_NAMED_CONFLICTS = 10
/** Characters of a conflicting block's start a refusal quotes. */
const CONFLICT_QUOTE_CHARS = 60

export type BlockKey = string

export function keyOf(element: Y.XmlElement): BlockKey | null {
  const item = element._item
  return item ? `${item.id.client}:${item.id.clock}` : null
}

/**
 * The top-level blocks one transaction of the scratch document changed: the block holding each type it
 * changed (text typed, attributes set, children inserted or deleted inside), and each block it inserted.
 * Structural (no rendering): Yjs names the changed types, and a block's key is its item id.
 */
export function blocksChangedBy(transaction: Y.Transaction, fragment: Y.XmlFragment): Set<BlockKey> {
  const keys = new Set<BlockKey>()
  for (const type of transaction.changed.keys()) {
    let block: Y.AbstractType<any> | null = type
    while (block?._item && block._item.parent !== fragment) block = block._item.parent as Y.AbstractType<any>
    if (block?._item && block instanceof Y.XmlElement) {
      const key = keyOf(block)
      if (key) keys.add(key)
    }
  }
  if (transaction.changed.has(fragment as Y.AbstractType<any>))
    for (const child of fragment.toArray()) {
      const item = child instanceof Y.XmlElement ? child._item : null
      if (item && item.id.clock >= (transaction.beforeState.get(item.id.client) ?? 0)) {
        const key = keyOf(child as Y.XmlElement)
        if (key) keys.add(key)
      }
    }
  return keys
}

/** The blocks in conflict that are still there: where they are now. */
export function conflictsIn(fragment: Y.XmlFragment, keys: ReadonlySet<BlockKey>): UndoConflict[] {
  const conflicts: UndoConflict[] = []
  let sectionId = ''
  let sectionTitle = ''
  let block = 0
  for (const child of fragment.toArray()) {
    if (!(child instanceof Y.XmlElement)) continue
    if (child.nodeName === 'heading') {
      const id = child.getAttribute(HEADING_ID_ATTR)
      sectionId = typeof id === 'string' ? id : ''
      sectionTitle = blockMarkdown(child).replace(/^#+\s*/, '')
      block = 0
    } else block++
    const key = keyOf(child)
    if (!key || !keys.has(key)) continue
    const text = blockMarkdown(child).slice(0, CONFLICT_QUOTE_CHARS)
    conflicts.push({ sectionId, sectionTitle, block, text })
  }
  return conflicts
}

/** How a refusal names conflicts: `"Intro" [section_id: …] block 2 ("Hello…")`, the first MAX_NAMED_CONFLICTS. */
export function describeConflicts(conflicts: readonly UndoConflict[]): string {
  const named = conflicts.slice(0, MAX_NAMED_CONFLICTS).map((c) => {
    const where = c.sectionId
      ? `section "${c.sectionTitle}" [section_id: ${c.sectionId}]`
      : 'the blocks before the first heading'
    return `${where} block ${c.block} ("${c.text.replace(/\s+/g, ' ')}")`
  })
  const more = conflicts.length - named.length
  return `${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`
}

export type Ranges = Map<number, Array<[number, number]>>

/** A document's deletions as (client, clock, length) triples, each client's ascending. */
export function deletionsOf(doc: Y.Doc): Float64Array {
  const ds = Y.createDeleteSetFromStructStore(doc.store)
  const triples: number[] = []
  for (const [client, items] of ds.clients) for (const d of items) triples.push(client, d.clock, d.len)
  return Float64Array.from(triples)
}

/** Triples as each client's [from, to) ranges, ascending. */
export function rangesOf(triples: Float64Array): Ranges {
  const ranges: Ranges = new Map()
  for (let i = 0; i + 2 < triples.length; i += 3) {
    const client = triples[i]!
    const list = ranges.get(client) ?? []
    list.push([triples[i + 1]!, triples[i + 1]! + triples[i + 2]!])
    ranges.set(client, list)
  }
  for (const list of ranges.values()) list.sort((a, b) => a[0] - b[0])
  return ranges
}

/** The parts of `doc`'s deletions that `before` does not hold: deleted since. */
function deletedSince(doc: Y.Doc, before: Ranges): Ranges {
  const since: Ranges = new Map()
  for (const [client, items] of Y.createDeleteSetFromStructStore(doc.store).clients) {
    const old = before.get(client) ?? []
    const fresh: Array<[number, number]> = []
    let k = 0
    for (const d of items) {
      let from = d.clock
      const to = d.clock + d.len
      while (k < old.length && old[k]![1] <= from) k++
      for (let j = k; j < old.length && old[j]![0] < to && from < to; j++) {
        const [oldFrom, oldTo] = old[j]!
        if (oldFrom > from) fresh.push([from, oldFrom])
        from = Math.max(from, oldTo)
      }
      if (from < to) fresh.push([from, to])
    }
    if (fresh.length > 0) since.set(client, fresh)
  }
  return since
}

/** The top-level block an item is in (a top-level block: itself), by its item id. */
function blockKeyOf(item: Y.Item, fragment: Y.XmlFragment): BlockKey | null {
  let current: Y.Item | null = item
  while (current) {
    const parent: Y.AbstractType<unknown> | Y.ID | null = current.parent
    if (parent === fragment) return `${current.id.client}:${current.id.clock}`
    current = parent instanceof Y.AbstractType ? parent._item : null
  }
  return null
}

/** Adds the blocks of the items of `client` in [from, to) to `keys`. */
function addBlocksIn(
  doc: Y.Doc,
  fragment: Y.XmlFragment,
  client: number,
  range: [number, number],
  keys: Set<BlockKey>,
) {
  const structs = doc.store.clients.get(client)
  const [from, to] = range
  if (!structs || structs.length === 0 || from >= Y.getState(doc.store, client)) return
  for (let i = Y.findIndexSS(structs, from); i < structs.length && structs[i]!.id.clock < to; i++) {
    const struct = structs[i]!
    if (!(struct instanceof Y.Item)) continue
    const key = blockKeyOf(struct, fragment)
    if (key) keys.add(key)
  }
}

/**
 * The top-level blocks changed since a state (its vector and deletions): those holding an item inserted
 * or deleted since. Deleting adds no item (the state vector stays), so deletions are compared too.
 */
export function blocksChangedSince(
  doc: Y.Doc,
  fragment: Y.XmlFragment,
  vector: Map<number, number>,
  deleted: Ranges,
): Set<BlockKey> {
  const keys = new Set<BlockKey>()
  for (const [client, clock] of Y.decodeStateVector(Y.encodeStateVector(doc))) {
    const from = vector.get(client) ?? 0
    if (clock > from) addBlocksIn(doc, fragment, client, [from, clock], keys)
  }
  for (const [client, ranges] of deletedSince(doc, deleted))
    for (const range of ranges) addBlocksIn(doc, fragment, client, range, keys)
  return keys
}

/** "1 block … was" / "3 blocks … were". */
export function blocksWere(n: number, what: string): string {
  return `${n} block${n === 1 ? '' : 's'} ${what} ${n === 1 ? 'was' : 'were'}`
}
