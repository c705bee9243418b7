/**
 * What applying an editor's Yjs update will cost, counted before anything of it is decoded into objects:
 * the structs it inserts and the live structs its delete set reaches. Bytes do not bound this work (a
 * 7.2 MB update held a flat list of 100,000 items: 5.9 s to check and 3.0 s to apply on the event loop),
 * so the boundary refuses an update whose count passes a ceiling before the check and the apply are paid.
 *
 * The reader walks the update's v1 encoding (the encoding y-protocols' sync messages carry) without
 * building structs: for each struct it reads the info byte and skips its origins, parent and content
 * (strings and buffers by their length, `any` values with a loop), and it stops as soon as the count
 * passes `limit`, so its own cost is bounded by the ceiling, not by the update. The delete set's ranges are
 * counted in the live document's struct store with two binary searches each.
 *
 * The format (Yjs 13, `UpdateDecoderV1`): a varuint count of client groups; each group a varuint count of
 * structs, the client, the first clock, then the structs; then the delete set. A struct starts with an info
 * byte whose low 5 bits are its content kind (0 GC, 10 Skip, else an Item), and whose high bits say which
 * of origin, right origin and parent sub follow.
 */
import * as Y from 'yjs'

/**
 * What deleting a struct costs, in inserted structs: checking and applying 200,000 deleted structs took
 * 0.85 s (~4.2 µs each), decoding, checking and applying 400,000 inserted ones 3.1 s (~7.8 µs each).
 */
export const DELETED_STRUCT_COST = 0.5

export type UpdateWork = {
  /** Structs the update inserts (counted up to where the cost passes the limit). */
  inserted: number
  /** Live structs its delete set reaches (0 when no document is given). */
  deleted: number
  /** `inserted + deleted × DELETED_STRUCT_COST`: the work, in inserted structs. */
  cost: number
  /** True when the cost passed the limit (counting stopped there). */
  over: boolean
}

export class Malformed extends Error {}

/** A cursor over lib0's encodings, reading only what the count needs. */
export class Reader {
  pos = 0
  constructor(readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.pos >= this.bytes.length) throw new Malformed('unexpected end')
    return this.bytes[this.pos++]!
  }

  varUint(): number {
    let num = 0
    let mult = 1
    for (;;) {
      const r = this.byte()
      num += (r & 127) * mult
      if (r < 128) return num
      mult *= 128
      if (num > Number.MAX_SAFE_INTEGER) throw new Malformed('integer out of range')
    }
  }

  varInt(): void {
    let r = this.byte()
    while (r & 128) r = this.byte()
  }

  skip(length: number): void {
    if (length > this.bytes.length - this.pos) throw new Malformed('unexpected end')
    this.pos += length
  }

  /** A varstring or varUint8Array: its length, then its bytes. */
  skipVarBytes(): void {
    this.skip(this.varUint())
  }

  /**
   * A varstring, returning its length in UTF-16 code units (what a Yjs string item counts in its clock)
   * without decoding it; malformed UTF-8 (which a decoder would replace) is refused.
   */
  varStringUnits(): number {
    const length = this.varUint()
    const end = this.pos + length
    if (length > this.bytes.length - this.pos) throw new Malformed('unexpected end')
    const bytes = this.bytes
    let units = 0
    for (let i = this.pos; i < end; ) {
      const lead = bytes[i]!
      const size =
        lead < 0x80
          ? 1
          : lead >= 0xc2 && lead < 0xe0
            ? 2
            : lead >= 0xe0 && lead < 0xf0
              ? 3
              : lead >= 0xf0 && lead < 0xf5
                ? 4
                : 0
      if (size === 0 || i + size > end) throw new Malformed('string not UTF-8')
      for (let k = 1; k < size; k++)
        if ((bytes[i + k]! & 0xc0) !== 0x80) throw new Malformed('string not UTF-8')
      if (size === 3) {
        const second = bytes[i + 1]!
        // Overlong forms and UTF-16 surrogates, which a decoder replaces rather than reads.
        if ((lead === 0xe0 && second < 0xa0) || (lead === 0xed && second >= 0xa0))
          throw new Malformed('string not UTF-8')
      } else if (size === 4) {
        const second = bytes[i + 1]!
        if ((lead === 0xf0 && second < 0x90) || (lead === 0xf4 && second >= 0x90))
          throw new Malformed('string not UTF-8')
      }
      units += size === 4 ? 2 : 1
      i += size
    }
    this.pos = end
    return units
  }

  /** One lib0 `any` value, iteratively (arrays and objects nest); deeper than 1,000 is malformed. */
  skipAny(): void {
    const frames: Array<{ left: number; object: boolean }> = [{ left: 1, object: false }]
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!
      if (frame.left === 0) {
        frames.pop()
        continue
      }
      frame.left--
      if (frame.object) this.skipVarBytes() // the key
      switch (127 - this.byte()) {
        case 0: // undefined
        case 1: // null
        case 6: // false
        case 7: // true
          break
        case 2:
          this.varInt()
          break
        case 3:
          this.skip(4)
          break
        case 4:
        case 5:
          this.skip(8)
          break
        case 8:
        case 11:
          this.skipVarBytes()
          break
        case 9: // an object: its entries are key, value
        case 10: {
          // an array
          const object = this.bytes[this.pos - 1] === 127 - 9
          if (frames.length > 1_000) throw new Malformed('value nested too deep')
          frames.push({ left: this.varUint(), object })
          break
        }
        default:
          throw new Malformed('unknown value type')
      }
    }
  }
}

