/**
 * An editor update's structs read into typed arrays, for the editor-update check (check-update.ts), instead
 * of Yjs's `decodeUpdate`, which builds an `Item`, its ids and its content object for every struct (with a
 * `YXmlElement` for each element it creates). The check needs each struct's id, length, origins, parent,
 * attribute key and what its content is, never a text's characters: a string's length is counted in the
 * bytes (`varStringUnits`) and the string is not built. Content that is not text (marks, types, attribute
 * values, embeds) is decoded here, as Yjs would, into a small record per struct; there are few of them.
 *
 * Why: the check decoded each update a second time beside the apply. At the item limit (two connections
 * typing 10,000 one-character items a message) that was ~0.3 s of the ~0.75 s the check took, and ~100 MB
 * of objects for the collector beside the live document (issue 24; `bun bench/attacks.ts items`).
 *
 * It reads what Yjs's `decodeUpdate` (v1) reads, in the same order, and refuses (`Malformed`) every update
 * Yjs's decoder throws on, and a few more (a string that is not UTF-8, which lib0 would replace or throw on
 * by its length). Its equality with Yjs's decoder is tested struct by struct (update-rows.test.ts).
 */
import { BITS5, Malformed, Reader, readAny, skipStruct } from './update-work.ts'

const BIT6 = 32
const BIT7 = 64
const BIT8 = 128

/** Content kinds (an item's info byte, low five bits), as Yjs numbers them. */
export const CONTENT = {
  deleted: 1,
  json: 2,
  binary: 3,
  string: 4,
  embed: 5,
  format: 6,
  type: 7,
  any: 8,
  doc: 9,
} as const

/** A struct's kind beside the item kinds: a GC struct or a Skip (neither an item). */
export const GC_ROW = 0
export const SKIP_ROW = 10

/** Yjs's type refs for the shared types an item can create. */
export const TYPE_REF = { array: 0, map: 1, text: 2, xmlElement: 3, xmlFragment: 4, xmlHook: 5, xmlText: 6 }

/** What an item that is not text holds, decoded (text holds nothing here: its length is the row's). */
export type RowContent =
  | { kind: typeof CONTENT.format; key: string; value: unknown }
  | { kind: typeof CONTENT.type; ref: number; name: string | null }
  | { kind: typeof CONTENT.any; values: unknown[] }
  | { kind: typeof CONTENT.json | typeof CONTENT.binary | typeof CONTENT.embed | typeof CONTENT.doc }

/** How an item names its parent: not at all (its neighbours' parent), a root type's name, or an item's id. */
export const PARENT = { inherited: 0, root: 1, item: 2 } as const

/** The structs of one update, in the order they are written. `NaN` stands for an absent id's parts. */
export type UpdateRows = {
  count: number
  /** GC_ROW, SKIP_ROW or a content kind (CONTENT). */
  kind: Uint8Array
  client: Float64Array
  clock: Float64Array
  /** In clock ticks (a string's UTF-16 length). */
  length: Float64Array
  originClient: Float64Array
  originClock: Float64Array
  rightClient: Float64Array
  rightClock: Float64Array
  parent: Uint8Array
  parentClient: Float64Array
  parentClock: Float64Array
  /** A root parent's name, by row (PARENT.root rows only). */
  rootName: Map<number, string>
  /** An item's attribute key (its parent sub), by row. */
  sub: Map<number, string>
  /** Content decoded, by row: items that are neither text nor deleted. */
  content: Map<number, RowContent>
  /** The delete set, as Yjs's `readDeleteSet` gives it. */
  deletes: Map<number, Array<{ clock: number; len: number }>>
}

const strictText = new TextDecoder('utf-8', { fatal: true })

function varString(reader: Reader): string {
  const length = reader.varUint()
  const at = reader.pos
  reader.skip(length)
  try {
    return strictText.decode(reader.bytes.subarray(at, at + length))
  } catch {
    throw new Malformed('string not UTF-8')
  }
}

const stringReader = { readString: varString }

/** lib0's JSON text, as Yjs reads a mark's value or an embed. */
function varJson(reader: Reader): unknown {
  try {
    return JSON.parse(varString(reader))
  } catch (error) {
    if (error instanceof Malformed) throw error
    throw new Malformed('value not JSON')
  }
}

/** Counts the structs of a v1 update (a first pass, so the arrays are allocated once). */
function countStructs(reader: Reader): number {
  let count = 0
  const groups = reader.varUint()
  for (let g = 0; g < groups; g++) {
    const structs = reader.varUint()
    reader.varUint()
    reader.varUint()
    for (let s = 0; s < structs; s++, count++) skipStruct(reader, false)
  }
  return count
}

