/**
 * The answer to an editor's sync step 1 for a large live document, made on the documents' worker: what the
 * editor lacks (the updates past its state vector), from the updates the live document was built from
 * (the parts of its load and every change since: collab/persistence/loaded-updates.ts) rather than from the
 * Y.Doc itself, which only the event loop holds. Hocuspocus encodes that answer from the Y.Doc on the
 * event loop: a 5 MiB document's whole state is ~100-235 ms in one piece for every editor that opens it.
 * Also the state vector of what the answer was made from, so the event loop can check it against the
 * live document's before it is sent (a change missed would leave the editor without content it needs).
 */
import * as Y from 'yjs'

export type SyncAnswerInput = {
  /** The updates the live document was built from, in order (load parts, then changes). */
  parts: Uint8Array[]
  /** The editor's state vector (its sync step 1). */
  vector: Uint8Array
}

export type SyncAnswer = {
  /** What the editor lacks: a Yjs update (the sync step 2's payload). */
  update: Uint8Array
  /** The state vector of all `parts` together. */
  covered: Uint8Array
}

export function answerSync({ parts, vector }: SyncAnswerInput): SyncAnswer {
  const merged = parts.length === 1 ? parts[0]! : Y.mergeUpdates(parts)
  return { update: Y.diffUpdate(merged, vector), covered: Y.encodeStateVectorFromUpdate(merged) }
}
