import * as Y from 'yjs'
import { blockPlainText } from './yjs/plain-text.ts'
import { topLevelElements } from './yjs/read-y.ts'

/** Text of the first heading (the title), '' when the document has none. */
export function readTitle(fragment: Y.XmlFragment): string {
  for (const child of fragment.toArray()) {
    if (child instanceof Y.XmlElement && child.nodeName === 'heading') return blockPlainText(child)
  }
  return ''
}

/**
 * Whole-document plain text for full-text search: one block per line, read straight off the Yjs tree.
 * With `maxChars`, the walk stops once that much text is gathered (the result can exceed it by the last
 * block): the search index only keeps a prefix, so a large document need not be read to its end.
 */
export function readPlainText(fragment: Y.XmlFragment, maxChars = Number.POSITIVE_INFINITY): string {
  const lines: string[] = []
  let chars = 0
  for (const element of topLevelElements(fragment)) {
    const text = blockPlainText(element)
    if (text === '') continue
    lines.push(text)
    chars += text.length + 1
    if (chars >= maxChars) break
  }
  return lines.join('\n')
}