/**
 * Reads an item's content of `kind`, returning its length in clock ticks; a decoded record for content
 * that is not text or deleted goes into `rows.content` under `row`.
 */
function readContent(reader: Reader, kind: number, rows: UpdateRows, row: number): number {
  switch (kind) {
    case CONTENT.deleted:
      return reader.varUint()
    case CONTENT.string:
      return reader.varStringUnits()
    case CONTENT.json: {
      const count = reader.varUint()
      for (let i = 0; i < count; i++) {
        const text = varString(reader)
        if (text !== 'undefined') {
          try {
            JSON.parse(text)
          } catch {
            throw new Malformed('value not JSON')
          }
        }
      }
      rows.content.set(row, { kind })
      return count
    }
    case CONTENT.binary:
      reader.skipVarBytes()
      rows.content.set(row, { kind })
      return 1
    case CONTENT.embed:
      varJson(reader)
      rows.content.set(row, { kind })
      return 1
    case CONTENT.format: {
      const key = varString(reader)
      const value = varJson(reader)
      rows.content.set(row, { kind, key, value })
      return 1
    }
    case CONTENT.type: {
      const ref = reader.varUint()
      if (ref > TYPE_REF.xmlText) throw new Malformed('unknown type')
      const name = ref === TYPE_REF.xmlElement || ref === TYPE_REF.xmlHook ? varString(reader) : null
      rows.content.set(row, { kind, ref, name })
      return 1
    }
    case CONTENT.any: {
      const count = reader.varUint()
      const values: unknown[] = []
      for (let i = 0; i < count; i++) values.push(readAny(reader, stringReader))
      rows.content.set(row, { kind, values })
      return count
    }
    case CONTENT.doc:
      varString(reader)
      readAny(reader, stringReader)
      rows.content.set(row, { kind })
      return 1
    default:
      throw new Malformed('unknown content kind')
  }
}

/** The structs and delete set of a v1 update; throws `Malformed` where Yjs's decoder would throw. */
export function readUpdateRows(update: Uint8Array): UpdateRows {
  const count = countStructs(new Reader(update))
  const float = () => new Float64Array(count).fill(Number.NaN)
  const rows: UpdateRows = {
    count,
    kind: new Uint8Array(count),
    client: new Float64Array(count),
    clock: new Float64Array(count),
    length: new Float64Array(count),
    originClient: float(),
    originClock: float(),
    rightClient: float(),
    rightClock: float(),
    parent: new Uint8Array(count),
    parentClient: float(),
    parentClock: float(),
    rootName: new Map(),
    sub: new Map(),
    content: new Map(),
    deletes: new Map(),
  }
  const reader = new Reader(update)
  let row = 0
  const groups = reader.varUint()
  for (let g = 0; g < groups; g++) {
    const structs = reader.varUint()
    const client = reader.varUint()
    let clock = reader.varUint()
    for (let s = 0; s < structs; s++, row++) {
      rows.client[row] = client
      rows.clock[row] = clock
      const info = reader.byte()
      let length: number
      if (info === SKIP_ROW) {
        rows.kind[row] = SKIP_ROW
        length = reader.varUint()
      } else if ((info & BITS5) === 0) {
        rows.kind[row] = GC_ROW
        length = reader.varUint()
      } else {
        const kind = info & BITS5
        rows.kind[row] = kind
        if (info & BIT8) {
          rows.originClient[row] = reader.varUint()
          rows.originClock[row] = reader.varUint()
        }
        if (info & BIT7) {
          rows.rightClient[row] = reader.varUint()
          rows.rightClock[row] = reader.varUint()
        }
        if ((info & (BIT7 | BIT8)) === 0) {
          if (reader.varUint() === 1) {
            rows.parent[row] = PARENT.root
            rows.rootName.set(row, varString(reader))
          } else {
            rows.parent[row] = PARENT.item
            rows.parentClient[row] = reader.varUint()
            rows.parentClock[row] = reader.varUint()
          }
          if (info & BIT6) rows.sub.set(row, varString(reader))
        }
        length = readContent(reader, kind, rows, row)
      }
      rows.length[row] = length
      clock += length
    }
  }
  const clients = reader.varUint()
  for (let c = 0; c < clients; c++) {
    const client = reader.varUint()
    const ranges = reader.varUint()
    if (ranges === 0) continue
    let list = rows.deletes.get(client)
    if (!list) {
      list = []
      rows.deletes.set(client, list)
    }
    for (let r = 0; r < ranges; r++) {
      const clock = reader.varUint()
      const len = reader.varUint()
      list.push({ clock, len })
    }
  }
  return rows
}
