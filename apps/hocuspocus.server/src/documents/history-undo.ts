/**
 * Restoring a version and reverting changes (issue 27; docs/history.md "Restore and revert"), both as ONE
 * new edit on the live document, so editors see it at once and it is stored, attributed and versioned as
 * any edit is.
 *
 * Both use Yjs's own selective undo: a scratch document (gc off) is rebuilt from the stored states in
 * order, each step applied with an origin that a Y.UndoManager tracks (the changes to undo) or does not
 * (everyone else's), the live document's state last and untracked; undoing the tracked steps then
 * deletes exactly the items they inserted and re-inserts what they deleted, leaving everyone else's items
 * alone. The scratch document's changes beyond the live state are the edit. A restore is the case where
 * every change since the version is tracked, so the content becomes the version's.
 *
 * The work is planUndo, pure, run on the documents' worker (worker/pool.ts) so no other client waits for
 * it; applyUndoPlan then applies the edit inside the live transaction, only if it is still right: what
 * changed in the live document meanwhile (items inserted or deleted since the state sent) touches no
 * block the edit touches, else it is refused as a conflict naming those blocks.
 *
 * A revert refuses, naming the blocks, where someone else changed a block the undone changes touched
 * (by block: a top-level element as section reads number them, matched across states by its Yjs item id):
 * undoing there would cut into their text.
 */
import {
  countUpdateWork,
  documentStructs,
  FRAGMENT_NAME,
  ok,
  type Result,
  refuse,
  refuseFor,
  structsAdmitted,
  structsOverMessage,
} from '@collab/doc-schema'
import * as Y from 'yjs'
import { MAX_HISTORY_STATE_BYTES } from '../limits.ts'
import {
  type BlockKey,
  blocksChangedBy,
  blocksChangedSince,
  blocksWere,
  conflictsIn,
  deletionsOf,
  describeConflicts,
  rangesOf,
} from './history-undo-blocks.ts'
import { SPLIT_PART_BYTES, structParts } from './worker/split.ts'

/**
 * One stored state in the scratch document's order, as bytes or base64 text (read in slices and decoded
 * here, on the worker); `tracked`: its changes (since the one before) are undone.
 */
export type UndoStep = { state: Uint8Array | string; tracked: boolean }

/** A state given as bytes or as base64 text. */
function bytesOf(state: Uint8Array | string): Uint8Array {
  return typeof state === 'string' ? new Uint8Array(Buffer.from(state, 'base64')) : state
}

export type UndoOutcome = {
  /** Whether the edit changed anything (a restore of content equal to the version's does not). */
  changed: boolean
  /** Bytes of the edit's update. */
  bytes: number
}

const TRACKED = Symbol('undo tracked')
const OTHERS = Symbol('undo others')

function docOf(state: Uint8Array | null): Y.Doc {
  const doc = new Y.Doc({ gc: false })
  if (state && state.byteLength > 0) Y.applyUpdate(doc, state)
  return doc
}

/** The refusal for a state past MAX_HISTORY_STATE_BYTES (what a restore or revert decodes at once). */
export function tooLarge(bytes: number, field: string, what: string): ReturnType<typeof refuse> | null {
  if (bytes <= MAX_HISTORY_STATE_BYTES) return null
  return refuse(
    'invalid_input',
    `${field}: ${what} holds ${bytes} bytes, over the ${MAX_HISTORY_STATE_BYTES} a restore or revert works on at once; export the version's Markdown and edit the document by sections instead.`,
    field,
  )
}

/** What the documents' worker needs to work out a restore's or revert's edit (planUndo). */
export type UndoInput = {
  /** The state before the first step (bytes or base64 text); null: an empty document. */
  base: Uint8Array | string | null
  steps: readonly UndoStep[]
  /** The live document's state when the action began: the edit is made against it. */
  live: Uint8Array
  /** Refuse where someone else changed a block the tracked steps touched (a revert). */
  checkConflicts: boolean
  /** Track the live document's changes too (a restore: everything since `base` is undone). */
  trackLive?: boolean
  field: string
}

