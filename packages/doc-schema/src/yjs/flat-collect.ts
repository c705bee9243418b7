/**
 * A state read flat (flat-read.ts) written back as the state Yjs would encode after applying it to an empty
 * document: deleted content collected, and adjacent structs merged, without a Y.Doc.
 *
 * Why: a compaction writes the merged state of a document's snapshot and log with its deleted content
 * collected. Decoding it into a Y.Doc for that costs ~290 bytes of heap an item and about half as much
 * again in garbage (at the item limit ~150 MB on the documents' worker, the peak of the server's memory
 * under the red team's item attack: issue 24). The rows flat-read keeps (~50 bytes an item while it
 * integrates) hold everything the encoding needs.
 *
 * What Yjs does, and so what this does (yjs `cleanupTransactions`, `tryGc`, `Item.gc`, `Item.mergeWith`,
 * `writeStructs`, `createDeleteSetFromStructStore`):
 * - a deleted item whose parents are all there keeps its place and ids; its content becomes a deletion of
 *   its length (`ContentDeleted`). An item under a deleted type (at any depth), or one that could not be
 *   placed (its parent or a neighbour collected), becomes a collected struct (`GC`);
 * - a map key's entries are all deleted but its last (a later entry deletes the one before it);
 * - each client's structs, in clock order, merge with the one before them when Yjs's `mergeWith` would:
 *   both collected; or the same kind of mergeable content (text, JSON, any, a deletion), deleted alike,
 *   the right one's origin the left one's last id, the left one's right neighbour in its list, the same
 *   right origin;
 * - clients highest id first, the delete set from the structs (collected ones count as deleted).
 *
 * Content is copied from the update's bytes as it was written: for states Yjs wrote, that is what Yjs
 * writes again (`flat-collect.test.ts` compares byte for byte with Yjs's encoding over concurrent
 * histories). A struct cut where something references its middle is written in its pieces, a string cut
 * inside a surrogate pair with Yjs's replacement characters.
 */
import { BITS5, Reader, skipContent, Writer } from './update-work.ts'

/** What flat-read's rows give the encoder (all rows of one client consecutive, in clock order). */
export type CollectRows = {
  bytes: Uint8Array
  clientIds: readonly number[]
  /** Per client index: its first row and one past its last. */
  clientRows: Int32Array
  /** Per struct: its client index, length, content kind, and where its content starts in `bytes`. */
  structClient: Int32Array
  structLength: Int32Array
  kind: Uint8Array
  contentAt: Int32Array
  /** Per row. */
  rowClock: Int32Array
  rowLength: Int32Array
  rowStruct: Int32Array
  rowOffset: Int32Array
  right: Int32Array
  origin: Int32Array
  rightOrigin: Int32Array
  parent: Int32Array
  sub: Int32Array
  flags: Uint8Array
  names: readonly string[]
  /** Each map key's entries: the first row of its chain and the last (the value). */
  keyChains: Iterable<readonly [first: number, last: number]>
  /** A string row's text as Yjs holds it once cut (flat-read's `pieceText`). */
  pieceText(row: number): string
}

export type Collected = { state: Uint8Array; vector: Uint8Array }

const NONE = -1
const IS_DELETED = 1
const IS_GC = 2

const GC = 0
const DELETED = 1
const JSON_CONTENT = 2
const STRING = 4
const ANY = 8

/** A row's fate in the encoding. */
const KEEP = 0
const GONE = 1 // ContentDeleted
const COLLECTED = 2 // GC

