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

/** The stretches of `text` that are inserted text under a suggestion mark opened before the update. */
function stretches(text: Y.XmlText, ranges: readonly InsertedText[]): Range[] {
  const open = new Map<string, Y.Item>()
  const out: Range[] = []
  let index = 0
  for (let item = text._start; item; item = item.right) {
    if (item.deleted) continue
    const content = item.content
    if (content instanceof Y.ContentFormat) {
      // Most format items are other marks (a paragraph of 10,000 marks: 20,000 of them, walked on every
      // keystroke in it): their name is told apart before the key's pattern is run.
      const dash = content.key.indexOf('--')
      if (!SUGGESTION_MARKS.includes(dash < 0 ? content.key : content.key.slice(0, dash))) continue
      const name = MARK_KEY.exec(content.key)?.[1]
      if (!name || !SUGGESTION_MARKS.includes(name)) continue
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
  return out
}

/** Where an update's inserted text sits inside a suggestion opened before it: per text, its stretches. */
export type OwnTextMarks = { text: Y.XmlText; stretches: Range[] }[]

/** Finds the stretches `unmarkOwnText` ends (no change made: most updates have none). */
export function ownTextMarks(doc: Y.Doc, ranges: readonly InsertedText[]): OwnTextMarks {
  const out: OwnTextMarks = []
  for (const text of textsOf(doc, ranges)) {
    const found = stretches(text, ranges)
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
