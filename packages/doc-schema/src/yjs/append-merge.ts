/**
 * Merging a snapshot with the updates logged after it, by copying bytes instead of decoding structs.
 *
 * Yjs's own `mergeUpdates` reads every struct of every part into objects (an Item and its content each)
 * and writes them out again: merging a state of 350,000 items with 80 logged rows took ~300 ms and grew
 * the process ~175 MB for the moment (issue 24: a large document's compactions while loaded). A log holds
 * what a document gained after its snapshot, so in the usual case each client's structs in the later
 * parts start exactly where the earlier parts end: the merged update is then each client's struct bytes
 * laid end to end (the v1 encoding names every origin and parent by its id, so a struct's bytes do not
 * depend on what comes before them), and the delete sets' ranges joined. That is what this does, reading
 * each struct only far enough to know its length.
 *
 * It gives up (null, and the caller merges with Yjs) on anything else: a gap in a client's clocks (Yjs
 * writes a Skip there), a part that overlaps another only in part, a Skip, bytes that are not a v1 update.
 * A part that repeats structs already there whole is dropped (a struct's id fixes its content). The
 * result is equal in content, state vector and delete set to `Y.mergeUpdates` (append-merge.test.ts);
 * its bytes may differ where Yjs joins two adjacent GC structs of one client (its merge never joins
 * items: an item not yet integrated has no right neighbour to be joined with).
 *
 * The same reading serves a live document's own updates (`mergeInOrder`: the store's batch, the kept
 * changes of a large document), which continue each other by construction, and the diff of a merged
 * update against an editor's state vector (`diffAppended`, for its sync answer).
 */
import * as Y from 'yjs'
import { Malformed, Reader, skipStruct, Writer } from './update-work.ts'

/** One client's run of structs in one part: where its bytes are and which clocks they hold. */
type Run = { part: number; structs: number; clock: number; end: number; from: number; to: number }

export type AppendMerged = {
  /** The merged v1 update. */
  update: Uint8Array
  /** Its state vector, as `Y.encodeStateVectorFromUpdate` gives it (clients whose clocks start at 0). */
  vector: Uint8Array
}

/**
 * `parts` merged in clock order by copying struct bytes (see above), or null when they are not a snapshot
 * and the updates that follow it (the caller merges them with `Y.mergeUpdates`).
 */
export function mergeAppended(parts: readonly Uint8Array[]): AppendMerged | null {
  const runs = new Map<number, Run[]>()
  const deletes = new Map<number, number[]>()
  try {
    for (let part = 0; part < parts.length; part++) readPart(parts[part]!, part, runs, deletes)
  } catch (error) {
    if (error instanceof Malformed) return null
    throw error
  }
  const clients = [...runs.keys()].sort((a, b) => b - a) // as Yjs writes them: higher clients first
  const kept = new Map<number, Run[]>()
  for (const client of clients) {
    const list = runs.get(client)!.sort((a, b) => a.clock - b.clock || b.end - a.end)
    const chain: Run[] = [list[0]!]
    let end = list[0]!.end
    for (let i = 1; i < list.length; i++) {
      const run = list[i]!
      if (run.end <= end) continue // repeats structs already there, whole
      if (run.clock !== end) return null // a gap, or an overlap in part
      chain.push(run)
      end = run.end
    }
    kept.set(client, chain)
  }

  let size = 64
  for (const part of parts) size += part.length
  const out = new Writer(size)
  out.varUint(clients.length)
  for (const client of clients) {
    const chain = kept.get(client)!
    let structs = 0
    for (const run of chain) structs += run.structs
    out.varUint(structs)
    out.varUint(client)
    out.varUint(chain[0]!.clock)
    for (const run of chain) out.bytes(parts[run.part]!.subarray(run.from, run.to))
  }
  const deleting = [...deletes.keys()].sort((a, b) => b - a)
  const merged: Array<[number, number[]]> = []
  for (const client of deleting) {
    const ranges = mergeRanges(deletes.get(client)!)
    if (ranges.length > 0) merged.push([client, ranges])
  }
  out.varUint(merged.length)
  for (const [client, ranges] of merged) {
    out.varUint(client)
    out.varUint(ranges.length / 2)
    for (const value of ranges) out.varUint(value)
  }

  const vector = new Writer(16 + clients.length * 16)
  const starting = clients.filter((client) => kept.get(client)![0]!.clock === 0)
  vector.varUint(starting.length)
  for (const client of starting) {
    const chain = kept.get(client)!
    vector.varUint(client)
    vector.varUint(chain[chain.length - 1]!.end)
  }
  return { update: out.done(), vector: vector.done() }
}

