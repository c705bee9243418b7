/**
 * Pending suggestions of a document (suggestion-marks.ts): listed per proposal (its id), and accepted or
 * rejected by id or all at once.
 *
 * Accepting a proposed insertion drops its mark (the text becomes the document's); accepting a proposed
 * deletion deletes the text. Rejecting does the inverse. A block whose text a decision deletes entirely
 * (a proposed block rejected, a block proposed for removal accepted) is removed with it, and so is a list
 * or quote left with nothing in it; the document's title heading always stays.
 */
import * as Y from 'yjs'
import { HEADING_ID_ATTR } from '../limits.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { SUGGESTION_DELETE, SUGGESTION_INSERT, type SuggestionAttrs } from '../suggestion-marks.ts'

type Op = { insert: unknown; attributes?: Record<string, unknown> }
type Child = Y.XmlElement | Y.XmlText | Y.XmlHook

/** One pending proposal: every piece of it, in document order. */
export type PendingSuggestion = SuggestionAttrs & {
  /** The section of its first piece ('' before the first heading). */
  sectionId: string
  /** Proposed text, pieces joined by a line break (up to `maxChars` each side). */
  inserted: string
  /** Text proposed for deletion, likewise. */
  deleted: string
  /** Characters proposed in all, and proposed for deletion: more than `inserted`/`deleted` when cut. */
  insertedChars: number
  deletedChars: number
}

/** Every Y.XmlText under the fragment in document order, with the section it is in. */
function* textsWithSections(fragment: Y.XmlFragment): Generator<{ text: Y.XmlText; sectionId: string }> {
  let sectionId = ''
  for (const block of fragment.toArray() as Child[]) {
    if (!(block instanceof Y.XmlElement)) continue
    if (block.nodeName === 'heading') {
      const id = block.getAttribute(HEADING_ID_ATTR)
      sectionId = typeof id === 'string' ? id : ''
    }
    const stack: Child[] = [block]
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      if (node instanceof Y.XmlText) yield { text: node, sectionId }
      else if (node instanceof Y.XmlElement) {
        const children = node.toArray() as Child[]
        for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
      }
    }
  }
}

function attrsOf(value: unknown): SuggestionAttrs | undefined {
  if (!value || typeof value !== 'object') return undefined
  const { id, userId, author, at } = value as Record<string, unknown>
  if (typeof id !== 'string' || id === '') return undefined
  return {
    id,
    userId: typeof userId === 'string' ? userId : '',
    author: typeof author === 'string' ? author : '',
    at: typeof at === 'string' ? at : '',
  }
}

/**
 * The document's pending suggestions, in the order their first pieces appear, up to `maxSuggestions`
 * (`more` tells whether there were others). Each piece's text is kept up to `maxChars`.
 */
export function listSuggestions(
  fragment: Y.XmlFragment,
  maxSuggestions: number,
  maxChars: number,
): { suggestions: PendingSuggestion[]; more: boolean } {
  const byId = new Map<string, PendingSuggestion>()
  let more = false
  const add = (attrs: SuggestionAttrs, sectionId: string, kind: 'inserted' | 'deleted', text: string) => {
    let entry = byId.get(attrs.id)
    if (!entry) {
      if (byId.size >= maxSuggestions) {
        more = true
        return
      }
      entry = { ...attrs, sectionId, inserted: '', deleted: '', insertedChars: 0, deletedChars: 0 }
      byId.set(attrs.id, entry)
    }
    const count = kind === 'inserted' ? 'insertedChars' : 'deletedChars'
    const shown = entry[kind]
    const room = maxChars - shown.length
    if (room > 0) entry[kind] = shown + (shown && entry[count] > 0 ? '\n' : '') + text.slice(0, room)
    entry[count] += text.length
  }
  for (const { text, sectionId } of textsWithSections(fragment)) {
    for (const op of text.toDelta() as Op[]) {
      if (typeof op.insert !== 'string') continue
      const inserted = attrsOf(op.attributes?.[SUGGESTION_INSERT])
      const deleted = attrsOf(op.attributes?.[SUGGESTION_DELETE])
      if (inserted) add(inserted, sectionId, 'inserted', op.insert)
      if (deleted) add(deleted, sectionId, 'deleted', op.insert)
    }
  }
  return { suggestions: [...byId.values()], more }
}

