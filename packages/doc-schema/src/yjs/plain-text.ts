import * as Y from 'yjs'

type YChild = Y.XmlElement | Y.XmlText | Y.XmlHook

/** Text of a Y.XmlText without mark tags (`toString()` would include them). */
export function yTextString(text: Y.XmlText): string {
  let out = ''
  for (const op of text.toDelta() as { insert: unknown }[]) {
    if (typeof op.insert === 'string') out += op.insert
  }
  return out
}

/** Inline text of an element: its text runs, hard breaks as newlines. */
function inlineText(element: Y.XmlElement): string {
  let out = ''
  for (const child of element.toArray() as YChild[]) {
    if (child instanceof Y.XmlText) out += yTextString(child)
    else if (child instanceof Y.XmlElement) out += child.nodeName === 'hardBreak' ? '\n' : inlineText(child)
  }
  return out
}

/**
 * Plain text of a block: a text block gives its text, a container gives its text blocks one per line,
 * media gives its alt text or URL so a search for it finds the document.
 */
export function blockPlainText(element: Y.XmlElement): string {
  const children = element.toArray() as YChild[]
  const hasBlocks = children.some((child) => child instanceof Y.XmlElement && child.nodeName !== 'hardBreak')
  if (children.length === 0) {
    const alt = element.getAttribute('alt')
    const src = element.getAttribute('src')
    return typeof alt === 'string' && alt ? alt : typeof src === 'string' ? src : ''
  }
  if (!hasBlocks) return inlineText(element)
  const lines: string[] = []
  for (const child of children) {
    if (child instanceof Y.XmlElement) lines.push(blockPlainText(child))
    else if (child instanceof Y.XmlText) lines.push(yTextString(child))
  }
  return lines.filter((line) => line !== '').join('\n')
}
