/**
 * The answer to an editor's sync step 1 for a large live document, made on the documents' worker: what the
 * editor lacks (the updates past its state vector), from the updates the live document was built from
 * (the parts of its load and every change since: collab/persistence/loaded-updates.ts) rather than from the
 * Y.Doc itself, which only the event loop holds. Hocuspocus encodes that answer from the Y.Doc on the
 * event loop: a 5 MiB document's whole state is ~100-235 ms in one piece for every editor that opens it.
 * Also the state vector of what the answer was made from, so the event loop can check it against the
 * live document's before it is sent (a change missed would leave the editor without content it needs).
 *
 * The worker keeps each document's parts merged between answers (MAX_MERGED_DOCUMENTS, the least recently
 * answered going first), so a later answer is sent only the parts added since (`base`: how many the
 * worker should hold) and the changes not yet merged into a part; a worker that does not hold them (it
 * ended when idle, or let them go) answers `stale`, and is sent every part once.
 */
import { diffAppended, mergeInOrder, mergeWithVector } from '@collab/doc-schema'
import * as Y from 'yjs'
import { MAX_MERGED_DOCUMENTS } from '../../limits.ts'
import { syncStep2Message } from './frames.ts'

export type SyncAnswerInput = {
  /** The live document's key (the same for its life), naming what the worker keeps merged. */
  key: string
  /** How many parts the worker holds merged for `key` already (0: none; `parts` are all of them). */
  base: number
  /** The document's parts after `base`, in order (load parts, then merged changes). */
  parts: Uint8Array[]
  /** Its changes not yet merged into a part, in order. */
  changes: Uint8Array[]
  /** The editor's state vector (its sync step 1). */
  vector: Uint8Array
  /** The connection's message address: the answer is framed here as the message sent to it. */
  address: string
}

export type SyncAnswer =
  | {
      stale?: false
      /**
       * What the editor lacks (a Yjs update) as the sync step 2 message to send it, framed here: the event
       * loop sends it as it is (a copy of megabytes there is ~3 ms per MiB of fresh memory).
       */
      message: Uint8Array
      /** The state vector of all the document's parts and changes together. */
      covered: Uint8Array
    }
  | { stale: true }

/** Per document key, its parts merged and how many they are (insertion order: least recent first). */
const merged = new Map<string, { count: number; update: Uint8Array }>()

export function answerSync({ key, base, parts, changes, vector, address }: SyncAnswerInput): SyncAnswer {
  const held = merged.get(key)
  if (base > 0 && held?.count !== base) {
    merged.delete(key)
    return { stale: true }
  }
  // The parts continue each other (the load's parts each take up every client's structs where the one
  // before left off, split.ts; the changes are the document's own updates, in order): their struct bytes
  // are laid end to end (`mergeInOrder`), Yjs's `mergeUpdates` only if they do not.
  const stable = mergeInOrder(held && base > 0 ? [held.update, ...parts] : parts)
  merged.delete(key)
  merged.set(key, { count: base + parts.length, update: stable })
  while (merged.size > MAX_MERGED_DOCUMENTS) merged.delete(merged.keys().next().value!)
  const { update: whole, vector: covered } = mergeWithVector([stable, ...changes])
  // A fresh editor (an empty vector) lacks all of it: the merged update as it is, no diff to make.
  // Else its struct bytes past the editor's vector (`diffAppended`), or Yjs's diff if they are not as read.
  const known = Y.decodeStateVector(vector)
  const lacking = known.size === 0 ? whole : (diffAppended(whole, known) ?? Y.diffUpdate(whole, vector))
  return {
    message: syncStep2Message(address, lacking),
    covered,
  }
}
