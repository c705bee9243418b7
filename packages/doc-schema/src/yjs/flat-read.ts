/**
 * A document's top-level blocks read from its state's bytes into flat arrays, without a Y.Doc.
 *
 * Why: a Y.Doc costs ~290 bytes of heap an item (the Item, its ids, its content object), and applying a
 * state leaves about half as much again in garbage. At the item limit one decoded copy is ~100 MB and
 * its decoding ~55 MB more (issue 24), which every export, first screen and cold whole read of a large
 * document paid on the documents' worker beside the live copy. Here each struct is a row of typed arrays
 * (~50 bytes while integrating, ~21 kept after), its content left in the update's bytes and decoded only
 * when its block is read.
 *
 * What it does is what Yjs does when it applies the update to an empty document, in the same order:
 * - every struct is read (v1 encoding), and cut where a later reference needs a boundary (an origin's
 *   end, a right origin's start, a deleted range's ends), as Yjs cuts items while integrating: with the
 *   boundaries made first, every reference names a whole row;
 * - structs are integrated in Yjs's order (`integrateStructs`: highest client first, a struct whose
 *   origin, right origin or parent is not there yet waits on a stack for that client's structs), each by
 *   Yjs's rule (`Item.integrate`: the conflict loop over the items between its origins, ties broken by
 *   client id), a map entry replacing the one before it, an item next to a collected struct or under a
 *   missing parent collected itself;
 * - the delete set marks rows deleted;
 * - blocks are read as `yBlockForRender` reads a Y element (read-y.ts `yElementToJSON`, Yjs's
 *   `toDelta` for text: a run ends at every visible format change; attributes in the order their keys
 *   first appeared), and a block nested past MAX_NESTING_DEPTH is the same placeholder.
 *
 * With `collect`, it also writes the state back as Yjs would encode it once applied (flat-collect.ts), for
 * a compaction on the documents' worker, before what integrating needed is let go.
 *
 * Anything it does not read the way Yjs would gives up (null, and the caller decodes with Yjs): a Skip, a
 * client written twice, a struct whose dependency is not in the update (Yjs would keep it pending), a
 * type or document as a map value, bytes that are not a v1 update. `flat-read.test.ts` compares the
 * blocks with Yjs's for random concurrent edits of every content kind.
 */
import type { DocNode } from '../doc-json.ts'
import { MAX_NESTING_DEPTH } from '../limits.ts'
import type { BlockChild, BlockSource } from '../markdown/block-prefix.ts'
import { TOO_DEEP_NODE } from '../markdown/render-depth.ts'
import { type Collected, encodeCollected } from './flat-collect.ts'
import { marksOf } from './read-y.ts'
import { type DeltaOp, ELEMENT, OTHER, TEXT, type TreeSource } from './tree-source.ts'
import { BITS5, Malformed, Reader, readAny, skipContent, skipStruct, Writer } from './update-work.ts'

/** The update is not one this reads as Yjs would: the caller decodes it with Yjs. */
class Unreadable extends Error {}

const BIT6 = 32
const BIT7 = 64
const BIT8 = 128

// Content kinds (the low five bits of a struct's info byte); 0 is a GC struct.
const GC = 0
const DELETED = 1
const JSON_CONTENT = 2
const BINARY = 3
const STRING = 4
const EMBED = 5
const FORMAT = 6
const TYPE = 7
const ANY = 8
const DOC = 9

// Type kinds of a ContentType (Yjs's typeRefs).
const XML_ELEMENT = 3
const XML_TEXT = 6

// Row flags.
const IS_DELETED = 1
const IS_GC = 2

const NONE = -1
/** Rows keep clocks, lengths and offsets in 32 bits. */
const MAX_ROW_LENGTH = 0x7fffffff

const decoder = new TextDecoder()

/** What a delta operation of an embed or a type inserts here: not text (its value is never read). */
const NOT_TEXT = Object.freeze({})

/** A state read flat: its top-level elements as render JSON, in order. */
export type FlatDocument = {
  /** Each top-level element as `yBlockForRender` gives it (TOO_DEEP_NODE past the nesting ceiling). */
  blocks(): Generator<DocNode>
  /**
   * The top level's content in order, as the fragment's `toArray` and `slice` count it: an element (its
   * name) or other content (`name` null), each `length` entries long (a string's characters; 1 for a type).
   */
  topLevel(): Generator<FlatItem>
  /** `yElementToJSON` of a top-level element. */
  json(item: FlatItem): DocNode
  /** Its attribute `key` as Yjs's `getAttribute` gives it (undefined when not set or deleted). */
  attribute(item: FlatItem, key: string): unknown
  /** Its elements plus the characters of its texts (first-screen.ts `workOf`), null once past `budget`. */
  work(item: FlatItem, budget: number): number | null
  /** Its elements' rows as a block's start is read (markdown/block-prefix.ts), for bounded reads. */
  readonly blockSource: BlockSource<number>
  /**
   * Its rows as the walks that describe a document read them (tree-source.ts: section revs and sizes,
   * plain text); a top-level item's `row` is its node. Content that is not a type is the node -1.
   */
  readonly tree: TreeSource<number>
  /** Rows read (structs and the pieces they were cut into): what the arrays hold. */
  readonly rows: number
  /**
   * Read with `collect`: the state as Yjs would encode it once applied to an empty document (deleted
   * content collected, structs merged: flat-collect.ts), and its state vector.
   */
  readonly collected?: Collected
}