export type Decision = 'accept' | 'reject'

/**
 * Accepts or rejects the suggestions of `ids` (every pending one when `ids` is 'all') in one transaction.
 * Returns the ids decided; an id that is not pending is refused before anything changes.
 */
export function decideSuggestions(
  fragment: Y.XmlFragment,
  ids: readonly string[] | 'all',
  decision: Decision,
): Result<{ decided: string[] }> {
  const doc = fragment.doc
  if (!doc) return refuseFor('detached', 'fragment: it belongs to no Y.Doc.')
  const wanted = ids === 'all' ? undefined : new Set(ids)
  // Per text, its runs to change: [start, length, keep-or-delete] with the key to clear.
  type Run = { index: number; length: number; remove: boolean; key: string }
  const plans: Array<{ text: Y.XmlText; runs: Run[] }> = []
  const found = new Set<string>()
  for (const { text } of textsWithSections(fragment)) {
    const runs: Run[] = []
    let index = 0
    for (const op of text.toDelta() as Op[]) {
      const length = typeof op.insert === 'string' ? op.insert.length : 1
      for (const key of [SUGGESTION_INSERT, SUGGESTION_DELETE]) {
        const attrs = attrsOf(op.attributes?.[key])
        if (!attrs || (wanted && !wanted.has(attrs.id))) continue
        found.add(attrs.id)
        // Accepting an insertion or rejecting a deletion keeps the text; the other two delete it.
        const remove = (key === SUGGESTION_INSERT) === (decision === 'reject')
        runs.push({ index, length, remove, key })
      }
      index += length
    }
    if (runs.length > 0) plans.push({ text, runs })
  }
  if (wanted) {
    const missing = [...wanted].filter((id) => !found.has(id))
    if (missing.length > 0)
      return refuseFor(
        'suggestion_not_found',
        `ids: ${missing.map((id) => `"${id}"`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not a pending suggestion of this document; call list_suggestions for the pending ones.`,
        'ids',
      )
  }
  const decided = [...found]
  if (decided.length === 0) return ok({ decided })
  doc.transact(() => {
    const emptied: Y.XmlText[] = []
    for (const { text, runs } of plans) {
      const hadText = text.length > 0
      // Right to left, so each run's index stays valid; a run both kinds cover is deleted once.
      const sorted = [...runs].sort((a, b) => b.index - a.index || Number(b.remove) - Number(a.remove))
      let deletedFrom = Number.POSITIVE_INFINITY
      for (const run of sorted) {
        if (run.index + run.length > deletedFrom) continue
        if (run.remove) {
          text.delete(run.index, run.length)
          deletedFrom = run.index
        } else text.format(run.index, run.length, { [run.key]: null })
      }
      if (hadText && text.length === 0) emptied.push(text)
    }
    for (const text of emptied) removeEmptied(fragment, text)
  })
  return ok({ decided })
}

/** Removes the block a decision emptied, and the containers it leaves empty; never the title heading. */
function removeEmptied(fragment: Y.XmlFragment, text: Y.XmlText): void {
  let node: Y.XmlElement | Y.XmlText | Y.XmlFragment = text
  for (;;) {
    const parent: Y.XmlElement | Y.XmlFragment | null = node.parent as Y.XmlElement | Y.XmlFragment | null
    if (!parent) return
    if (parent === fragment) {
      const index = fragment.toArray().indexOf(node as Y.XmlElement)
      const isTitle = index === 0 && (node as Y.XmlElement).nodeName === 'heading'
      if (index >= 0 && !isTitle) fragment.delete(index, 1)
      return
    }
    const siblings = parent.toArray()
    if (siblings.length > 1 || !(parent instanceof Y.XmlElement)) {
      const index = siblings.indexOf(node as Y.XmlElement)
      if (index >= 0 && !(node instanceof Y.XmlText)) parent.delete(index, 1)
      return
    }
    node = parent
  }
}
