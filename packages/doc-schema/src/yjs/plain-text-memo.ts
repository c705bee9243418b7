/**
 * The title and search text of a long-lived fragment (a document Hocuspocus holds), kept per top-level
 * block: `title()` equals `readTitle(fragment)` and `walk(maxChars)` gives what `plainTextWalk` gives, but a
 * block's plain text is read again only after a change landed under it. The store step refreshes a large
 * document's search text every few seconds of typing; reading every block of it each time cost the server's
 * thread in proportion to the document, not to what was typed (issue 30).
 *
 * How it stays current: a deep observer drops the kept text of the top-level block under every change (an
 * insertion, deletion or format in its text, an attribute of it or of anything inside it). Blocks inserted,
 * removed or moved at the top level need nothing: the walk follows the fragment's items as they are, and a
 * new block has no text kept yet. Observers run when a transaction ends, so call these outside one.
 */
import * as Y from 'yjs'
import { searchBlockText } from './plain-text.ts'

export type PlainTextMemo = {
  /** `readTitle(fragment)`: the text of the first top-level heading, '' without one. */
  title(): string
  /**
   * `plainTextWalk(fragment, maxChars)`: the same text, one step per block whose text had to be read
   * (kept blocks cost no step), so a caller can spread the reads over turns of its event loop.
   */
  walk(maxChars?: number): Generator<void, string, void>
  destroy(): void
}

/** The top-level elements of `fragment` in order, deleted ones skipped (what the full walks visit). */
function* topLevelElements(fragment: Y.XmlFragment): Generator<Y.XmlElement, void, void> {
  for (let item = fragment._start; item !== null; item = item.right) {
    if (item.deleted || !(item.content instanceof Y.ContentType)) continue
    const element = item.content.type
    if (element instanceof Y.XmlElement) yield element
  }
}

export function createPlainTextMemo(fragment: Y.XmlFragment): PlainTextMemo {
  let texts = new WeakMap<Y.XmlElement, string>()
  const observer = (events: Array<Y.YEvent<Y.AbstractType<unknown>>>) => {
    for (const event of events) {
      let target: Y.AbstractType<unknown> | null = event.target
      if (target === fragment) continue // the list of blocks: walked as it is
      while (target && target.parent !== fragment) target = target.parent as Y.AbstractType<unknown> | null
      // Under a block no longer in the fragment: nothing (the walk will not visit it).
      if (target) texts.delete(target as Y.XmlElement)
    }
  }
  fragment.observeDeep(observer)

  /** The block's text and whether it had to be read now. */
  const textOf = (element: Y.XmlElement): [string, boolean] => {
    const kept = texts.get(element)
    if (kept !== undefined) return [kept, false]
    const text = searchBlockText(element)
    texts.set(element, text)
    return [text, true]
  }

  return {
    title() {
      for (const element of topLevelElements(fragment))
        if (element.nodeName === 'heading') return textOf(element)[0]
      return ''
    },
    *walk(maxChars = Number.POSITIVE_INFINITY) {
      const lines: string[] = []
      let chars = 0
      for (const element of topLevelElements(fragment)) {
        const [text, read] = textOf(element)
        if (text !== '') {
          lines.push(text)
          chars += text.length + 1
          if (chars >= maxChars) break
        }
        if (read) yield
      }
      return lines.join('\n')
    },
    destroy() {
      fragment.unobserveDeep(observer)
      texts = new WeakMap()
    },
  }
}

const shared = new WeakMap<Y.XmlFragment, PlainTextMemo>()

/**
 * The plain-text memo of a long-lived fragment, one per fragment, shared by its callers (the title and
 * search refresh, a compaction on the server's thread); it goes with the fragment (weak keys). For a
 * throwaway fragment use `readTitle` and `readPlainText`.
 */
export function livePlainText(fragment: Y.XmlFragment): PlainTextMemo {
  let memo = shared.get(fragment)
  if (!memo) {
    memo = createPlainTextMemo(fragment)
    shared.set(fragment, memo)
  }
  return memo
}