/** One entry of the top level (`FlatDocument.topLevel`). */
export type FlatItem = { readonly row: number; readonly name: string | null; readonly length: number }

/**
 * The state `update` (one v1 update, e.g. a merged snapshot and log) read flat, its blocks those of the
 * root type `root`; null when it is not read here (see above).
 */
export function readFlat(
  update: Uint8Array,
  root: string,
  options: { collect?: boolean } = {},
): FlatDocument | null {
  try {
    return new FlatState(update, root, options.collect === true)
  } catch (error) {
    if (error instanceof Malformed || error instanceof Unreadable) return null
    throw error
  }
}

/**
 * The top level's nodes as `FlatDocument.tree` reads them, in order: an element's row, -1 for other content
 * (what the walks over a `TreeSource` take as a document's top level).
 */
export function* flatTopLevel(flat: FlatDocument): Generator<number> {
  for (const item of flat.topLevel()) yield item.name !== null ? item.row : -1
}

/** A client not in the update, where a reference names one (Yjs would wait for it). */
const ABSENT = -3
/** Clocks and lengths are kept in 32 bits; a cut's key is its client's index times this, plus its clock. */
const CLIENT_SPAN = 2 ** 32

/**
 * Per struct, as read (typed arrays of the update's struct count): its client (an index into the update's
 * clients), clock and length, content kind and where its content starts; its origin, right origin and
 * parent (a client index or NONE / ABSENT, and a clock); a root parent's name or a map key (indices into
 * `names`).
 */
type Structs = {
  client: Int32Array
  clock: Int32Array
  length: Int32Array
  kind: Uint8Array
  originClient: Int32Array
  originClock: Int32Array
  rightClient: Int32Array
  rightClock: Int32Array
  /** NONE: inherited from its neighbours; ≥ 0: a root type's name; -2: an item's id (parentClient, parentClock). */
  parentRoot: Int32Array
  parentClient: Int32Array
  parentClock: Int32Array
  sub: Int32Array
  content: Int32Array
}

class FlatState implements FlatDocument {
  private readonly bytes: Uint8Array
  private readonly names: string[] = []
  private readonly nameIndex = new Map<string, number>()
  /** The update's clients, in its order: their ids, and each one's structs and rows as [first, end). */
  private readonly clientIds: number[] = []
  private readonly clientIndex = new Map<number, number>()
  private clientStructs!: Int32Array
  private clientRows!: Int32Array
  private s!: Structs
  /** Each struct's content kind and where its content starts, kept for reading blocks (`s` is let go). */
  private kindOf!: Uint8Array
  private contentAt!: Int32Array
  /** First row of each struct (and one past the last at the end). */
  private firstRow!: Int32Array
  // Rows.
  readonly rows: number
  private rowClock!: Int32Array
  private rowLength!: Int32Array
  private rowStruct!: Int32Array
  /** Offset of the row within its struct's content (units of a string, values of a list). */
  private rowOffset!: Int32Array
  private left!: Int32Array
  private right!: Int32Array
  private origin!: Int32Array
  private rightOrigin!: Int32Array
  /** The row's parent: a type's row (≥ 0), a root as -(index + 2), or NONE. */
  private parent!: Int32Array
  private sub!: Int32Array
  /** A type's first child row. */
  private start!: Int32Array
  private flags!: Uint8Array
  /** Roots' first child rows, by name index. */
  private readonly rootStart = new Map<number, number>()
  /** Map entries: `${parent} ${key}` → the first and the current (last) row of the key's chain. */
  private readonly keyFirst = new Map<string, number>()
  private readonly keyLast = new Map<string, number>()
  /** Each type's keys in the order they first appeared. */
  private readonly keysOf = new Map<number, number[]>()
  private readonly rootName: number
  readonly collected?: Collected

  constructor(
    update: Uint8Array,
    root: string,
    /** Encode the collected state too (`collected`), before what integrating needed is let go. */
    private readonly collect = false,
  ) {
    this.bytes = update
    const { structs, ranges } = this.countStructs()
    const allocate = () => new Int32Array(structs)
    this.s = {
      client: allocate(),
      clock: allocate(),
      length: allocate(),
      kind: new Uint8Array(structs),
      originClient: allocate(),
      originClock: allocate(),
      rightClient: allocate(),
      rightClock: allocate(),
      parentRoot: allocate(),
      parentClient: allocate(),
      parentClock: allocate(),
      sub: allocate(),
      content: allocate(),
    }
    // Where a reference needs a row to end or start: two per struct at most, and two per deleted range.
    const cuts = new Float64Array(2 * structs + 2 * ranges)
    let cutCount = 0
    const cut = (client: number, clock: number) => {
      if (client >= 0 && clock <= MAX_ROW_LENGTH) cuts[cutCount++] = client * CLIENT_SPAN + clock
    }
    const reader = new Reader(update)
    this.readStructs(reader, cut)
    const deletes = this.readDeleteSet(reader, cut, ranges)
    const sorted = cuts.subarray(0, cutCount).sort()
    this.rows = this.makeRows(sorted, false)
    this.makeRows(sorted, true)
    this.rootName = this.nameOf(root)
    this.kindOf = this.s.kind
    this.contentAt = this.s.content
    this.integrateAll()
    for (let i = 0; i < deletes.length; i += 3)
      this.markDeleted(deletes[i]!, deletes[i + 1]!, deletes[i + 2]!)
    if (collect) this.collected = this.encodeCollected()
    // What only integrating needed is let go: reading the blocks needs each row's place in its struct, its
    // right neighbour, a type's first child and the flags (~21 bytes a row).
    const none = new Int32Array(0)
    this.s = {
      ...this.s,
      client: none,
      clock: none,
      length: none,
      originClient: none,
      originClock: none,
      rightClient: none,
      rightClock: none,
      parentRoot: none,
      parentClient: none,
      parentClock: none,
      sub: none,
    }
    this.rowClock = none
    this.left = none
    this.origin = none
    this.rightOrigin = none
    this.parent = none
    this.sub = none
    this.firstRow = none
  }

