import * as Y from 'yjs'
import { finishSteps } from './steps.ts'
import { blockPlainTextOf, searchBlockText } from './yjs/plain-text.ts'
import { ELEMENT, type TreeSource } from './yjs/tree-source.ts'

/** Text of the first heading (the title), '' when the document has none. */
export function readTitle(fragment: Y.XmlFragment): string {
  for (const child of fragment.toArray()) {
    if (child instanceof Y.XmlElement && child.nodeName === 'heading') return searchBlockText(child)
  }
  return ''
}

/**
 * Whole-document plain text for full-text search: one block per line, read straight off the Yjs tree.
 * With `maxChars`, the walk stops once that much text is gathered (the result can exceed it by the last
 * block): the search index only keeps a prefix, so a large document need not be read to its end.
 */
export function readPlainText(fragment: Y.XmlFragment, maxChars = Number.POSITIVE_INFINITY): string {
  return finishSteps(plainTextWalk(fragment, maxChars))
}

/**
 * readPlainText as steps, one block each (a generator: `next()` until done, whose value is the text), for
 * a caller that spreads a large document's walk over turns of its event loop. Blocks are followed by
 * their Yjs items, so blocks deleted between steps are skipped and the walk goes on from where it was.
 */
export function* plainTextWalk(
  fragment: Y.XmlFragment,
  maxChars = Number.POSITIVE_INFINITY,
): Generator<void, string, void> {
  const lines: string[] = []
  let chars = 0
  for (let item = fragment._start; item !== null; item = item.right) {
    if (item.deleted || !(item.content instanceof Y.ContentType)) continue
    const element = item.content.type
    if (!(element instanceof Y.XmlElement)) continue
    const text = searchBlockText(element)
    if (text !== '') {
      lines.push(text)
      chars += text.length + 1
      if (chars >= maxChars) break
    }
    yield
  }
  return lines.join('\n')
}

/**
 * `readTitle` and `readPlainText` of a document read through `source` (a stored state read flat,
 * yjs/flat-read.ts), its top-level content in order: the same title and text, with no Y.Doc built.
 */
export function readTitleAndTextOf<N>(
  source: TreeSource<N>,
  topLevel: Iterable<N>,
  maxChars = Number.POSITIVE_INFINITY,
): { title: string; text: string } {
  let title: string | undefined
  const lines: string[] = []
  let chars = 0
  // As readPlainText: the block whose text reaches `maxChars` is the last one read for the text.
  let full = false
  for (const child of topLevel) {
    if (source.kind(child) !== ELEMENT) continue
    const heading = title === undefined && source.name(child) === 'heading'
    if (full && !heading) continue
    const text = blockPlainTextOf(source, child)
    if (heading) title = text
    if (!full && text !== '') {
      lines.push(text)
      chars += text.length + 1
      full = chars >= maxChars
    }
    if (full && title !== undefined) break
  }
  return { title: title ?? '', text: lines.join('\n') }
}