/**
 * Counts the structs an update inserts and, in `doc`, the structs its delete set reaches, stopping once their
 * cost passes `limit`. Returns null for bytes that are not a v1 update (the check refuses those with its
 * own reason).
 */
export function countUpdateWork(update: Uint8Array, doc: Y.Doc | null, limit: number): UpdateWork | null {
  const reader = new Reader(update)
  let inserted = 0
  try {
    const groups = reader.varUint()
    for (let g = 0; g < groups; g++) {
      const structs = reader.varUint()
      reader.varUint() // client
      reader.varUint() // clock
      for (let s = 0; s < structs; s++) {
        if (++inserted > limit) return { inserted, deleted: 0, cost: inserted, over: true }
        skipStruct(reader, false)
      }
    }
    let deleted = 0
    const clients = reader.varUint()
    for (let c = 0; c < clients; c++) {
      const client = reader.varUint()
      const ranges = reader.varUint()
      for (let r = 0; r < ranges; r++) {
        const clock = reader.varUint()
        const length = reader.varUint()
        if (doc) deleted += structsIn(doc, client, clock, length)
        const cost = inserted + deleted * DELETED_STRUCT_COST
        if (cost > limit) return { inserted, deleted, cost, over: true }
      }
    }
    return { inserted, deleted, cost: inserted + deleted * DELETED_STRUCT_COST, over: false }
  } catch (error) {
    if (error instanceof Malformed) return null
    throw error
  }
}

export const BITS5 = 31
const BIT6 = 32
const BIT7 = 64
const BIT8 = 128

/**
 * Reads past one struct and returns its length in clock ticks (what the next struct's clock adds). With
 * `units` false a string's length is not counted (1 is returned for it): the count of structs needs only
 * where each ends.
 */
export function skipStruct(reader: Reader, units = true): number {
  const info = reader.byte()
  const kind = info & BITS5
  if (kind === 0 || kind === 10) return reader.varUint() // GC or Skip: its length
  const cantCopyParentInfo = (info & (BIT7 | BIT8)) === 0
  if (info & BIT8) {
    reader.varUint() // origin: client, clock
    reader.varUint()
  }
  if (info & BIT7) {
    reader.varUint() // right origin
    reader.varUint()
  }
  if (cantCopyParentInfo) {
    if (reader.varUint() === 1)
      reader.skipVarBytes() // a root type's name
    else {
      reader.varUint() // a parent item's id
      reader.varUint()
    }
    if ((info & BIT6) === BIT6) reader.skipVarBytes() // parent sub (a map key, an attribute name)
  }
  return skipContent(reader, kind, units)
}

/**
 * Reads past an item's content of `kind` (its info byte's low five bits) and returns its length in clock
 * ticks; with `units` false a string counts 1.
 */
export function skipContent(reader: Reader, kind: number, units = true): number {
  switch (kind) {
    case 1: // ContentDeleted: its length
      return reader.varUint()
    case 2: {
      // ContentJSON: strings, one tick each
      const count = reader.varUint()
      for (let i = 0; i < count; i++) reader.skipVarBytes()
      return count
    }
    case 4: // ContentString: its UTF-16 length
      if (units) return reader.varStringUnits()
      reader.skipVarBytes()
      return 1
    case 3: // ContentBinary
    case 5: // ContentEmbed (JSON text)
      reader.skipVarBytes()
      return 1
    case 6: // ContentFormat: key, JSON text
      reader.skipVarBytes()
      reader.skipVarBytes()
      return 1
    case 7: {
      // ContentType: the type's kind; an XmlElement or XmlHook also its name
      const ref = reader.varUint()
      if (ref > 6) throw new Malformed('unknown type')
      if (ref === 3 || ref === 5) reader.skipVarBytes()
      return 1
    }
    case 8: {
      // ContentAny: values, one tick each
      const count = reader.varUint()
      for (let i = 0; i < count; i++) reader.skipAny()
      return count
    }
    case 9: // ContentDoc: guid, options
      reader.skipVarBytes()
      reader.skipAny()
      return 1
    default:
      throw new Malformed('unknown content kind')
  }
}

/** How many of `client`'s structs in `doc` overlap the clock range [clock, clock + length). */
function structsIn(doc: Y.Doc, client: number, clock: number, length: number): number {
  const structs = doc.store.clients.get(client)
  if (!structs || structs.length === 0 || length === 0) return 0
  const last = structs[structs.length - 1]!
  const end = Math.min(clock + length, last.id.clock + last.length) - 1
  if (end < clock) return 0
  return Y.findIndexSS(structs, end) - Y.findIndexSS(structs, clock) + 1
}