  private nameOf(name: string): number {
    let index = this.nameIndex.get(name)
    if (index === undefined) {
      index = this.names.length
      this.names.push(name)
      this.nameIndex.set(name, index)
    }
    return index
  }

  private varString(reader: Reader): string {
    const length = reader.varUint()
    const start = reader.pos
    reader.skip(length)
    return decoder.decode(this.bytes.subarray(start, reader.pos))
  }

  /** A first pass: the structs and deleted ranges the update holds, and its clients in order. */
  private countStructs(): { structs: number; ranges: number } {
    const reader = new Reader(this.bytes)
    let structs = 0
    const groups = reader.varUint()
    for (let g = 0; g < groups; g++) {
      const count = reader.varUint()
      const client = reader.varUint()
      reader.varUint()
      if (this.clientIndex.has(client)) throw new Unreadable('a client written twice')
      this.clientIndex.set(client, g)
      this.clientIds.push(client)
      structs += count
      for (let i = 0; i < count; i++) skipStruct(reader, false)
    }
    let ranges = 0
    const clients = reader.varUint()
    for (let c = 0; c < clients; c++) {
      reader.varUint()
      const count = reader.varUint()
      ranges += count
      for (let i = 0; i < count; i++) {
        reader.varUint()
        reader.varUint()
      }
    }
    this.clientStructs = new Int32Array(2 * groups)
    this.clientRows = new Int32Array(2 * groups)
    return { structs, ranges }
  }

  /** A client's index in the update, ABSENT when it has no structs there. */
  private indexOf(client: number): number {
    return this.clientIndex.get(client) ?? ABSENT
  }

  /** Every struct's header, its content skipped (its length counted); the cuts its references need. */
  private readStructs(reader: Reader, cut: (client: number, clock: number) => void): void {
    const s = this.s
    let si = 0
    const groups = reader.varUint()
    for (let g = 0; g < groups; g++) {
      const count = reader.varUint()
      reader.varUint() // the client, indexed by the first pass
      let clock = reader.varUint()
      this.clientStructs[2 * g] = si
      for (let i = 0; i < count; i++, si++) {
        const info = reader.byte()
        const kind = info & BITS5
        s.client[si] = g
        s.clock[si] = clock
        s.kind[si] = kind
        s.originClient[si] = NONE
        s.rightClient[si] = NONE
        s.parentRoot[si] = NONE
        s.parentClient[si] = NONE
        s.sub[si] = NONE
        let length: number
        if (kind === GC) length = reader.varUint()
        else {
          if (kind === 10) throw new Unreadable('a Skip')
          if (info & BIT8) {
            s.originClient[si] = this.indexOf(reader.varUint())
            s.originClock[si] = clockOf(reader.varUint())
            cut(s.originClient[si]!, s.originClock[si]! + 1)
          }
          if (info & BIT7) {
            s.rightClient[si] = this.indexOf(reader.varUint())
            s.rightClock[si] = clockOf(reader.varUint())
            cut(s.rightClient[si]!, s.rightClock[si]!)
          }
          if ((info & (BIT7 | BIT8)) === 0) {
            if (reader.varUint() === 1) s.parentRoot[si] = this.nameOf(this.varString(reader))
            else {
              s.parentRoot[si] = -2
              s.parentClient[si] = this.indexOf(reader.varUint())
              s.parentClock[si] = clockOf(reader.varUint())
            }
            if (info & BIT6) s.sub[si] = this.nameOf(this.varString(reader))
          }
          s.content[si] = reader.pos
          length = skipContent(reader, kind)
          if (s.sub[si]! >= 0 && (kind === TYPE || kind === DOC))
            throw new Unreadable('a type as a map value')
        }
        s.length[si] = clockOf(length)
        clock = clockOf(clock + length)
      }
      this.clientStructs[2 * g + 1] = si
    }
  }