/**
 * An edit larger than this is applied in parts, one a turn of the event loop (applyUndoParts): applying
 * a restore's edit of megabytes in one call held every other client ~35 ms per MiB (8 MiB of prose:
 * ~275 ms of CPU).
 */
export const EDIT_IN_PARTS_BYTES = 2 * SPLIT_PART_BYTES

/** The edit worked out on the worker, and what applying it later must check (applyUndoPlan). */
export type UndoPlan = {
  /**
   * The update to apply, the scratch document's changes beyond `vector`: one update, or (past
   * EDIT_IN_PARTS_BYTES) its structs in parts of SPLIT_PART_BYTES whose dependencies come first, then its
   * deletions; applied in order they make the same document as the whole.
   */
  edit: Uint8Array[]
  /** The state vector of the live state the edit was made against. */
  vector: Uint8Array
  /** That state's deletions, as (client, clock, length) triples. */
  deleted: Float64Array
  /** The top-level blocks (item ids) the edit inserts into, changes or deletes. */
  touched: string[]
  /** Whether the edit changes the content (a restore of content equal to the version's does not). */
  changed: boolean
}

/**
 * Works out the edit that undoes the tracked steps' changes, starting from `base`, against the live state
 * `input.live` (pure: run on the documents' worker). A revert (`checkConflicts`) is refused, changing
 * nothing, when a block the tracked steps changed was changed since by someone else.
 */
export function planUndo(input: UndoInput): Result<UndoPlan> {
  const large = tooLarge(input.live.byteLength, 'slug', 'the document now')
  if (large) return large
  const scratch = docOf(input.base === null ? null : bytesOf(input.base))
  try {
    const scratchFragment = scratch.getXmlFragment(FRAGMENT_NAME)
    const undo = new Y.UndoManager(scratchFragment, {
      trackedOrigins: new Set([TRACKED]),
      captureTimeout: 0,
    })
    // Per block: the last step whose tracked changes touched it; a later untracked change to it conflicts.
    const touchedAt = new Map<BlockKey, number>()
    const conflicting = new Set<BlockKey>()
    let stepIndex = 0
    const watch = (transaction: Y.Transaction) => {
      if (!input.checkConflicts) return
      const tracked = transaction.origin === TRACKED
      for (const key of blocksChangedBy(transaction, scratchFragment)) {
        if (tracked) touchedAt.set(key, stepIndex)
        else if ((touchedAt.get(key) ?? stepIndex) < stepIndex) conflicting.add(key)
      }
    }
    scratch.on('afterTransaction', watch)
    for (const step of input.steps) {
      stepIndex++
      const update = Y.diffUpdate(bytesOf(step.state), Y.encodeStateVector(scratch))
      Y.applyUpdate(scratch, update, step.tracked ? TRACKED : OTHERS)
    }
    // Everything the live document has beyond the steps (typed since the last store): others' changes,
    // unless everything since `base` is to go (a restore).
    stepIndex++
    const rest = Y.diffUpdate(input.live, Y.encodeStateVector(scratch))
    Y.applyUpdate(scratch, rest, input.trackLive ? TRACKED : OTHERS)
    scratch.off('afterTransaction', watch)
    if (conflicting.size > 0) {
      const conflicts = conflictsIn(scratchFragment, conflicting)
      if (conflicts.length > 0) {
        undo.destroy()
        return refuse(
          'conflict',
          `${input.field}: ${blocksWere(conflicts.length, 'these changes touched')} changed since by someone else, so undoing them would cut into that later text: ${describeConflicts(conflicts)}. Edit those blocks by hand (read_document shows them), or restore_version a whole version.`,
          input.field,
        )
      }
    }
    // The scratch document now holds the live state (the versions' items are in it too, and their
    // deletions): what the undo inserts and deletes beyond it is the edit.
    const vectorBefore = Y.decodeStateVector(Y.encodeStateVector(scratch))
    const deleted = deletionsOf(scratch)
    const before = Y.snapshot(scratch)
    while (undo.undoStack.length > 0) undo.undo()
    undo.destroy()
    const changed = !Y.equalSnapshots(before, Y.snapshot(scratch))
    const touched = [...blocksChangedSince(scratch, scratchFragment, vectorBefore, rangesOf(deleted))]
    const vector = Y.encodeStateVectorFromUpdate(input.live)
    const whole = Y.encodeStateAsUpdate(scratch, vector)
    const edit =
      whole.byteLength <= EDIT_IN_PARTS_BYTES
        ? [whole]
        : [
            ...structParts(scratch, Y.decodeStateVector(vector), SPLIT_PART_BYTES),
            Y.encodeStateAsUpdate(scratch, Y.encodeStateVector(scratch)),
          ]
    return ok({ edit, vector, deleted, touched, changed })
  } finally {
    scratch.destroy()
  }
}

