/**
 * An editor's new text is the person's own: where it lands inside a suggestion (an agent's proposed
 * insertion, or text proposed for deletion) it takes on that suggestion's mark without writing one, since
 * Yjs writes no format item when the new text's attributes equal those around it. The boundary cannot
 * refuse that (it is what an editor without the web page's plugin does on every keystroke there, and a
 * refusal closes the person's document), so after applying the update the server ends the mark over the
 * new text, as one small Yjs edit every editor sees (`unmarkOwnText`), the way heading ids are repaired.
 * Text whose suggestion mark the same update itself opened (a format item of its own: an undo restoring
 * a rejected proposal) is left as it is: the boundary already checked that value (check-update.ts).
 */
import * as Y from 'yjs'
import { SUGGESTION_MARKS } from '../suggestion-marks.ts'
import { MARK_KEY } from './check-deletions.ts'
import { eachNewStruct } from './top-level-changes.ts'

/** Text an update inserted: `length` clocks from `id` (split items are looked up again after applying). */
export type InsertedText = { id: Y.ID; length: number }

type Range = { index: number; length: number; key: string }

const inserted = (ranges: readonly InsertedText[], id: Y.ID) =>
  ranges.some((r) => r.id.client === id.client && id.clock >= r.id.clock && id.clock < r.id.clock + r.length)

/** The texts holding the inserted items (live ones only). */
function textsOf(doc: Y.Doc, ranges: readonly InsertedText[]): Set<Y.XmlText> {
  const texts = new Set<Y.XmlText>()
  for (const range of ranges) {
    for (let clock = range.id.clock; clock < range.id.clock + range.length; ) {
      let item: Y.Item | Y.GC
      try {
        item = Y.getItem(doc.store, Y.createID(range.id.client, clock)) as Y.Item | Y.GC
      } catch {
        break
      }
      if (item instanceof Y.Item && item.parent instanceof Y.XmlText) texts.add(item.parent)
      clock = item.id.clock + item.length
    }
  }
  return texts
}

/** Whether a format item's key is a suggestion mark's (most are other marks: their name is told apart first). */
function isSuggestionKey(key: string): boolean {
  const dash = key.indexOf('--')
  if (!SUGGESTION_MARKS.includes(dash < 0 ? key : key.slice(0, dash))) return false
  const name = MARK_KEY.exec(key)?.[1]
  return name !== undefined && SUGGESTION_MARKS.includes(name)
}

/**
 * Per document, the texts already walked once, and those that hold a suggestion mark's format item (or
 * did: one deleted since still counts). Every transaction's new format items are looked at as they come
 * (their cost follows the change), so a text walked once and holding none is not walked again: a
 * keystroke in a paragraph of 10,000 marks walked its 30,000 items every time, a few ms each, and one
 * user's sockets could send thousands a second.
 */
type Tracker = { walked: WeakSet<Y.XmlText>; marked: WeakSet<Y.XmlText> }
const trackers = new WeakMap<Y.Doc, Tracker>()

function trackerOf(doc: Y.Doc): Tracker {
  const known = trackers.get(doc)
  if (known) return known
  const tracker: Tracker = { walked: new WeakSet(), marked: new WeakSet() }
  doc.on('afterTransaction', (transaction: Y.Transaction) =>
    eachNewStruct(transaction, (struct) => {
      if (
        struct instanceof Y.Item &&
        struct.content instanceof Y.ContentFormat &&
        struct.parent instanceof Y.XmlText &&
        isSuggestionKey(struct.content.key)
      )
        tracker.marked.add(struct.parent)
    }),
  )
  trackers.set(doc, tracker)
  return tracker
}

/**
 * The stretches of `text` that are inserted text under a suggestion mark opened before the update, and
 * the items walked to find them; `marked` whether the text holds a suggestion mark's format item.
 */
function stretches(
  text: Y.XmlText,
  ranges: readonly InsertedText[],
): { found: Range[]; walked: number; marked: boolean } {
  const open = new Map<string, Y.Item>()
  const out: Range[] = []
  let index = 0
  let walked = 0
  let marked = false
  for (let item = text._start; item; item = item.right) {
    walked++
    if (item.deleted) continue
    const content = item.content
    if (content instanceof Y.ContentFormat) {
      if (!isSuggestionKey(content.key)) continue
      marked = true
      if (content.value === null) open.delete(content.key)
      else open.set(content.key, item)
      continue
    }
    if (!item.countable) continue
    if (open.size > 0 && content instanceof Y.ContentString && inserted(ranges, item.id)) {
      for (const [key, opener] of open) {
        if (inserted(ranges, opener.id)) continue
        const last = out.at(-1)
        if (last && last.key === key && last.index + last.length === index) last.length += item.length
        else out.push({ index, length: item.length, key })
      }
    }
    index += item.length
  }
  return { found: out, walked, marked }
}

/** Where an update's inserted text sits inside a suggestion opened before it: per text, its stretches. */
export type OwnTextMarks = { text: Y.XmlText; stretches: Range[] }[]

/**
 * Finds the stretches `unmarkOwnText` ends (no change made: most updates have none). A text is walked
 * only if it holds a suggestion mark's format item, or has not been walked before; `cost.walked` is
 * given the items walked (the boundary charges them to the editor's share).
 */
export function ownTextMarks(
  doc: Y.Doc,
  ranges: readonly InsertedText[],
  cost?: { walked: number },
): OwnTextMarks {
  const out: OwnTextMarks = []
  const tracker = trackerOf(doc)
  for (const text of textsOf(doc, ranges)) {
    if (tracker.walked.has(text) && !tracker.marked.has(text)) continue
    const { found, walked, marked } = stretches(text, ranges)
    tracker.walked.add(text)
    if (marked) tracker.marked.add(text)
    if (cost) cost.walked += walked
    if (found.length > 0) out.push({ text, stretches: found })
  }
  return out
}

/**
 * Ends the suggestion marks over the stretches found; returns the characters unmarked. Call right after
 * applying the update, inside a transaction with the repair's origin.
 */
export function unmarkOwnText(marks: OwnTextMarks): number {
  let unmarked = 0
  for (const { text, stretches } of marks) {
    for (const { index, length, key } of stretches) {
      text.format(index, length, { [key]: null })
      unmarked += length
    }
  }
  return unmarked
}