/** The state Yjs would encode for these rows applied to an empty document, and its state vector. */
export function encodeCollected(rows: CollectRows): Collected {
  const fate = fatesOf(rows)
  const out = new Writer(rows.bytes.byteLength + 64)
  const reader = new Reader(rows.bytes)
  const order = Array.from(rows.clientIds.keys()).sort((a, b) => rows.clientIds[b]! - rows.clientIds[a]!)
  out.varUint(order.length)
  for (const g of order) {
    const first = rows.clientRows[2 * g]!
    const end = rows.clientRows[2 * g + 1]!
    // Its structs counted (the runs that merge), then written.
    let structs = 0
    for (let row = first; row < end; row++)
      if (row === first || !mergeable(rows, fate, row - 1, row)) structs++
    out.varUint(structs)
    out.varUint(rows.clientIds[g]!)
    out.varUint(rows.rowClock[first]!)
    for (let a = first; a < end; ) {
      let b = a
      while (b + 1 < end && mergeable(rows, fate, b, b + 1)) b++
      writeRun(rows, fate, out, reader, a, b)
      a = b + 1
    }
  }
  // The delete set: each client's runs of rows not kept, highest client first.
  const deleted: Array<{ client: number; ranges: number[] }> = []
  for (const g of order) {
    const ranges: number[] = []
    const end = rows.clientRows[2 * g + 1]!
    for (let row = rows.clientRows[2 * g]!; row < end; row++) {
      if (fate[row] === KEEP) continue
      const clock = rows.rowClock[row]!
      let length = rows.rowLength[row]!
      while (row + 1 < end && fate[row + 1] !== KEEP) length += rows.rowLength[++row]!
      ranges.push(clock, length)
    }
    if (ranges.length > 0) deleted.push({ client: rows.clientIds[g]!, ranges })
  }
  out.varUint(deleted.length)
  for (const { client, ranges } of deleted) {
    out.varUint(client)
    out.varUint(ranges.length / 2)
    for (const value of ranges) out.varUint(value)
  }
  const vector = new Writer(16 * order.length + 8)
  vector.varUint(order.length)
  for (const g of order) {
    const last = rows.clientRows[2 * g + 1]! - 1
    vector.varUint(rows.clientIds[g]!)
    vector.varUint(rows.rowClock[last]! + rows.rowLength[last]!)
  }
  return { state: out.done(), vector: vector.done() }
}

/** KEEP, GONE (content deleted) or COLLECTED for every row, as Yjs's collection leaves it. */
function fatesOf(rows: CollectRows): Uint8Array {
  const count = rows.rowStruct.length
  const fate = new Uint8Array(count)
  for (let row = 0; row < count; row++) {
    const kind = rows.kind[rows.rowStruct[row]!]!
    const flags = rows.flags[row]!
    if (flags & IS_GC || kind === GC) fate[row] = COLLECTED
    else if (flags & IS_DELETED || kind === DELETED) fate[row] = GONE
  }
  // A map key's earlier entries are deleted by the later ones (each as a whole item: flat-read gives up
  // where that is not the struct); the last one's pieces are not.
  for (const [first, last] of rows.keyChains) {
    const value = rows.rowStruct[last]!
    for (let row = first; row !== NONE; row = rows.right[row]!)
      if (rows.rowStruct[row] !== value && fate[row] === KEEP) fate[row] = GONE
  }
  // Under a deleted type, at any depth: collected. Per type row, whether it or a parent of it is gone
  // (0 not known yet, 1 no, 2 yes), resolved up the parents once each.
  const gone = new Uint8Array(count)
  const chain: number[] = []
  const isGone = (type: number): boolean => {
    let at = type
    while (at >= 0 && gone[at] === 0) {
      if (fate[at] !== KEEP) {
        gone[at] = 2
        break
      }
      chain.push(at)
      at = rows.parent[at]!
    }
    const answer = at >= 0 ? gone[at]! : 1
    for (const row of chain) gone[row] = answer
    chain.length = 0
    return answer === 2
  }
  for (let row = 0; row < count; row++) {
    if (fate[row] === COLLECTED) continue
    const parent = rows.parent[row]!
    if (parent >= 0 && isGone(parent)) fate[row] = COLLECTED
  }
  return fate
}