/**
 * `updates` merged into one: by `mergeAppended` when they continue each other (a live document's own
 * updates, in the order its transactions made them, always do), else by Yjs's `mergeUpdates`. One
 * update is returned as it is.
 */
export function mergeInOrder(updates: readonly Uint8Array[]): Uint8Array {
  if (updates.length === 1) return updates[0]!
  return mergeAppended(updates)?.update ?? Y.mergeUpdates(updates as Uint8Array[])
}

/**
 * `parts` merged as `mergeInOrder` merges them, with the merged update's state vector (as
 * `Y.encodeStateVectorFromUpdate` gives it), both read from the bytes unless Yjs has to merge them. One
 * part is returned as it is, only its vector read.
 */
export function mergeWithVector(parts: readonly Uint8Array[]): AppendMerged {
  const appended = mergeAppended(parts)
  if (appended) return parts.length === 1 ? { update: parts[0]!, vector: appended.vector } : appended
  const update = parts.length === 1 ? parts[0]! : Y.mergeUpdates(parts as Uint8Array[])
  return { update, vector: Y.encodeStateVectorFromUpdate(update) }
}

/**
 * What `update` holds past `vector` (a state vector), as `Y.diffUpdate` gives it, by copying struct bytes:
 * a client's structs the vector covers are left out, the one it covers in part is written from where the
 * vector ends (its origin then the struct just before, a string cut where Yjs cuts it), the rest copied,
 * and the delete set kept whole. Yjs's own diff reads every struct into objects (a 5 MiB document
 * ~180-220 ms on a busy machine, for each editor that comes back with a state of its own). Null when
 * `update` is not what this reads (a Skip, a client twice, not v1): the caller diffs with Yjs.
 */
export function diffAppended(update: Uint8Array, vector: ReadonlyMap<number, number>): Uint8Array | null {
  try {
    return diffBytes(update, vector)
  } catch (error) {
    if (error instanceof Malformed) return null
    throw error
  }
}

function diffBytes(update: Uint8Array, vector: ReadonlyMap<number, number>): Uint8Array | null {
  const reader = new Reader(update)
  const out = new Writer(update.length + 64)
  const groups = reader.varUint()
  const seen = new Set<number>()
  const kept: Array<{
    structs: number
    client: number
    clock: number
    from: number
    to: number
    cut?: Uint8Array
  }> = []
  for (let g = 0; g < groups; g++) {
    const structs = reader.varUint()
    const client = reader.varUint()
    let clock = reader.varUint()
    if (seen.has(client)) return null // Yjs's reader would keep only the last of them
    seen.add(client)
    const known = vector.get(client) ?? 0
    let first = -1
    let firstClock = 0
    let firstAt = 0
    let cut: Uint8Array | undefined
    for (let s = 0; s < structs; s++) {
      const at = reader.pos
      if ((update[at]! & 31) === 10) return null // a Skip
      if (first >= 0) {
        skipStruct(reader, false) // copied whole: only where it ends matters
        continue
      }
      const length = skipStruct(reader)
      if (clock + length > known) {
        first = s
        firstClock = Math.max(clock, known)
        firstAt = reader.pos
        cut = clock < known ? sliceStruct(update, at, client, clock, known - clock) : undefined
        if (!cut) firstAt = at
      }
      clock += length
    }
    if (first >= 0)
      kept.push({ structs: structs - first, client, clock: firstClock, from: firstAt, to: reader.pos, cut })
  }
  // The delete set is copied as it is, once read to the end.
  const deletes = update.subarray(reader.pos)
  readDeleteSet(reader, () => {})
  out.varUint(kept.length)
  for (const group of kept) {
    out.varUint(group.structs)
    out.varUint(group.client)
    out.varUint(group.clock)
    if (group.cut) out.bytes(group.cut)
    out.bytes(update.subarray(group.from, group.to))
  }
  out.bytes(deletes)
  return out.done()
}

/**
 * The struct at byte `at` (of `client`, from `clock`) without its first `offset` ticks, encoded as Yjs's
 * `Item.write(encoder, offset)` writes it: its origin becomes the tick before the cut (so its parent is no
 * longer written), its content cut. Only GC, deleted, JSON, any and string content have more than one tick.
 */