/**
 * One lib0 `any` value (lib0 `readAny`), iteratively for arrays and objects; a value type lib0 does not
 * know is malformed (lib0 throws on it too). Strings through `strings`, which may keep them in the bytes.
 */
export function readAny(reader: Reader, strings: { readString(reader: Reader): string }): unknown {
  type Frame = { left: number; target: unknown[] | Record<string, unknown> }
  const top: unknown[] = []
  const frames: Frame[] = [{ left: 1, target: top }]
  const view = new DataView(reader.bytes.buffer, reader.bytes.byteOffset, reader.bytes.byteLength)
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]!
    if (frame.left === 0) {
      frames.pop()
      continue
    }
    frame.left--
    const key = Array.isArray(frame.target) ? undefined : strings.readString(reader)
    const put = (value: unknown) => {
      if (Array.isArray(frame.target)) frame.target.push(value)
      else frame.target[key!] = value
    }
    const type = reader.byte()
    switch (type) {
      case 127:
        put(undefined)
        break
      case 126:
        put(null)
        break
      case 125:
        put(readVarInt(reader))
        break
      case 124: {
        const at = reader.pos
        reader.skip(4)
        put(view.getFloat32(at, false))
        break
      }
      case 123: {
        const at = reader.pos
        reader.skip(8)
        put(view.getFloat64(at, false))
        break
      }
      case 122: {
        const at = reader.pos
        reader.skip(8)
        put(view.getBigInt64(at, false))
        break
      }
      case 121:
        put(false)
        break
      case 120:
        put(true)
        break
      case 119:
        put(strings.readString(reader))
        break
      case 118: {
        const object: Record<string, unknown> = {}
        put(object)
        if (frames.length > 1_000) throw new Malformed('value nested too deep')
        frames.push({ left: reader.varUint(), target: object })
        break
      }
      case 117: {
        const array: unknown[] = []
        put(array)
        if (frames.length > 1_000) throw new Malformed('value nested too deep')
        frames.push({ left: reader.varUint(), target: array })
        break
      }
      case 116: {
        const length = reader.varUint()
        const at = reader.pos
        reader.skip(length)
        put(reader.bytes.slice(at, at + length))
        break
      }
      default:
        // lib0's reader has no entry for it and throws.
        throw new Malformed('unknown value type')
    }
  }
  return top[0]
}

/** lib0's signed varint. */
function readVarInt(reader: Reader): number {
  let r = reader.byte()
  let num = r & 63
  let mult = 64
  const sign = (r & 64) > 0 ? -1 : 1
  if ((r & 128) === 0) return sign * num
  for (;;) {
    r = reader.byte()
    num += (r & 127) * mult
    mult *= 128
    if (r < 128) return sign * num
    if (num > Number.MAX_SAFE_INTEGER) throw new Malformed('integer out of range')
  }
}

const utf8 = new TextEncoder()

/** A growing byte buffer for varuints, strings and copied runs (the v1 update encoding's parts). */
export class Writer {
  private buffer: Uint8Array
  private length = 0

  constructor(size: number) {
    this.buffer = new Uint8Array(size)
  }

  private room(more: number): void {
    if (this.length + more <= this.buffer.length) return
    let size = this.buffer.length * 2
    while (size < this.length + more) size *= 2
    const next = new Uint8Array(size)
    next.set(this.buffer.subarray(0, this.length))
    this.buffer = next
  }

  varUint(value: number): void {
    this.room(8)
    while (value > 127) {
      this.buffer[this.length++] = 128 | (value % 128)
      value = Math.floor(value / 128)
    }
    this.buffer[this.length++] = value
  }

  bytes(run: Uint8Array): void {
    this.room(run.length)
    this.buffer.set(run, this.length)
    this.length += run.length
  }

  byte(value: number): void {
    this.room(1)
    this.buffer[this.length++] = value
  }

  /** `source[from, to)`, byte by byte when short (a view for each of ~400,000 structs was much garbage). */
  copy(source: Uint8Array, from: number, to: number): void {
    const length = to - from
    this.room(length)
    if (length > 64) this.buffer.set(source.subarray(from, to), this.length)
    else for (let i = 0; i < length; i++) this.buffer[this.length + i] = source[from + i]!
    this.length += length
  }

  /** A lib0 varstring: its UTF-8 length, then its bytes. */
  string(text: string): void {
    const bytes = utf8.encode(text)
    this.varUint(bytes.length)
    this.bytes(bytes)
  }

  /** How many bytes are written. */
  get size(): number {
    return this.length
  }

  /** The bytes written, as a view of the buffer (valid until the next write). */
  view(): Uint8Array {
    return this.buffer.subarray(0, this.length)
  }

  reset(): void {
    this.length = 0
  }

  /** The bytes written, in a buffer of their own length (posted as a transfer). */
  done(): Uint8Array {
    return this.length === this.buffer.length ? this.buffer : this.buffer.slice(0, this.length)
  }
}
