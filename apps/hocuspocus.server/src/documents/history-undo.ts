/**
 * Restoring a version and reverting changes (issue 27; docs/history.md "Restore and revert"), both as ONE
 * new edit on the live document, so editors see it at once and it is stored, attributed and versioned as
 * any edit is.
 *
 * Both use Yjs's own selective undo: a scratch document (gc off) is rebuilt from the stored states in
 * order, each step applied with an origin that a Y.UndoManager tracks (the changes to undo) or does not
 * (everyone else's), the live document's own changes last and untracked; undoing the tracked steps then
 * deletes exactly the items they inserted and re-inserts what they deleted, leaving everyone else's items
 * alone. The scratch document's changes since the live state are the edit. A restore is the case where
 * every change since the version is tracked, so the content becomes the version's.
 *
 * A revert refuses, naming the blocks, where someone else changed a block the undone changes touched
 * (by block: a top-level element as section reads number them, matched across states by its Yjs item id):
 * undoing there would cut into their text. The live state is read inside the edit's transaction, so what
 * was typed a moment before is counted.
 */
import { blockMarkdown, FRAGMENT_NAME, HEADING_ID_ATTR, ok, type Result, refuse } from '@collab/doc-schema'
import * as Y from 'yjs'
import { MAX_HISTORY_STATE_BYTES } from '../limits.ts'

/** One stored state in the scratch document's order; `tracked`: its changes (since the one before) are undone. */
export type UndoStep = { state: Uint8Array; tracked: boolean }

/** A block the undone changes touched and someone changed since: where it is now. */
export type UndoConflict = {
  sectionId: string
  sectionTitle: string
  /** Its number in its section now, as section reads number them (the heading is 0). */
  block: number
  /** The block's start now. */
  text: string
}

export type UndoOutcome = {
  /** Whether the edit changed anything (a restore of content equal to the version's does not). */
  changed: boolean
  /** Bytes of the edit's update. */
  bytes: number
}

/** Conflicts a refusal names at most (the count is exact). */
export const MAX_NAMED_CONFLICTS = 10
/** Characters of a conflicting block's start a refusal quotes. */
const CONFLICT_QUOTE_CHARS = 60

const TRACKED = Symbol('undo tracked')
const OTHERS = Symbol('undo others')

type BlockKey = string

function keyOf(element: Y.XmlElement): BlockKey | null {
  const item = element._item
  return item ? `${item.id.client}:${item.id.clock}` : null
}

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

/**
 * The top-level blocks one transaction of the scratch document changed: the block holding each type it
 * changed (text typed, attributes set, children inserted or deleted inside), and each block it inserted.
 * Structural (no rendering): Yjs names the changed types, and a block's key is its item id.
 */
function blocksChangedBy(transaction: Y.Transaction, fragment: Y.XmlFragment): Set<BlockKey> {
  const keys = new Set<BlockKey>()
  for (const type of transaction.changed.keys()) {
    let block: Y.AbstractType<any> | null = type
    while (block?._item && block._item.parent !== fragment) block = block._item.parent as Y.AbstractType<any>
    if (block?._item && block instanceof Y.XmlElement) {
      const key = keyOf(block)
      if (key) keys.add(key)
    }
  }
  if (transaction.changed.has(fragment as Y.AbstractType<any>))
    for (const child of fragment.toArray()) {
      const item = child instanceof Y.XmlElement ? child._item : null
      if (item && item.id.clock >= (transaction.beforeState.get(item.id.client) ?? 0)) {
        const key = keyOf(child as Y.XmlElement)
        if (key) keys.add(key)
      }
    }
  return keys
}

