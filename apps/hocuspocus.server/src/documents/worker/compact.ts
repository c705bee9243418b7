/**
 * Compaction's whole-document work, run on the documents' worker (worker.ts) instead of the event loop:
 * from the stored snapshot and the log rows read for it, the merged state (as Yjs encodes it, deleted
 * content collected), its state vector, title, plain text, outline with every section's total, and the
 * summary of what changed since the newest version are what the compaction writes. For a 5 MiB document
 * this took ~0.6 s on the event loop when its last editor left (issue 30); here it holds no one.
 *
 * The parts are read flat when they can be (`compactFlat`: rows in typed arrays, no Y.Doc; the same
 * bytes, outline and text as decoding, doc-schema's flat-collect and flat-outline tests), else decoded
 * into a Y.Doc (`compactDecoded`).
 *
 * The document is the stored content, not the live one: what is stored is exactly what the compaction may
 * replace the log rows with, and a change not yet stored is appended as a row of its own later.
 *
 * `mergeOnly` (a large document's compaction while it is loaded, collab/persistence/compaction.ts): the
 * stored bytes merged without building a document (their struct bytes copied, `mergeStored`), so the
 * worker never holds a second decoded copy beside the live one (~290 bytes of heap an item: ~115 MB at
 * the item limit, issue 24). The state alone comes back: no outline, title or search text, no summary;
 * deleted text stays in it until a full compaction collects it.
 */
import {
  adoptTotals,
  type FlatDocument,
  FRAGMENT_NAME,
  flatOutlineWithTotals,
  flatTopLevel,
  liveOutlineWithTotals,
  mergeAppended,
  mergeWithVector,
  outlineMeasureSteps,
  readFlat,
  readPlainText,
  readTitle,
  readTitleAndTextOf,
  type StoredOutlineNode,
  storedTotals,
} from '@collab/doc-schema'
import * as Y from 'yjs'
import { diffSinceState, diffSinceStateFlat, summarize } from '../history-diff.ts'

export type CompactInput = {
  /** The snapshot and the log rows read, in order (bytes, or base64). */
  snapshot: Uint8Array | string | null
  updates: Array<Uint8Array | string>
  /**
   * The snapshot's stored outline: its section totals are adopted, so only the sections changed since it
   * (or stored without one) are rendered here to measure theirs.
   */
  storedOutline: StoredOutlineNode[] | null
  /** Title and plain text wanted (a refresh is due), the text cut at this many characters; 0: not wanted. */
  maxTextChars: number
  /** A version is taken: the newest version's state to summarise the changes against (null: none yet). */
  versionBase?: Uint8Array | string | null
  /** The bytes merged, nothing decoded (see above): `maxTextChars` and `versionBase` are not read. */
  mergeOnly?: boolean
}

export type Compacted = {
  /**
   * The merged state's bytes, posted back as a transfer: as base64 text (11 MB for 8 MiB) the structured
   * clone copied it on the event loop, which then sliced it to write it.
   */
  state: Uint8Array
  vector: Uint8Array
  title: string
  text: string
  /** Null from a merge alone (`mergeOnly`): the snapshot is stored without one, as cold reads allow. */
  outline: StoredOutlineNode[] | null
  /** What changed since `versionBase` (undefined: no version asked; null: it could not be told). */
  summary?: ReturnType<typeof summarize> | null
}

/**
 * How a compaction read the stored parts (`collab_document_compaction_reads_total{read}`): `flat` (no
 * Y.Doc), `decoded` (parts that do not read flat, as a log that does not continue its snapshot),
 * `flat_failed` (the flat reading threw, so decoded: a bug in this server's reading of Yjs's format, to be
 * reported; `flatError` says what), `merged` (a merge alone, nothing decoded).
 */
export type CompactionRead = 'flat' | 'decoded' | 'flat_failed' | 'merged'

/** A compaction's result with how the parts were read. */
export type CompactedRead = Compacted & { read: CompactionRead; flatError?: string }

const fromBase64 = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'))
const bytesOf = (state: Uint8Array | string) => (typeof state === 'string' ? fromBase64(state) : state)

/**
 * `applied`: called once the stored content is decoded (the worker collects there for a large job:
 * applying a state of 400,000 items leaves ~55 MB of garbage beside the ~100 MB document, which the
 * measuring, encoding and text that follow would add to).
 */
export function compactStored(
  input: CompactInput,
  applied?: () => void,
  /** The flat reading (tests put one that throws in its place). */
  flat: typeof compactFlat = compactFlat,
): CompactedRead {
  if (input.mergeOnly) return { ...mergeStored(input), read: 'merged' }
  // A bug in the flat path (it is tested equal to decoding, but it is this server's own reading of Yjs's
  // format) must not leave a document's log unmerged: decoding is the path the compaction had always taken,
  // and the read is reported (`flat_failed`). Malformed parts throw again there, as they always did.
  let flatError: string | undefined
  try {
    const compacted = flat(input, applied)
    if (compacted) return { ...compacted, read: 'flat' }
  } catch (error) {
    flatError = error instanceof Error ? error.message : String(error)
  }
  const decoded = compactDecoded(input, applied)
  return flatError === undefined
    ? { ...decoded, read: 'decoded' }
    : { ...decoded, read: 'flat_failed', flatError }
}

