/**
 * What each large live document was built from: the parts of its load (split on the documents' worker
 * from its stored content) and every change applied to it since, kept in order, so an editor's sync answer
 * can be made on the worker (documents/worker/sync-answer.ts) rather than encoded from the Y.Doc on the
 * event loop (~100-235 ms for a 5 MiB document, once per editor that opens it).
 *
 * Changes are taken from the document's own `update` event, synchronously, from before its first part is
 * applied (the load's parts are applied with the listeners set aside, so they are not counted twice), so
 * nothing that changes the document is missed. Changes are merged every MERGE_CHANGES of them (their
 * bytes laid end to end, doc-schema `mergeInOrder`), and a
 * document whose kept bytes grow past MAX_KEPT_FACTOR times what it was loaded from, plus KEPT_SLACK_BYTES
 * (deleted content stays in updates, not in the document), is given up: its editors are answered by
 * Hocuspocus, as small documents are.
 */
import { mergeInOrder } from '@collab/doc-schema'
import * as Y from 'yjs'
import type { DocumentsService } from '../../documents/service.ts'
import type { Logger } from '../../logger.ts'

/** Changes kept one by one before they are merged into one part. */
export const MERGE_CHANGES = 256
/**
 * Kept bytes past this many times the load's, plus KEPT_SLACK_BYTES, give the document up (answered by
 * Hocuspocus instead).
 */
export const MAX_KEPT_FACTOR = 2
export const KEPT_SLACK_BYTES = 1024 * 1024

type Kept = {
  key: string
  parts: Uint8Array[]
  changes: Uint8Array[]
  bytes: number
  limit: number
  /** How many of `parts` the worker holds merged (it was sent them and answered). */
  sent: number
  /** Removes the document's change listener. */
  stop(): void
}

/** What a document was built from: its key, its parts (load parts, merged changes), its changes since. */
export type KeptUpdates = { key: string; parts: Uint8Array[]; changes: Uint8Array[] }

export class LoadedUpdates {
  private readonly kept = new WeakMap<Y.Doc, Kept>()
  private nextKey = 1

  /** Starts keeping `document`'s updates: `parts` (its load, applied after this) and every change after. */
  keep(document: Y.Doc, parts: Uint8Array[]): void {
    const bytes = parts.reduce((sum, part) => sum + part.byteLength, 0)
    const kept: Kept = {
      key: `sync-${this.nextKey++}`,
      parts: [...parts],
      changes: [],
      bytes,
      limit: bytes * MAX_KEPT_FACTOR + KEPT_SLACK_BYTES,
      sent: 0,
      stop: () => document.off('update', onUpdate),
    }
    this.kept.set(document, kept)
    const onUpdate = (update: Uint8Array) => {
      kept.changes.push(update)
      kept.bytes += update.byteLength
      if (kept.bytes > kept.limit) this.forget(document)
      else if (kept.changes.length >= MERGE_CHANGES) {
        kept.parts.push(mergeInOrder(kept.changes))
        kept.changes = []
      }
    }
    document.on('update', onUpdate)
  }

  /** The updates `document` was built from, in order; undefined when they are not kept. */
  of(document: Y.Doc): KeptUpdates | undefined {
    const kept = this.kept.get(document)
    return kept ? { key: kept.key, parts: [...kept.parts], changes: [...kept.changes] } : undefined
  }

  /** How many of `document`'s parts the worker holds merged (0 when none, or not kept). */
  sentOf(document: Y.Doc): number {
    return this.kept.get(document)?.sent ?? 0
  }

  /** The worker holds `count` of `document`'s parts merged. */
  markSent(document: Y.Doc, count: number): void {
    const kept = this.kept.get(document)
    if (kept) kept.sent = count
  }

  /** Stops keeping `document`'s updates (too many, or found not to match it). */
  forget(document: Y.Doc): void {
    this.kept.get(document)?.stop()
    this.kept.delete(document)
  }
}

/**
 * What an editor with state vector `vector` lacks of `document`, made on the documents' worker from the
 * updates the document was built from (documents/worker/sync-answer.ts), for `userId` (a document whose
 * updates are not kept is kept from its state first); null when the worker's short lane is full or too
 * slow, or what it was made from does not cover the live document (then the updates are no longer kept:
 * Hocuspocus answers from the Y.Doc, as for small ones, and the next large answer keeps them again).
 */
export async function answerFromLoadedUpdates(
  document: Y.Doc,
  vector: Uint8Array,
  userId: string,
  address: string,
  deps: { updates: LoadedUpdates; documents: Pick<DocumentsService, 'syncAnswer'>; logger: Logger },
): Promise<Uint8Array | null> {
  let kept = deps.updates.of(document)
  if (!kept) {
    // Not kept: loaded whole, grown past the size while loaded, or given up. Kept from now on, from its
    // state encoded here once: what Hocuspocus would have encoded for this answer (an empty vector's), so
    // this editor costs the event loop what it did, and later ones nothing.
    deps.updates.keep(document, [Y.encodeStateAsUpdate(document)])
    kept = deps.updates.of(document)
    if (!kept) return null
  }
  // Taken with the parts, in the same turn: what the answer must cover.
  const expected = Y.encodeStateVector(document)
  const base = deps.updates.sentOf(document)
  let made = await deps.documents.syncAnswer(userId, {
    ...kept,
    base,
    parts: kept.parts.slice(base),
    vector,
    address,
  })
  if (made.kind === 'ok' && made.value.stale)
    // The worker no longer holds them merged (it ended when idle, or let them go): all of them, once.
    made = await deps.documents.syncAnswer(userId, { ...kept, base: 0, vector, address })
  if (made.kind === 'error' || made.value.stale) return null
  deps.updates.markSent(document, kept.parts.length)
  if (!sameVector(made.value.covered, expected)) {
    deps.updates.forget(document)
    deps.logger.warn(
      { userId },
      "a live document's kept updates did not cover it; its editors are answered here",
    )
    return null
  }
  return made.value.message
}

function sameVector(a: Uint8Array, b: Uint8Array): boolean {
  const left = Y.decodeStateVector(a)
  const right = Y.decodeStateVector(b)
  if (left.size !== right.size) return false
  for (const [client, clock] of left) if (right.get(client) !== clock) return false
  return true
}
