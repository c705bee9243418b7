import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import { appendMarkdown } from '../edits/append-markdown.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { lastSection } from '../sections/section-index.ts'
import { blocksToY } from '../yjs/build-y.ts'
import { lastListItem, lastLiveItem } from '../yjs/list-end.ts'
import { element, paragraph, seededRandom } from './yjs-builders.ts'

/** The end as Yjs's own list gives it: walked from `_start`. */
function walkedEnd<E>(type: Y.AbstractType<E>): Y.Item | null {
  let item = type._start
  while (item?.right) item = item.right
  return item
}

/** The item `insert(type.length, …)` inserts after: the last one not deleted that counts. */
function walkedLive<E>(type: Y.AbstractType<E>): Y.Item | null {
  let last: Y.Item | null = null
  for (let item = type._start; item; item = item.right) if (!item.deleted && item.countable) last = item
  return last
}

const sync = (from: Y.Doc, to: Y.Doc) =>
  Y.applyUpdate(to, Y.encodeStateAsUpdate(from, Y.encodeStateVector(to)))

describe('lastListItem / lastLiveItem', () => {
  test('an empty fragment has no end', () => {
    const fragment = new Y.Doc().getXmlFragment(FRAGMENT_NAME)
    expect(lastListItem(fragment)).toBeNull()
    expect(lastLiveItem(fragment)).toBeNull()
  })

  test('agree with a walk from the start through 400 random edits of two clients', () => {
    const random = seededRandom(20261205)
    const a = new Y.Doc()
    const b = new Y.Doc()
    const fa = a.getXmlFragment(FRAGMENT_NAME)
    const fb = b.getXmlFragment(FRAGMENT_NAME)
    let deletedTail = 0
    for (let step = 0; step < 400; step++) {
      const fragment = random() < 0.7 ? fa : fb
      const roll = random()
      if (roll < 0.45 || fragment.length === 0) {
        const at = Math.floor(random() * (fragment.length + 1))
        const count = 1 + Math.floor(random() * 3)
        fragment.insert(
          at,
          Array.from({ length: count }, (_, i) => paragraph(`p${step}.${i}`)),
        )
      } else if (roll < 0.8) {
        // A third of the deletions take the end.
        const at =
          roll < 0.57
            ? Math.max(0, fragment.length - 1 - Math.floor(random() * 3))
            : Math.floor(random() * fragment.length)
        const count = Math.min(fragment.length - at, 1 + Math.floor(random() * 3))
        if (at + count === fragment.length) deletedTail++
        fragment.delete(at, count)
      } else {
        // Both append at once, then meet: concurrent items at the end from two clients.
        fa.push([paragraph(`a${step}`)])
        fb.push([paragraph(`b${step}`)])
      }
      if (random() < 0.5) {
        sync(a, b)
        sync(b, a)
      }
      for (const f of [fa, fb]) {
        expect(lastListItem(f)).toBe(walkedEnd(f))
        expect(lastLiveItem(f)).toBe(walkedLive(f))
      }
    }
    // The run went through the cases that matter: deletions at the end, and the documents met.
    expect(deletedTail).toBeGreaterThan(10)
    sync(a, b)
    sync(b, a)
    expect(fa.toJSON()).toBe(fb.toJSON())
  })

  test('an end item merged into its left neighbour is not trusted', () => {
    const doc = new Y.Doc()
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    // Empty elements of one client, one transaction: consecutive clocks, so once deleted (and collected)
    // the last one merges into the one before it when the deleting transaction ends.
    fragment.insert(0, [element('paragraph'), element('paragraph'), element('paragraph')])
    const kept = lastListItem(fragment)
    expect(kept).not.toBeNull()
    expect(kept).toBe(walkedEnd(fragment))
    fragment.delete(1, 2)
    const structs = doc.store.clients.get(doc.clientID)!
    // The premise: the kept item is no longer a struct of the store (merged away).
    expect(structs.some((struct) => struct === kept)).toBe(false)
    expect(lastListItem(fragment)).toBe(walkedEnd(fragment))
    expect(lastListItem(fragment)).not.toBe(kept)
    expect(lastLiveItem(fragment)).toBe(fragment._start)
  })

  test("appendMarkdown makes the same update as Yjs's insert at the fragment's length", () => {
    const make = () => {
      const doc = new Y.Doc()
      doc.clientID = 7
      const fragment = doc.getXmlFragment(FRAGMENT_NAME)
      fragment.insert(0, [
        element('heading', { level: 1 }, [new Y.XmlText('Title')]),
        ...Array.from({ length: 20 }, (_, i) => paragraph(`p${i}`)),
      ])
      fragment.delete(18, 3) // deleted blocks at the end: Yjs inserts after the last live one
      lastListItem(fragment) // an end kept from before the next edits
      fragment.insert(5, [paragraph('middle')])
      return { doc, fragment }
    }
    const ours = make()
    const theirs = make()
    const markdown = 'first\n\nsecond'
    expect(appendMarkdown(ours.fragment, markdown).kind).toBe('ok')
    const parsed = parseMarkdown(markdown, { allowTitle: false })
    if (parsed.kind !== 'ok') throw new Error('parse')
    theirs.fragment.insert(theirs.fragment.length, blocksToY(parsed.value))
    expect(Y.encodeStateAsUpdate(ours.doc)).toEqual(Y.encodeStateAsUpdate(theirs.doc))
    expect(lastSection(ours.fragment)?.blocks.length).toBe(17 + 1 + 2)
  })
})
