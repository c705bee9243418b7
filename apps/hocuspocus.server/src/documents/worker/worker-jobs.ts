/**
 * Jobs of the documents' worker that are pure functions of their input, kept apart from worker.ts (the
 * thread's entry) so the event loop can run a small one itself.
 */
import { ok, type Result } from '@collab/doc-schema'
import { tooLarge } from '../history-undo.ts'
import { type Compacted, type CompactInput, compactStored } from './compact.ts'

/** A "before" version's merge: the stored content (compact.ts), refused past MAX_HISTORY_STATE_BYTES. */
export type BeforeInput = CompactInput & { field: string; what: string }

/** Merges a restore's or revert's "before" version (history-before.ts). */
export function beforeVersionOf(input: BeforeInput): Result<Compacted> {
  const compacted = compactStored(input)
  return tooLarge(compacted.state.byteLength, input.field, input.what) ?? ok(compacted)
}
