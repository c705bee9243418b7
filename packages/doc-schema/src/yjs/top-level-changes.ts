import * as Y from 'yjs'

/**
 * Calls `visit` with each item `transaction` inserted into or deleted from `fragment`'s own list of children,
 * found from the transaction's new structs and its delete set, so the cost follows what changed. Yjs's
 * delta of the change (`event.changes`) walks every top-level item, which a paragraph typed at the end of a
 * long document would pay at every Enter. An item inserted and deleted in the same transaction is visited
 * twice. Called from an observer, a deleted item's content is still there (Yjs collects it after them).
 */
export function eachTopLevelChange(
  transaction: Y.Transaction,
  fragment: Y.XmlFragment,
  visit: (item: Y.Item) => void,
): void {
  const { clients } = transaction.doc.store
  const maybe = (struct: Y.Item | Y.GC) => {
    if (struct instanceof Y.Item && struct.parent === fragment) visit(struct)
  }
  eachNewStruct(transaction, maybe)
  for (const [client, ranges] of transaction.deleteSet.clients) {
    const structs = clients.get(client)
    if (!structs) continue
    const end = structs.at(-1)!.id.clock + structs.at(-1)!.length
    for (const range of ranges) {
      if (range.clock >= end) break
      for (let i = Y.findIndexSS(structs, range.clock); i < structs.length; i++) {
        const struct = structs[i]!
        if (struct.id.clock >= range.clock + range.len) break
        maybe(struct)
      }
    }
  }
}

/** Calls `visit` with each struct `transaction` added to the document (its cost follows the change). */
export function eachNewStruct(transaction: Y.Transaction, visit: (struct: Y.Item | Y.GC) => void): void {
  const { clients } = transaction.doc.store
  for (const [client, after] of transaction.afterState) {
    const before = transaction.beforeState.get(client) ?? 0
    const structs = clients.get(client)
    if (!structs || after <= before) continue
    for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) visit(structs[i]!)
  }
}