/**
 * Applies a plan to `fragment`'s document (inside its transaction) if it is still right: nothing changed
 * since the state it was made against, or nothing that changed is in a block the edit touches. Otherwise
 * refused as a conflict naming those blocks, changing nothing: applied, the edit would delete or change
 * text someone typed while it was worked out.
 */
export function applyUndoPlan(fragment: Y.XmlFragment, plan: UndoPlan, field: string): Result<UndoOutcome> {
  const live = fragment.doc
  if (!live) return refuse('internal', 'document: the live fragment belongs to no document.')
  const vector = Y.decodeStateVector(plan.vector)
  for (const [client, clock] of vector)
    if (Y.getState(live.store, client) < clock)
      return refuse(
        'unavailable',
        `${field}: the document was reloaded without part of the state this was worked out on; call again.`,
        field,
      )
  const moved = blocksChangedSince(live, fragment, vector, rangesOf(plan.deleted))
  const hit = new Set(plan.touched.filter((key) => moved.has(key)))
  if (hit.size > 0) {
    const conflicts = conflictsIn(fragment, hit)
    if (conflicts.length > 0)
      return refuse(
        'conflict',
        `${field}: ${blocksWere(conflicts.length, 'this edit changes')} changed by someone else while it was being worked out, so applying it would cut into their text: ${describeConflicts(conflicts)}. Call again once they pause: the new call counts their changes.`,
        field,
      )
  }
  // What the whole edit inserts (its parts after this one too): a restore brings back every struct it
  // undeletes as a new one, and may not take the document past its item limit.
  const inserted = plan.edit.reduce(
    (sum, part) => sum + (countUpdateWork(part, null, Number.POSITIVE_INFINITY)?.inserted ?? 0),
    0,
  )
  if (inserted > 0 && !structsAdmitted(live, inserted))
    return refuseFor('too_large', `${field}: ${structsOverMessage(documentStructs(live), inserted)}`, field)
  Y.applyUpdate(live, plan.edit[0] ?? new Uint8Array([0, 0]))
  return ok({ changed: plan.changed, bytes: plan.edit.reduce((sum, part) => sum + part.byteLength, 0) })
}

/**
 * The rest of a plan's edit, after the part applyUndoPlan applies (past EDIT_IN_PARTS_BYTES): each applied
 * in a transaction of its own, a turn of the event loop apart (the writer's `rest`), so other clients'
 * messages are served between them. Others' changes meanwhile merge as with any concurrent edit: the
 * parts bring only the edit's own items and deletions, and make the document the whole edit makes.
 */
export function undoRest(plan: UndoPlan): Array<(fragment: Y.XmlFragment) => void> {
  return plan.edit.slice(1).map((part) => (fragment) => {
    if (fragment.doc) Y.applyUpdate(fragment.doc, part)
  })
}