  /** The delete set's ranges as client index, clock, length triples; their ends cut. */
  private readDeleteSet(
    reader: Reader,
    cut: (client: number, clock: number) => void,
    count: number,
  ): Float64Array {
    const ranges = new Float64Array(3 * count)
    let at = 0
    const clients = reader.varUint()
    for (let c = 0; c < clients; c++) {
      const client = this.indexOf(reader.varUint())
      const n = reader.varUint()
      for (let i = 0; i < n; i++) {
        const clock = reader.varUint()
        const length = reader.varUint()
        cut(client, clock)
        cut(client, clock + length)
        ranges[at++] = client
        ranges[at++] = clock
        ranges[at++] = length
      }
    }
    return ranges
  }

  /**
   * The structs cut into rows at `cuts` (sorted keys): counted (`fill` false, returns how many), or made.
   * A client's rows are consecutive and in clock order, as its structs are in the update.
   */
  private makeRows(cuts: Float64Array, fill: boolean): number {
    const s = this.s
    if (fill) {
      const rows = this.rows
      this.firstRow = new Int32Array(s.client.length + 1)
      this.rowClock = new Int32Array(rows)
      this.rowLength = new Int32Array(rows)
      this.rowStruct = new Int32Array(rows)
      this.rowOffset = new Int32Array(rows)
      this.left = new Int32Array(rows).fill(NONE)
      this.right = new Int32Array(rows).fill(NONE)
      this.origin = new Int32Array(rows).fill(NONE)
      this.rightOrigin = new Int32Array(rows).fill(NONE)
      this.parent = new Int32Array(rows).fill(NONE)
      this.sub = new Int32Array(rows).fill(NONE)
      this.start = new Int32Array(rows).fill(NONE)
      this.flags = new Uint8Array(rows)
    }
    let row = 0
    let at = 0
    for (let g = 0; g < this.clientIds.length; g++) {
      const base = g * CLIENT_SPAN
      if (fill) this.clientRows[2 * g] = row
      for (let i = this.clientStructs[2 * g]!; i < this.clientStructs[2 * g + 1]!; i++) {
        if (fill) this.firstRow[i] = row
        const from = s.clock[i]!
        const to = from + s.length[i]!
        while (at < cuts.length && cuts[at]! <= base + from) at++
        let pieceStart = from
        for (;;) {
          while (at < cuts.length && cuts[at]! <= base + pieceStart) at++
          const next = at < cuts.length && cuts[at]! < base + to ? cuts[at]! - base : to
          if (fill) {
            this.rowClock[row] = pieceStart
            this.rowLength[row] = next - pieceStart
            this.rowStruct[row] = i
            this.rowOffset[row] = pieceStart - from
          }
          row++
          if (next === to) break
          pieceStart = next
        }
      }
      if (fill) this.clientRows[2 * g + 1] = row
    }
    if (fill) this.firstRow[s.client.length] = row
    return row
  }

  /** The row of client index `client` holding `clock`, or NONE. */
  private rowAt(client: number, clock: number): number {
    if (client < 0) return NONE
    let low = this.clientRows[2 * client]!
    let high = this.clientRows[2 * client + 1]! - 1
    while (low <= high) {
      const mid = (low + high) >>> 1
      const start = this.rowClock[mid]!
      if (clock < start) high = mid - 1
      else if (clock >= start + this.rowLength[mid]!) low = mid + 1
      else return mid
    }
    return NONE
  }

  /** Yjs's `integrateStructs` over the whole update, into an empty document. */
  private integrateAll(): void {
    const s = this.s
    const clients = this.clientIds.length
    /** Each client's clock integrated so far (Yjs's state), and its next struct. */
    const state = new Float64Array(clients)
    const next = new Int32Array(clients)
    for (let g = 0; g < clients; g++) next[g] = this.clientStructs[2 * g]!
    const endOf = (g: number) => this.clientStructs[2 * g + 1]!
    // Highest client id first, as Yjs takes them.
    const order = Array.from({ length: clients }, (_, g) => g).sort(
      (a, b) => this.clientIds[a]! - this.clientIds[b]!,
    )
    const nextTarget = () => {
      while (order.length > 0) {
        const g = order[order.length - 1]!
        if (next[g]! < endOf(g)) return g
        order.pop()
      }
      return NONE
    }
    let current = nextTarget()
    if (current === NONE) return
    let head = next[current]!++
    const stack: number[] = []
    /** Yjs's `getMissing`: a client another client's struct it names is not integrated from yet. */
    const missingOf = (i: number): number => {
      const client = s.client[i]!
      const needs = (other: number, clock: number) =>
        other === ABSENT || (other >= 0 && other !== client && clock >= state[other]!)
      if (needs(s.originClient[i]!, s.originClock[i]!)) return s.originClient[i]!
      if (needs(s.rightClient[i]!, s.rightClock[i]!)) return s.rightClient[i]!
      if (s.parentRoot[i] === -2 && needs(s.parentClient[i]!, s.parentClock[i]!)) return s.parentClient[i]!
      return NONE
    }
    for (;;) {
      const client = s.client[head]!
      const offset = state[client]! - s.clock[head]!
      if (offset < 0) throw new Unreadable('a gap in a client’s clocks')
      const missing = missingOf(head)
      if (missing !== NONE) {
        stack.push(head)
        if (missing === ABSENT || next[missing]! === endOf(missing))
          throw new Unreadable('a dependency not in the update')
        head = next[missing]!++
        continue
      }
      if (offset === 0) {
        this.integrate(head)
        state[client] = s.clock[head]! + s.length[head]!
      } else if (offset < s.length[head]!) throw new Unreadable('structs that overlap')
      const popped = stack.pop()
      if (popped !== undefined) head = popped
      else if (current !== NONE && next[current]! < endOf(current)) head = next[current]!++
      else {
        current = nextTarget()
        if (current === NONE) break
        head = next[current]!++
      }
    }
  }

