/**
 * A large stored document split into parts the event loop applies one at a time (documents/load-sliced.ts),
 * run on the documents' worker: decoding a state of megabytes into a Y.Doc is one synchronous call, ~35 ms
 * of CPU per MiB of prose (measured: 8 MiB, 275 ms), which held every other client while a document
 * loaded. Here the stored content is decoded once and written again as updates of at most
 * SPLIT_PART_BYTES of structs each, in an order whose dependencies always come first (so each part
 * integrates whole, nothing waits as pending), then the delete set and anything the stored content left
 * pending. Applying the parts in order gives the same document as applying the stored content.
 */
import * as Y from 'yjs'

/**
 * Bytes of structs one part of a restore's edit holds at most (one struct larger than this is a part of
 * its own): each part is an update every connection is sent.
 */
export const SPLIT_PART_BYTES = 128 * 1024
/**
 * Bytes of structs one part of a load holds at most. A load's parts are applied to a document nobody sees
 * yet and sent to nobody, so they can be small: applying a 5 MiB document's 128 KiB parts held the event
 * loop 40-65 ms each on a loaded machine (5-15 ms quiet), and others' edits waited behind them (the peer
 * bench's small document while the 5 MiB one is opened and typed into). In parts of 32 KiB (189 for that
 * document) the longest is ~10 ms quiet and the whole load no slower (288 → 259 ms quiet, applied back
 * to back); the event loop applies them in slices of its turns (turns.ts SLICE_MS, persistence-extension.ts).
 */
export const LOAD_PART_BYTES = 32 * 1024

/** The stored content: the snapshot as bytes, or as base64 text read in slices (decoded here). */
export type SplitInput = { snapshot: Uint8Array | string | null; updates: Uint8Array[] }

/** The ids an item needs integrated before it: its left and right origins and its parent item. */
function dependencies(struct: Y.AbstractStruct): Y.ID[] {
  if (!(struct instanceof Y.Item)) return []
  const deps: Y.ID[] = []
  if (struct.origin) deps.push(struct.origin)
  if (struct.rightOrigin) deps.push(struct.rightOrigin)
  const parent = struct.parent
  if (parent instanceof Y.AbstractType && parent._item) deps.push(parent._item.id)
  else if (parent instanceof Y.ID) deps.push(parent)
  return deps
}

/** One part: each client's structs from index `from` to `to` (exclusive), as a V1 update without deletions. */
function encodePart(doc: Y.Doc, ranges: Map<number, [number, number]>): Uint8Array {
  const encoder = new Y.UpdateEncoderV1()
  // In V1, writeLen writes an unsigned varint: the counts and clocks the format puts between structs.
  encoder.writeLen(ranges.size)
  for (const [client, [from, to]] of [...ranges].sort((a, b) => b[0] - a[0])) {
    const structs = doc.store.clients.get(client)!
    encoder.writeLen(to - from)
    encoder.writeClient(client)
    encoder.writeLen(structs[from]!.id.clock)
    for (let i = from; i < to; i++) structs[i]!.write(encoder, 0)
  }
  encoder.writeLen(0) // no deletions: they come in the last part
  return encoder.toUint8Array()
}

/**
 * The structs of `doc` beyond `from` (a state vector: what the document the parts are applied to holds
 * already; empty for a document being loaded) as V1 updates of at most `partBytes` of structs each, in an
 * order whose dependencies always come first: each part integrates whole into a document holding `from`
 * and the parts before it. No deletions (the caller adds them last).
 */
export function structParts(doc: Y.Doc, from: ReadonlyMap<number, number>, partBytes: number): Uint8Array[] {
  const parts: Uint8Array[] = []
  const clients = [...doc.store.clients.keys()]
  const next = new Map<number, number>()
  /** Clock up to which each client's structs are in the target already, or in a part written or being built. */
  const done = new Map<number, number>()
  for (const client of clients) {
    const clock = from.get(client) ?? 0
    const structs = doc.store.clients.get(client)!
    done.set(client, clock)
    if (clock === 0) next.set(client, 0)
    else if (clock >= Y.getState(doc.store, client)) next.set(client, structs.length)
    else {
      // A struct straddling `from` is written whole (its start below `from` is integrated as a no-op).
      next.set(client, Y.findIndexSS(structs, clock))
    }
  }
  const satisfied = (id: Y.ID) => (done.get(id.client) ?? from.get(id.client) ?? 0) > id.clock
  let ranges = new Map<number, [number, number]>()
  let bytes = 0
  const flush = () => {
    if (ranges.size > 0) parts.push(encodePart(doc, ranges))
    ranges = new Map()
    bytes = 0
  }
  for (let progressed = true; progressed; ) {
    progressed = false
    for (const client of clients) {
      const structs = doc.store.clients.get(client)!
      let i = next.get(client)!
      while (i < structs.length && dependencies(structs[i]!).every(satisfied)) {
        const struct = structs[i]!
        const size = struct instanceof Y.Item ? struct.length + 16 : 8
        if (bytes > 0 && bytes + size > partBytes) flush()
        const range = ranges.get(client)
        if (range && range[1] === i) range[1] = i + 1
        else if (range) {
          flush()
          ranges.set(client, [i, i + 1])
        } else ranges.set(client, [i, i + 1])
        bytes += size
        done.set(client, struct.id.clock + struct.length)
        i++
        progressed = true
      }
      next.set(client, i)
    }
  }
  flush()
  for (const client of clients)
    if (next.get(client)! < doc.store.clients.get(client)!.length)
      throw new Error('the content has a struct whose dependencies never come')
  return parts
}

/** The stored content as parts to apply in order (see the file's header). */
export function splitStored(input: SplitInput, partBytes = LOAD_PART_BYTES): Uint8Array[] {
  const doc = new Y.Doc()
  try {
    Y.transact(doc, () => {
      const snapshot =
        typeof input.snapshot === 'string'
          ? new Uint8Array(Buffer.from(input.snapshot, 'base64'))
          : input.snapshot
      if (snapshot) Y.applyUpdate(doc, snapshot)
      for (const update of input.updates) Y.applyUpdate(doc, update)
    })
    const parts = structParts(doc, new Map(), partBytes)
    // The deletions (no structs beyond the whole state vector), then anything left pending (which Yjs
    // keeps in its V2 format).
    parts.push(Y.encodeStateAsUpdate(doc, Y.encodeStateVector(doc)))
    if (doc.store.pendingStructs) parts.push(Y.convertUpdateFormatV2ToV1(doc.store.pendingStructs.update))
    if (doc.store.pendingDs) parts.push(Y.convertUpdateFormatV2ToV1(doc.store.pendingDs))
    return parts
  } finally {
    doc.destroy()
  }
}