/** The blocks in conflict that are still there: where they are now. */
function conflictsIn(fragment: Y.XmlFragment, keys: ReadonlySet<BlockKey>): UndoConflict[] {
  const conflicts: UndoConflict[] = []
  let sectionId = ''
  let sectionTitle = ''
  let block = 0
  for (const child of fragment.toArray()) {
    if (!(child instanceof Y.XmlElement)) continue
    if (child.nodeName === 'heading') {
      const id = child.getAttribute(HEADING_ID_ATTR)
      sectionId = typeof id === 'string' ? id : ''
      sectionTitle = blockMarkdown(child).replace(/^#+\s*/, '')
      block = 0
    } else block++
    const key = keyOf(child)
    if (!key || !keys.has(key)) continue
    const text = blockMarkdown(child).slice(0, CONFLICT_QUOTE_CHARS)
    conflicts.push({ sectionId, sectionTitle, block, text })
  }
  return conflicts
}

/** How a refusal names conflicts: `"Intro" [section_id: …] block 2 ("Hello…")`, the first MAX_NAMED_CONFLICTS. */
export function describeConflicts(conflicts: readonly UndoConflict[]): string {
  const named = conflicts.slice(0, MAX_NAMED_CONFLICTS).map((c) => {
    const where = c.sectionId
      ? `section "${c.sectionTitle}" [section_id: ${c.sectionId}]`
      : 'the blocks before the first heading'
    return `${where} block ${c.block} ("${c.text.replace(/\s+/g, ' ')}")`
  })
  const more = conflicts.length - named.length
  return `${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`
}

/**
 * Applies to `fragment`'s document (inside its transaction) the edit that undoes the tracked steps' changes,
 * starting from `base` (the state before the first step; null: an empty document). With `checkConflicts`,
 * refuses (changing nothing) when a block the tracked steps changed was changed since by someone else.
 */
export function applyUndo(
  fragment: Y.XmlFragment,
  base: Uint8Array | null,
  steps: readonly UndoStep[],
  options: {
    /** Refuse where someone else changed a block the tracked steps touched (a revert). */
    checkConflicts: boolean
    /** Track the live document's changes too (a restore: everything since `base` is undone). */
    trackLive?: boolean
    field: string
  },
): Result<UndoOutcome & { conflicts: UndoConflict[] }> {
  const live = fragment.doc
  if (!live) return refuse('internal', 'document: the live fragment belongs to no document.')
  const liveState = Y.encodeStateAsUpdate(live)
  const large = tooLarge(liveState.byteLength, 'slug', 'the document now')
  if (large) return large
  const scratch = docOf(base)
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
      if (!options.checkConflicts) return
      const tracked = transaction.origin === TRACKED
      for (const key of blocksChangedBy(transaction, scratchFragment)) {
        if (tracked) touchedAt.set(key, stepIndex)
        else if ((touchedAt.get(key) ?? stepIndex) < stepIndex) conflicting.add(key)
      }
    }
    scratch.on('afterTransaction', watch)
    for (const step of steps) {
      stepIndex++
      const update = Y.diffUpdate(step.state, Y.encodeStateVector(scratch))
      Y.applyUpdate(scratch, update, step.tracked ? TRACKED : OTHERS)
    }
    // Everything the live document has beyond the steps (typed since the last store): others' changes,
    // unless everything since `base` is to go (a restore).
    stepIndex++
    const rest = Y.diffUpdate(liveState, Y.encodeStateVector(scratch))
    Y.applyUpdate(scratch, rest, options.trackLive ? TRACKED : OTHERS)
    scratch.off('afterTransaction', watch)
    if (conflicting.size > 0) {
      const conflicts = conflictsIn(fragment, conflicting)
      if (conflicts.length > 0) {
        undo.destroy()
        return refuse(
          'conflict',
          `${options.field}: ${conflicts.length} block${conflicts.length === 1 ? '' : 's'} these changes touched ${conflicts.length === 1 ? 'was' : 'were'} changed since by someone else, so undoing them would cut into that later text: ${describeConflicts(conflicts)}. Edit those blocks by hand (read_document shows them), or restore_version a whole version.`,
          options.field,
        )
      }
    }
    while (undo.undoStack.length > 0) undo.undo()
    undo.destroy()
    const edit = Y.encodeStateAsUpdate(scratch, Y.encodeStateVector(live))
    const before = Y.snapshot(live)
    Y.applyUpdate(live, edit)
    const changed = !Y.equalSnapshots(before, Y.snapshot(live))
    return ok({ changed, bytes: edit.byteLength, conflicts: [] })
  } finally {
    scratch.destroy()
  }
}