function sliceStruct(
  bytes: Uint8Array,
  at: number,
  client: number,
  clock: number,
  offset: number,
): Uint8Array {
  const reader = new Reader(bytes)
  reader.pos = at
  const info = reader.byte()
  const kind = info & 31
  const out = new Writer(64)
  if (kind === 0) {
    out.bytes(bytes.subarray(at, at + 1))
    out.varUint(reader.varUint() - offset)
    return out.done()
  }
  const hasOrigin = (info & 128) !== 0
  const hasRight = (info & 64) !== 0
  if (hasOrigin) {
    reader.varUint()
    reader.varUint()
  }
  const rightFrom = reader.pos
  if (hasRight) {
    reader.varUint()
    reader.varUint()
  }
  const rightTo = reader.pos
  if (!hasOrigin && !hasRight) {
    if (reader.varUint() === 1) reader.skipVarBytes()
    else {
      reader.varUint()
      reader.varUint()
    }
    if (info & 32) reader.skipVarBytes()
  }
  out.bytes(Uint8Array.of(kind | 128 | (info & 64) | (info & 32)))
  out.varUint(client)
  out.varUint(clock + offset - 1)
  out.bytes(bytes.subarray(rightFrom, rightTo))
  switch (kind) {
    case 1:
      out.varUint(reader.varUint() - offset)
      break
    case 2:
    case 8: {
      const count = reader.varUint()
      for (let i = 0; i < offset; i++) {
        if (kind === 2) reader.skipVarBytes()
        else reader.skipAny()
      }
      const from = reader.pos
      for (let i = offset; i < count; i++) {
        if (kind === 2) reader.skipVarBytes()
        else reader.skipAny()
      }
      out.varUint(count - offset)
      out.bytes(bytes.subarray(from, reader.pos))
      break
    }
    case 4: {
      const length = reader.varUint()
      const start = reader.pos
      const end = start + length
      // Walk to the UTF-16 unit `offset`; inside a pair, its second half is written as U+FFFD, as the
      // encoder writes the lone surrogate Yjs's slice leaves there.
      let units = 0
      let i = start
      let lone = false
      while (units < offset) {
        const lead = bytes[i]!
        const size = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4
        if (size === 4 && units + 1 === offset) {
          lone = true
          i += 4
          units += 2
          break
        }
        units += size === 4 ? 2 : 1
        i += size
      }
      if (i > end) throw new Malformed('string shorter than its item')
      const rest = bytes.subarray(i, end)
      out.varUint(rest.length + (lone ? 3 : 0))
      if (lone) out.bytes(Uint8Array.of(0xef, 0xbf, 0xbd))
      out.bytes(rest)
      break
    }
    default:
      throw new Malformed('a struct of one tick cut')
  }
  return out.done()
}

/** Reads one part's runs of structs (their lengths summed) and its delete set's ranges. */
function readPart(
  bytes: Uint8Array,
  part: number,
  runs: Map<number, Run[]>,
  deletes: Map<number, number[]>,
): void {
  const reader = new Reader(bytes)
  const groups = reader.varUint()
  for (let g = 0; g < groups; g++) {
    const structs = reader.varUint()
    const client = reader.varUint()
    const clock = reader.varUint()
    const from = reader.pos
    let end = clock
    for (let s = 0; s < structs; s++) {
      if ((bytes[reader.pos]! & 31) === 10) throw new Malformed('a skip') // Yjs's gap marker
      end += skipStruct(reader)
    }
    if (structs === 0) continue
    const list = runs.get(client) ?? []
    if (list.length === 0) runs.set(client, list)
    list.push({ part, structs, clock, end, from, to: reader.pos })
  }
  readDeleteSet(reader, (client, clock, length) => {
    const ranges = deletes.get(client) ?? []
    if (!deletes.has(client)) deletes.set(client, ranges)
    ranges.push(clock, length)
  })
}

/** Reads an update's delete set, which must end its bytes, telling `range` each of its ranges. */
function readDeleteSet(reader: Reader, range: (client: number, clock: number, length: number) => void): void {
  const clients = reader.varUint()
  for (let c = 0; c < clients; c++) {
    const client = reader.varUint()
    const count = reader.varUint()
    for (let r = 0; r < count; r++) range(client, reader.varUint(), reader.varUint())
  }
  if (reader.pos !== reader.bytes.length) throw new Malformed('bytes after the delete set')
}

/** Flat [clock, length, …] ranges sorted by clock, overlapping and touching ones joined (as Yjs does). */
function mergeRanges(flat: number[]): number[] {
  const order: number[] = []
  for (let i = 0; i < flat.length; i += 2) if (flat[i + 1]! > 0) order.push(i)
  order.sort((a, b) => flat[a]! - flat[b]!)
  const out: number[] = []
  for (const i of order) {
    const clock = flat[i]!
    const length = flat[i + 1]!
    const last = out.length - 2
    if (last >= 0 && out[last]! + out[last + 1]! >= clock)
      out[last + 1] = Math.max(out[last + 1]!, clock + length - out[last]!)
    else out.push(clock, length)
  }
  return out
}