/** Yjs's `mergeWith` between a client's consecutive rows `left` and `right` (after collection). */
function mergeable(rows: CollectRows, fate: Uint8Array, left: number, right: number): boolean {
  if (fate[left] !== fate[right]) return false
  if (fate[left] === COLLECTED) return true
  if (rows.origin[right] !== left || rows.right[left] !== right) return false
  if (rows.rightOrigin[left] !== rows.rightOrigin[right]) return false
  if (fate[left] === GONE) return true
  const kind = rows.kind[rows.rowStruct[left]!]!
  return (
    kind === rows.kind[rows.rowStruct[right]!] && (kind === STRING || kind === ANY || kind === JSON_CONTENT)
  )
}

/** Writes rows `a`…`b` (one merged run) as one struct. */
function writeRun(
  rows: CollectRows,
  fate: Uint8Array,
  out: Writer,
  reader: Reader,
  a: number,
  b: number,
): void {
  let length = 0
  for (let row = a; row <= b; row++) length += rows.rowLength[row]!
  if (fate[a] === COLLECTED) {
    out.byte(GC)
    out.varUint(length)
    return
  }
  const struct = rows.rowStruct[a]!
  const kind = fate[a] === GONE ? DELETED : rows.kind[struct]!
  const origin = rows.origin[a]!
  const rightOrigin = rows.rightOrigin[a]!
  const sub = rows.sub[a]!
  out.byte(
    (kind & BITS5) | (origin !== NONE ? 0x80 : 0) | (rightOrigin !== NONE ? 0x40 : 0) | (sub >= 0 ? 0x20 : 0),
  )
  if (origin !== NONE) {
    out.varUint(clientOf(rows, origin))
    out.varUint(rows.rowClock[origin]! + rows.rowLength[origin]! - 1)
  }
  if (rightOrigin !== NONE) {
    out.varUint(clientOf(rows, rightOrigin))
    out.varUint(rows.rowClock[rightOrigin]!)
  }
  if (origin === NONE && rightOrigin === NONE) {
    const parent = rows.parent[a]!
    if (parent < 0) {
      out.varUint(1)
      out.string(rows.names[-parent - 2]!)
    } else {
      out.varUint(0)
      out.varUint(clientOf(rows, parent))
      out.varUint(rows.rowClock[parent]!)
    }
    if (sub >= 0) out.string(rows.names[sub]!)
  }
  if (kind === DELETED) {
    out.varUint(length)
    return
  }
  // One whole struct: its content as written.
  if (a === b && rows.rowOffset[a] === 0 && rows.rowLength[a] === rows.structLength[struct]) {
    out.copy(rows.bytes, rows.contentAt[struct]!, contentEnd(rows, reader, struct))
    return
  }
  if (kind === STRING) {
    let text = ''
    for (let row = a; row <= b; row++) text += rows.pieceText(row)
    out.string(text)
    return
  }
  // Values of a list (any, JSON): the rows' values copied from their structs.
  out.varUint(length)
  for (let row = a; row <= b; row++) {
    reader.pos = rows.contentAt[rows.rowStruct[row]!]!
    reader.varUint()
    const skipValue = kind === ANY ? () => reader.skipAny() : () => reader.skipVarBytes()
    for (let k = rows.rowOffset[row]!; k > 0; k--) skipValue()
    const from = reader.pos
    for (let k = rows.rowLength[row]!; k > 0; k--) skipValue()
    out.copy(rows.bytes, from, reader.pos)
  }
}

function clientOf(rows: CollectRows, row: number): number {
  return rows.clientIds[rows.structClient[rows.rowStruct[row]!]!]!
}

/** Where struct `i`'s content ends in the bytes. */
function contentEnd(rows: CollectRows, reader: Reader, i: number): number {
  reader.pos = rows.contentAt[i]!
  skipContent(reader, rows.kind[i]!, false)
  return reader.pos
}