/**
 * The compaction read flat (doc-schema yjs/flat-read.ts with `collect`): the state Yjs would encode, the
 * outline with its totals, title, text and a version's summary, all from the bytes, no Y.Doc (a document
 * at the item limit decoded is ~100 MB of heap and ~55 MB of garbage here, the server's memory peak under
 * the red team's item attack: issue 24). Null when the parts do not read flat (they do not continue each
 * other as a log does, or hold what Yjs would keep pending): `compactDecoded` then.
 */
export function compactFlat(input: CompactInput, applied?: () => void): Compacted | null {
  const parts = input.updates.map(bytesOf)
  if (input.snapshot) parts.unshift(bytesOf(input.snapshot) as Uint8Array<ArrayBuffer>)
  if (parts.length === 0) return null
  const merged = parts.length === 1 ? parts[0]! : mergeAppended(parts)?.update
  parts.length = 0
  const flat = merged && readFlat(merged, FRAGMENT_NAME, { collect: true })
  if (!flat?.collected) return null
  applied?.()
  const { state, vector } = flat.collected
  const text =
    input.maxTextChars > 0
      ? readTitleAndTextOf(flat.tree, flatTopLevel(flat), input.maxTextChars)
      : { title: '', text: '' }
  const compacted: Compacted = {
    state,
    vector,
    ...text,
    outline: flatOutlineWithTotals(flat, input.storedOutline ? storedTotals(input.storedOutline) : new Map()),
  }
  if (input.versionBase !== undefined)
    compacted.summary = summaryOfFlat(flat, compacted.outline!, input.versionBase)
  return compacted
}

/** The compaction on a decoded document: for parts that do not read flat (exported for its test). */
export function compactDecoded(input: CompactInput, applied?: () => void): Compacted {
  const doc = new Y.Doc()
  try {
    Y.transact(doc, () => {
      if (input.snapshot) Y.applyUpdate(doc, bytesOf(input.snapshot))
      for (const update of input.updates) Y.applyUpdate(doc, bytesOf(update))
    })
    applied?.()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    if (input.storedOutline) adoptTotals(fragment, storedTotals(input.storedOutline))
    // Every section's total: those the stored outline knew are adopted, the others rendered here.
    for (const steps = outlineMeasureSteps(fragment); !steps.next().done; );
    const state = Y.encodeStateAsUpdate(doc)
    const compacted: Compacted = {
      state,
      vector: Y.encodeStateVector(doc),
      title: input.maxTextChars > 0 ? readTitle(fragment) : '',
      text: input.maxTextChars > 0 ? readPlainText(fragment, input.maxTextChars) : '',
      outline: liveOutlineWithTotals(fragment),
    }
    if (input.versionBase !== undefined) compacted.summary = summaryOf(fragment, input.versionBase)
    return compacted
  } finally {
    doc.destroy()
  }
}

/**
 * The stored bytes merged without a document (`mergeOnly`): each client's struct bytes laid end to end
 * (`mergeWithVector`, doc-schema yjs/append-merge.ts) when the log continues the snapshot's clocks, as it
 * does unless rows overlap or a gap waits for its missing part; otherwise by Yjs's `mergeUpdates`, which
 * reads every struct into objects (at 350,000 items ~300 ms and ~175 MB more for the moment, against
 * ~15 ms and the bytes' own size).
 */
function mergeStored(input: CompactInput): Compacted {
  const parts = input.updates.map(bytesOf)
  if (input.snapshot) parts.unshift(bytesOf(input.snapshot) as Uint8Array<ArrayBuffer>)
  const { update: state, vector } = mergeWithVector(parts)
  return {
    // Posted back as a transfer of its whole buffer.
    state: state.byteOffset === 0 && state.byteLength === state.buffer.byteLength ? state : state.slice(),
    vector,
    title: '',
    text: '',
    outline: null,
  }
}

/** `summaryOf` for a state read flat, whose outline the compaction has read (not walked again). */
function summaryOfFlat(after: FlatDocument, outline: StoredOutlineNode[], base: Uint8Array | string | null) {
  try {
    return summarize(diffSinceStateFlat(base === null ? null : bytesOf(base), after, outline))
  } catch {
    return null
  }
}

/** What `fragment` changed since `base`; null when it cannot be told (the version is taken without one). */
function summaryOf(fragment: Y.XmlFragment, base: Uint8Array | string | null) {
  try {
    return summarize(diffSinceState(base === null ? null : bytesOf(base), fragment))
  } catch {
    return null
  }
}
