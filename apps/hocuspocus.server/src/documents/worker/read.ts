/**
 * The start of a document's Markdown for a whole read (read_document without section_id): the same
 * `documentMarkdownPrefix` the event loop would run, on a copy decoded from the state's bytes, so the text is
 * the same character for character. Run on the documents' worker for content whose render is dear (a
 * paragraph of 10,000 marks: ~150 ms of CPU at the render-work cap, which held every other client's
 * keystroke that long), inline for small content (modules/mcp/infra/documents.ts decides).
 *
 * A live document read again keeps its copy here (`renderLivePrefix`): the event loop sends only what
 * changed since the copy's state vector (live-copies.ts), where encoding the whole state for each read held
 * the loop ~1/10 of the render (68 ms of 675, load 17) for a document edited between reads. A dear section
 * read is rendered on the same copy (read-section.ts), and so is changes_since's comparison with a version.
 */
import {
  documentMarkdownPrefix,
  FRAGMENT_NAME,
  type MarkdownPrefix,
  type SerializeOptions,
} from '@collab/doc-schema'
import * as Y from 'yjs'
import { MAX_LIVE_COPIES, MAX_LIVE_COPY_STRUCTS } from '../../limits.ts'
import { diffSinceState, type SectionChange } from '../history-diff.ts'
import { bytesOfBase64 } from '../sliced-read.ts'
import { applyStored, readStoredFlat } from '../stored-parts.ts'
import { renderSectionJob, type SectionAsk, type SectionReadResult } from './read-section.ts'

export type ReadInput = {
  /**
   * The content: a stored snapshot (its bytes, or a large one's base64 text as read in slices, decoded
   * here) and log.
   */
  stored: { snapshot: Uint8Array | string | null; updates: Uint8Array[] }
  /** At least this many characters of Markdown, unless it is all of it (documentMarkdownPrefix). */
  minChars: number
  opts: SerializeOptions
}

/** `documentMarkdownPrefix(fragment, minChars, opts, bounded = true)` of the content, decoded here. */
export function renderReadPrefix(input: ReadInput): MarkdownPrefix {
  const { snapshot, updates } = input.stored
  const stored = { snapshot: typeof snapshot === 'string' ? bytesOfBase64(snapshot) : snapshot, updates }
  // Read flat from the bytes when it can be (stored-parts.ts `readStoredFlat`): no Y.Doc of it all.
  const flat = readStoredFlat(stored)
  if (flat) return documentMarkdownPrefix(flat, input.minChars, input.opts, true)
  const doc = new Y.Doc()
  try {
    applyStored(doc, stored)
    return documentMarkdownPrefix(doc.getXmlFragment(FRAGMENT_NAME), input.minChars, input.opts, true)
  } finally {
    doc.destroy()
  }
}

/** What a whole read asks of a copy: at least `minChars` of its Markdown (documentMarkdownPrefix). */
export type PrefixAsk = { minChars: number; opts: SerializeOptions }

/**
 * A whole read (`minChars`, `opts`) or a section read (`section`, read-section.ts) of a live document
 * through its copy on the worker (live-copies.ts makes it).
 */
export type LiveReadInput = {
  /**
   * The copy's name: one per live Y.Doc, never reused. '': a copy made for this read alone (a cold
   * read's decoded content), not kept.
   */
  key: string
  /**
   * The state vector `update` was encoded against: the copy must hold at least that much (else the reply
   * is `stale` and the whole state is sent). Null: `update` is the whole state, a new copy.
   */
  base: Uint8Array | null
  update: Uint8Array
  /** More updates applied after `update` (a cold document's logged rows after its snapshot). */
  more?: Uint8Array[]
  /** Copies of documents unloaded since the last read: dropped first. */
  drop: string[]
} & (PrefixAsk | SectionAsk | ChangesAsk)

/**
 * What changed since a version (changes_since, history-diff.ts `diffSinceState`): the version's state,
 * compared with the document on the copy.
 */
export type ChangesAsk = { changesSince: Uint8Array | null }

/** The read, or `stale`: the copy is gone (the worker restarted, evicted it) or behind `base`. */
export type LiveReadReply =
  | { prefix: MarkdownPrefix; section?: never; changes?: never; stale?: never }
  | { section: SectionReadResult; prefix?: never; changes?: never; stale?: never }
  | { changes: SectionChange[]; prefix?: never; section?: never; stale?: never }
  | { stale: true; prefix?: never; section?: never; changes?: never }

/** The copies this worker holds, least recently read first, with their structs (what their heap grows with). */
const copies = new Map<string, { doc: Y.Doc; structs: number }>()
let heldStructs = 0

function forget(key: string): void {
  const copy = copies.get(key)
  if (!copy) return
  copies.delete(key)
  heldStructs -= copy.structs
  copy.doc.destroy()
}

/** Whether a document at `held` (a state vector) has everything `base` names. */
function covers(held: Uint8Array, base: Uint8Array): boolean {
  const have = Y.decodeStateVector(held)
  for (const [client, clock] of Y.decodeStateVector(base)) if ((have.get(client) ?? 0) < clock) return false
  return true
}

function structsOf(doc: Y.Doc): number {
  let count = 0
  for (const structs of doc.store.clients.values()) count += structs.length
  return count
}

/**
 * The live document's whole read, or section read, on its copy here: made from the whole state, or brought
 * up to date with what changed since `base`. Kept for the next read while the copies stay within
 * MAX_LIVE_COPIES and MAX_LIVE_COPY_STRUCTS (the least recently read go first; a document larger than all
 * of them, or a copy for one read (key ''), is not kept).
 */
export function renderLivePrefix(input: LiveReadInput): LiveReadReply {
  for (const key of input.drop) forget(key)
  let copy = copies.get(input.key)
  if (input.base === null) {
    forget(input.key)
    copy = { doc: new Y.Doc(), structs: 0 }
  } else if (!copy || !covers(Y.encodeStateVector(copy.doc), input.base)) {
    forget(input.key)
    return { stale: true }
  }
  // Out while it changes: a render that throws leaves no half-made copy behind.
  copies.delete(input.key)
  heldStructs -= copy.structs
  Y.transact(copy.doc, () => {
    Y.applyUpdate(copy.doc, input.update)
    for (const update of input.more ?? []) Y.applyUpdate(copy.doc, update)
  })
  const fragment = copy.doc.getXmlFragment(FRAGMENT_NAME)
  const reply: LiveReadReply =
    'section' in input
      ? { section: renderSectionJob(fragment, input.section) }
      : 'changesSince' in input
        ? { changes: diffSinceState(input.changesSince, fragment) }
        : { prefix: documentMarkdownPrefix(fragment, input.minChars, input.opts, true) }
  copy.structs = structsOf(copy.doc)
  if (copy.structs > MAX_LIVE_COPY_STRUCTS || input.key === '') {
    copy.doc.destroy()
    return reply
  }
  copies.set(input.key, copy)
  heldStructs += copy.structs
  for (const [key] of copies) {
    if (copies.size <= MAX_LIVE_COPIES && heldStructs <= MAX_LIVE_COPY_STRUCTS) break
    forget(key)
  }
  return reply
}

/** The copies held and their structs (tests). */
export function liveCopiesHeld(): { copies: number; structs: number } {
  return { copies: copies.size, structs: heldStructs }
}