  /** The row of `client` holding `clock`, integrated before struct `i` (a reference of it); else unreadable. */
  private referenced(i: number, client: number, clock: number): number {
    const row = this.rowAt(client, clock)
    if (row === NONE || (client === this.s.client[i] && this.rowStruct[row]! >= i))
      throw new Unreadable('a reference to nothing before it')
    return row
  }

  private isCollected(row: number): boolean {
    return (this.flags[row]! & IS_GC) !== 0
  }

  private keyOf(parent: number, sub: number): string {
    return `${parent} ${sub}`
  }

  /** Yjs's `Item.getMissing` (its references resolved) and `Item.integrate`, for struct `i`'s rows. */
  private integrate(i: number): void {
    const s = this.s
    const first = this.firstRow[i]!
    const end = this.firstRow[i + 1]!
    const kind = s.kind[i]!
    if (kind === GC) {
      for (let row = first; row < end; row++) this.flags[row]! |= IS_GC
      return
    }
    const client = this.clientIds[s.client[i]!]!
    let left = s.originClient[i]! >= 0 ? this.referenced(i, s.originClient[i]!, s.originClock[i]!) : NONE
    const right = s.rightClient[i]! >= 0 ? this.referenced(i, s.rightClient[i]!, s.rightClock[i]!) : NONE
    let parent = NONE
    let sub = s.sub[i]!
    if ((left !== NONE && this.isCollected(left)) || (right !== NONE && this.isCollected(right)))
      parent = NONE
    else if (s.parentRoot[i] === -1) {
      const from = left !== NONE ? left : right
      if (from !== NONE) {
        parent = this.parent[from]!
        sub = this.sub[from]!
      }
    } else if (s.parentRoot[i] === -2) {
      const item = this.referenced(i, s.parentClient[i]!, s.parentClock[i]!)
      // An item whose parent is collected, or not a type, is collected (Yjs: its parent is then unset).
      if (!this.isCollected(item) && s.kind[this.rowStruct[item]!] === TYPE) parent = item
    } else parent = -(s.parentRoot[i]! + 2)
    if (parent === NONE) {
      for (let row = first; row < end; row++) this.flags[row]! |= IS_GC
      return
    }
    const origin = left
    // The conflict loop: between its origins, where the item goes among those integrated concurrently.
    if (
      (left === NONE && (right === NONE || this.left[right] !== NONE)) ||
      (left !== NONE && this.right[left] !== right)
    ) {
      let o: number
      if (left !== NONE) o = this.right[left]!
      else if (sub >= 0) o = this.keyFirst.get(this.keyOf(parent, sub)) ?? NONE
      else o = this.startOf(parent)
      const conflicting = new Set<number>()
      const before = new Set<number>()
      while (o !== NONE && o !== right) {
        before.add(o)
        conflicting.add(o)
        const theirs = this.origin[o]!
        if (origin === theirs) {
          if (this.clientIds[s.client[this.rowStruct[o]!]!]! < client) {
            left = o
            conflicting.clear()
          } else if (right === this.rightOrigin[o]) break
        } else if (theirs !== NONE && before.has(theirs)) {
          if (!conflicting.has(theirs)) {
            left = o
            conflicting.clear()
          }
        } else break
        o = this.right[o]!
      }
    }
    // Linked: the first row where the loop says, the others after it, as the one item they were.
    let next: number
    if (left !== NONE) {
      next = this.right[left]!
      this.right[left] = first
    } else if (sub >= 0) {
      const key = this.keyOf(parent, sub)
      next = this.keyFirst.get(key) ?? NONE
      this.keyFirst.set(key, first)
    } else {
      next = this.startOf(parent)
      this.setStart(parent, first)
    }
    this.left[first] = left
    this.origin[first] = origin
    for (let row = first; row < end; row++) {
      if (row > first) {
        this.left[row] = row - 1
        this.right[row - 1] = row
        this.origin[row] = row - 1
      }
      this.rightOrigin[row] = right
      this.parent[row] = parent
      this.sub[row] = sub
    }
    // A map entry added last deletes the one before it as the item Yjs has then: when that entry was cut
    // into pieces (an entry of many values referenced inside), which pieces Yjs had joined is not kept
    // here; it matters only if some piece is not deleted anyway (`encodeCollected` checks).
    if (this.collect && sub >= 0 && next === NONE && left !== NONE) {
      const before = this.rowStruct[left]!
      if (this.firstRow[before + 1]! - this.firstRow[before]! > 1) this.replacedInPieces.push(before)
    }
    const last = end - 1
    this.right[last] = next
    // A map key's value is the last row of its chain (`keyLast`), shown unless deleted: Yjs also marks the
    // entries before it deleted, which nothing here reads.
    if (next !== NONE) this.left[next] = last
    else if (sub >= 0) {
      const key = this.keyOf(parent, sub)
      if (!this.keyLast.has(key)) {
        let keys = this.keysOf.get(parent)
        if (!keys) {
          keys = []
          this.keysOf.set(parent, keys)
        }
        keys.push(sub)
      }
      this.keyLast.set(key, last)
    }
    if (kind === DELETED) for (let row = first; row < end; row++) this.flags[row]! |= IS_DELETED
  }

