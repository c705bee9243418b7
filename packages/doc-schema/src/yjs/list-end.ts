/**
 * The end of a Yjs type's list of children without walking it from the start.
 *
 * Yjs keeps a type's children as a linked list from `_start`, with no pointer to its end, so finding the
 * last child walks every item: for a document of 12,000 top-level blocks ~0.2 ms when the items are in
 * the processor's cache and ~2 ms when they are not, as on a server that has been serving other work
 * between two appends (profiled: half of an append's time on a 5 MiB document). The end found last
 * time is kept per type and checked before it is trusted:
 * - an item merged into its left neighbour (Yjs merges adjacent deleted items when a transaction ends)
 *   is no longer the store's struct at its id, so it is dropped and the walk starts again from `_start`;
 * - an item still in the store with this parent is still in the list (top-level items are never replaced
 *   by garbage-collection structs: only a deleted parent's items are), so items added after it are
 *   reached by walking forward from it, which is the few items added since.
 */
import * as Y from 'yjs'

const ends = new WeakMap<object, Y.Item>()

/** The last item of `type`'s list of children (deleted or not), or null when it has none. */
export function lastListItem<E>(type: Y.AbstractType<E>): Y.Item | null {
  let item: Y.Item | null = ends.get(type) ?? null
  if (item && !stillListed(type, item)) item = null
  item ??= type._start
  if (!item) return null
  while (item.right) item = item.right
  ends.set(type, item)
  return item
}

/**
 * The last child item that is not deleted and counts in the type's length, or null: the item Yjs's own
 * `insert(type.length, …)` inserts after, so an append through it makes the same update.
 */
export function lastLiveItem<E>(type: Y.AbstractType<E>): Y.Item | null {
  let item = lastListItem(type)
  while (item && (item.deleted || !item.countable)) item = item.left
  return item
}

function stillListed<E>(type: Y.AbstractType<E>, item: Y.Item): boolean {
  const doc = type.doc
  if (!doc || item.parent !== type) return false
  const structs = doc.store.clients.get(item.id.client)
  if (!structs) return false
  const last = structs[structs.length - 1]
  // Ids past the client's last struct do not exist (findIndexSS would throw on them).
  if (!last || item.id.clock >= last.id.clock + last.length) return false
  return structs[Y.findIndexSS(structs, item.id.clock)] === item
}
