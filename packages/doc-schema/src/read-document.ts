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

/** Whole-document plain text for full-text search: one block per line, read straight off the Yjs tree. */
export function readPlainText(fragment: Y.XmlFragment): string {
  const lines: string[] = []
  for (const element of topLevelElements(fragment)) {
    const text = blockPlainText(element)
    if (text !== '') lines.push(text)
  }
  return lines.join('\n')
}