  /** One past the last clock of client index `client`. */
  private endClock(client: number): number {
    const last = this.clientRows[2 * client + 1]! - 1
    return last < this.clientRows[2 * client]! ? 0 : this.rowClock[last]! + this.rowLength[last]!
  }

  /** Map entries in pieces that a later entry replaced (collect mode): see `integrate`. */
  private readonly replacedInPieces: number[] = []

  private encodeCollected(): Collected {
    for (const i of this.replacedInPieces)
      for (let row = this.firstRow[i]!; row < this.firstRow[i + 1]!; row++)
        if (!(this.flags[row]! & (IS_DELETED | IS_GC)) && this.s.kind[i] !== DELETED)
          throw new Unreadable('a map entry cut into pieces, then replaced')
    const chains: Array<readonly [number, number]> = []
    for (const [key, first] of this.keyFirst) chains.push([first, this.keyLast.get(key) ?? NONE])
    return encodeCollected({
      bytes: this.bytes,
      clientIds: this.clientIds,
      clientRows: this.clientRows,
      structClient: this.s.client,
      structLength: this.s.length,
      kind: this.s.kind,
      contentAt: this.s.content,
      rowClock: this.rowClock,
      rowLength: this.rowLength,
      rowStruct: this.rowStruct,
      rowOffset: this.rowOffset,
      right: this.right,
      origin: this.origin,
      rightOrigin: this.rightOrigin,
      parent: this.parent,
      sub: this.sub,
      flags: this.flags,
      names: this.names,
      keyChains: chains,
      pieceText: (row) => this.pieceText(row),
    })
  }

  private startOf(parent: number): number {
    return parent >= 0 ? this.start[parent]! : (this.rootStart.get(-parent - 2) ?? NONE)
  }

  private setStart(parent: number, row: number): void {
    if (parent >= 0) this.start[parent] = row
    else this.rootStart.set(-parent - 2, row)
  }

  /** A deleted range: its rows (cut at its ends) marked deleted. */
  private markDeleted(client: number, clock: number, length: number): void {
    // Past what the update holds, Yjs keeps the range pending and writes it again: not encoded here.
    if (this.collect && length > 0 && (client < 0 || this.endClock(client) < clock + length))
      throw new Unreadable('a deletion of what the update does not hold')
    let row = this.rowAt(client, clock)
    if (row === NONE) return
    const end = this.clientRows[2 * client + 1]!
    for (; row < end && this.rowClock[row]! < clock + length; row++) this.flags[row]! |= IS_DELETED
  }

  /** Whether a row is content a reader sees: integrated, not deleted, counted (not a deletion or a format). */
  private shown(row: number): boolean {
    if (this.flags[row]! & (IS_DELETED | IS_GC)) return false
    const kind = this.kindOf[this.rowStruct[row]!]!
    return kind !== DELETED && kind !== FORMAT
  }

  private lastTypeRow = -1
  private lastType: { readonly ref: number; readonly name: string } = { ref: 0, name: '' }

  /** A type row's kind (XML_ELEMENT, XML_TEXT, …) and, for an element, its name. */
  private typeOf(row: number): { readonly ref: number; readonly name: string } {
    // The walks ask a node's kind, then its name: the last answer is kept, not read from the bytes again.
    if (row === this.lastTypeRow) return this.lastType
    const reader = new Reader(this.bytes)
    reader.pos = this.contentAt[this.rowStruct[row]!]!
    const ref = reader.varUint()
    this.lastType = { ref, name: ref === XML_ELEMENT || ref === 5 ? this.varString(reader) : '' }
    this.lastTypeRow = row
    return this.lastType
  }

  *blocks(): Generator<DocNode> {
    for (const item of this.topLevel())
      if (item.name !== null) yield this.tooDeep(item.row) ? TOO_DEEP_NODE : this.json(item)
  }

  *topLevel(): Generator<FlatItem> {
    const root = -(this.rootName + 2)
    for (let row = this.startOf(root); row !== NONE; row = this.right[row]!) {
      if (!this.shown(row)) continue
      if (this.kindOf[this.rowStruct[row]!] !== TYPE) yield { row, name: null, length: this.rowLength[row]! }
      else {
        const type = this.typeOf(row)
        yield { row, name: type.ref === XML_ELEMENT ? type.name : null, length: 1 }
      }
    }
  }

  readonly blockSource: BlockSource<number> = {
    tooDeep: (row) => this.tooDeep(row),
    shallow: (row) => this.shallow(row, this.typeOf(row).name),
    children: (row) => {
      const children: Array<BlockChild<number>> = []
      for (let child = this.start[row]!; child !== NONE; child = this.right[child]!) {
        if (!this.shown(child)) continue
        if (this.kindOf[this.rowStruct[child]!] !== TYPE) {
          // Yjs's `toArray` gives each character of a string, each value of a list: one entry each.
          for (let k = this.rowLength[child]!; k > 0; k--) children.push(null)
          continue
        }
        const ref = this.typeOf(child).ref
        children.push(
          ref === XML_ELEMENT
            ? { element: child }
            : ref === XML_TEXT
              ? { runs: () => this.textJSON(child) }
              : null,
        )
      }
      return children
    },
    name: (row) => this.typeOf(row).name,
    entries: (row) => {
      let entries = 0
      for (let child = this.start[row]!; child !== NONE; child = this.right[child]!)
        if (this.shown(child)) entries += this.rowLength[child]!
      return entries
    },
  }

  readonly tree: TreeSource<number> = {
    kind: (row) => {
      if (row < 0 || this.kindOf[this.rowStruct[row]!] !== TYPE) return OTHER
      const ref = this.typeOf(row).ref
      return ref === XML_ELEMENT ? ELEMENT : ref === XML_TEXT ? TEXT : OTHER
    },
    name: (row) => this.typeOf(row).name,
    attributes: (row) => this.shallow(row, '').attrs ?? {},
    attribute: (row, key) => this.attributeOf(row, key),
    children: (row) => {
      const children: number[] = []
      for (let child = this.start[row]!; child !== NONE; child = this.right[child]!) {
        if (!this.shown(child)) continue
        if (this.kindOf[this.rowStruct[child]!] === TYPE) children.push(child)
        else for (let k = this.rowLength[child]!; k > 0; k--) children.push(-1)
      }
      return children
    },
    delta: (row) => this.textDelta(row),
  }

  json(item: FlatItem): DocNode {
    return this.elementJSON(item.row, item.name ?? '')
  }

  attribute(item: FlatItem, key: string): unknown {
    return this.attributeOf(item.row, key)
  }

  /** The attribute `key` of the element at `row`, as Yjs's `getAttribute` gives it. */
  private attributeOf(row: number, key: string): unknown {
    const index = this.nameIndex.get(key)
    const value = index === undefined ? undefined : this.keyLast.get(this.keyOf(row, index))
    return value === undefined || this.flags[value]! & IS_DELETED ? undefined : this.lastValue(value)
  }

  work(item: FlatItem, budget: number): number | null {
    let work = 0
    const stack: Array<[number, number]> = [[item.row, XML_ELEMENT]]
    for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
      const [row, ref] = entry
      if (ref === XML_TEXT) {
        // Yjs's length of a text: what it counts of its content (characters, and 1 an embed).
        for (let child = this.start[row]!; child !== NONE; child = this.right[child]!)
          if (this.shown(child)) work += this.rowLength[child]!
      } else if (ref === XML_ELEMENT) {
        work += 1
        this.childElements(row, (child, childRef) => stack.push([child, childRef]))
      }
      if (work > budget) return null
    }
    return work
  }

  /** The element rows a reader sees under `row`, in order, with their names. */
  private childElements(row: number, visit: (child: number, ref: number, name: string) => void): void {
    for (let child = this.start[row]!; child !== NONE; child = this.right[child]!) {
      if (!this.shown(child) || this.kindOf[this.rowStruct[child]!] !== TYPE) continue
      const type = this.typeOf(child)
      visit(child, type.ref, type.name)
    }
  }

  /** `yElementTooDeep`: an element below `row` (level 1) deeper than MAX_NESTING_DEPTH. */
  private tooDeep(row: number): boolean {
    const stack: Array<[number, number]> = [[row, 1]]
    for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
      const [current, level] = entry
      if (level > MAX_NESTING_DEPTH) return true
      this.childElements(current, (child, ref) => {
        if (ref === XML_ELEMENT) stack.push([child, level + 1])
      })
    }
    return false
  }

  /** `yElementToJSON` of the element at `row`. */
  private elementJSON(row: number, name: string): DocNode {
    const root = this.shallow(row, name)
    const stack: Array<[number, DocNode]> = [[row, root]]
    for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
      const [current, node] = entry
      const content: DocNode[] = []
      this.childElements(current, (child, ref, childName) => {
        if (ref === XML_ELEMENT) {
          const childNode = this.shallow(child, childName)
          content.push(childNode)
          stack.push([child, childNode])
        } else if (ref === XML_TEXT) for (const text of this.textJSON(child)) content.push(text)
      })
      if (content.length > 0) node.content = content
    }
    return root
  }

  /** An element's type and attributes (Yjs's `getAttributes`: each key's value unless deleted). */
  private shallow(row: number, name: string): DocNode {
    const node: DocNode = { type: name }
    const keys = this.keysOf.get(row)
    if (!keys) return node
    const attrs: Record<string, unknown> = {}
    let any = false
    for (const key of keys) {
      const value = this.keyLast.get(this.keyOf(row, key))!
      if (this.flags[value]! & IS_DELETED) continue
      attrs[this.names[key]!] = this.lastValue(value)
      any = true
    }
    if (any) node.attrs = attrs
    return node
  }

  /** The last value a map entry's row holds (Yjs's `content.getContent()[length - 1]`). */
  private lastValue(row: number): unknown {
    const i = this.rowStruct[row]!
    const kind = this.kindOf[i]!
    const reader = new Reader(this.bytes)
    reader.pos = this.contentAt[i]!
    const index = this.rowOffset[row]! + this.rowLength[row]! - 1
    switch (kind) {
      case ANY: {
        reader.varUint()
        for (let k = 0; k < index; k++) reader.skipAny()
        return readAny(reader, this)
      }
      case JSON_CONTENT: {
        reader.varUint()
        for (let k = 0; k < index; k++) reader.skipVarBytes()
        const text = this.varString(reader)
        return text === 'undefined' ? undefined : JSON.parse(text)
      }
      case STRING:
        return this.pieceText(row).at(-1)
      case BINARY: {
        const length = reader.varUint()
        return this.bytes.slice(reader.pos, reader.pos + length)
      }
      case EMBED:
        return JSON.parse(this.varString(reader))
      default:
        // A format or a deletion as a map value: Yjs gives it no content.
        return undefined
    }
  }

  /** Yjs's `toDelta` read into text nodes (read-y.ts `yTextToJSON`). */
  private textJSON(row: number): DocNode[] {
    const nodes: DocNode[] = []
    for (const op of this.textDelta(row)) {
      if (typeof op.insert !== 'string') continue
      const node: DocNode = { type: 'text', text: op.insert }
      if (op.attributes) {
        const marks = marksOf(op.attributes)
        if (marks.length > 0) node.marks = marks
      }
      nodes.push(node)
    }
    return nodes
  }

  /**
   * Yjs's `toDelta` of the text at `row`: its strings packed into runs between format changes (a format
   * row packs even when it changes nothing, as Yjs's does), an embed or a type an operation of its own
   * (here a placeholder: the readers skip what is not a string).
   */
  private textDelta(row: number): DeltaOp[] {
    const ops: DeltaOp[] = []
    const current = new Map<string, unknown>()
    let text = ''
    const attributes = () => {
      const attributes: Record<string, unknown> = {}
      current.forEach((value, key) => {
        attributes[key] = value
      })
      return attributes
    }
    // Whole strings' UTF-8 bytes gathered and decoded once a run (a string an item, then joined, was ~50 MB
    // of garbage for a paragraph of 400,000 one-character items).
    const gathered = this.gathered
    gathered.reset()
    const flush = () => {
      if (gathered.size === 0) return
      text += decoder.decode(gathered.view())
      gathered.reset()
    }
    const pack = () => {
      flush()
      if (text.length === 0) return
      ops.push(current.size > 0 ? { insert: text, attributes: attributes() } : { insert: text })
      text = ''
    }
    const reader = new Reader(this.bytes)
    for (let item = this.start[row]!; item !== NONE; item = this.right[item]!) {
      if (this.flags[item]! & IS_DELETED) continue
      const i = this.rowStruct[item]!
      const kind = this.kindOf[i]!
      if (kind === STRING && this.wholeStruct(item)) {
        reader.pos = this.contentAt[i]!
        const length = reader.varUint()
        gathered.copy(this.bytes, reader.pos, reader.pos + length)
      } else if (kind === STRING) {
        flush()
        text += this.pieceText(item)
      } else if (kind === TYPE || kind === EMBED) {
        pack()
        ops.push(current.size > 0 ? { insert: NOT_TEXT, attributes: attributes() } : { insert: NOT_TEXT })
      } else if (kind === FORMAT) {
        pack()
        reader.pos = this.contentAt[i]!
        const key = this.varString(reader)
        const value = JSON.parse(this.varString(reader))
        if (value === null) current.delete(key)
        else current.set(key, value)
      }
    }
    pack()
    return ops
  }

  private lastStruct = -1
  private lastString = ''
  /** A text run's whole strings, as UTF-8 (`textDelta`). */
  private readonly gathered = new Writer(1024)

  /** Whether a row is its struct whole (not cut: a struct's rows are consecutive). */
  private wholeStruct(row: number): boolean {
    return (
      this.rowOffset[row] === 0 && (row + 1 >= this.rows || this.rowStruct[row + 1] !== this.rowStruct[row])
    )
  }

  /** A string row's text: its part of its struct's string, a cut surrogate pair replaced as Yjs does. */
  private pieceText(row: number): string {
    const i = this.rowStruct[row]!
    if (i !== this.lastStruct) {
      const reader = new Reader(this.bytes)
      reader.pos = this.contentAt[i]!
      this.lastString = this.varString(reader)
      this.lastStruct = i
    }
    const whole = this.lastString
    const from = this.rowOffset[row]!
    const to = from + this.rowLength[row]!
    if (from === 0 && to === whole.length) return whole
    let text = whole.slice(from, to)
    if (from > 0 && isHighSurrogate(whole.charCodeAt(from - 1))) text = `\uFFFD${text.slice(1)}`
    if (to < whole.length && isHighSurrogate(whole.charCodeAt(to - 1))) text = `${text.slice(0, -1)}\uFFFD`
    return text
  }

  /** A varstring at the reader (for readAny). */
  readString(reader: Reader): string {
    return this.varString(reader)
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/** A clock or length kept in a row's 32 bits; past them the update is read by Yjs. */
function clockOf(value: number): number {
  if (value > MAX_ROW_LENGTH) throw new Unreadable('a clock past 32 bits')
  return value
}
