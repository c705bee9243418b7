import * as Y from 'yjs'
import { isProposedInsertion } from '../suggestion-marks.ts'

type YChild = Y.XmlElement | Y.XmlText | Y.XmlHook

/*
 * Every walk in this file is iterative (an explicit stack): a document chooses its nesting depth, so a
 * recursive walk let one editor overflow the stack (a blockquote nested 50,000 deep failed every store).
 */

/** Text of a Y.XmlText without mark tags (`toString()` would include them). */
export function yTextString(text: Y.XmlText): string {
  let out = ''
  for (const op of text.toDelta() as { insert: unknown }[]) {
    if (typeof op.insert === 'string') out += op.insert
  }
  return out
}

/**
 * Accepted text of a Y.XmlText (plain text, search): without proposed insertions; text proposed for
 * deletion stays until the deletion is accepted (suggestion-marks.ts).
 */
function acceptedTextString(text: Y.XmlText): string {
  let out = ''
  for (const op of text.toDelta() as { insert: unknown; attributes?: Record<string, unknown> }[]) {
    if (typeof op.insert === 'string' && !isProposedInsertion(op.attributes)) out += op.insert
  }
  return out
}

/** Inline text of an element: its text runs, hard breaks as newlines, nested inline elements in order. */
function inlineText(element: Y.XmlElement): string {
  let out = ''
  const stack: YChild[] = (element.toArray() as YChild[]).reverse()
  for (let child = stack.pop(); child !== undefined; child = stack.pop()) {
    if (child instanceof Y.XmlText) out += acceptedTextString(child)
    else if (child instanceof Y.XmlElement) {
      if (child.nodeName === 'hardBreak') out += '\n'
      else pushReversed(stack, child.toArray() as YChild[])
    }
  }
  return out
}

/**
 * Plain text of a block (accepted text: proposed insertions left out): a text block gives its text, a container gives its text blocks one per line,
 * media gives its alt text or URL so a search for it finds the document.
 *
 * A container's text is its children's non-empty texts joined by newlines; as that holds at every level,
 * it equals the non-empty texts of the leaves (text blocks, media, text directly in a container) in
 * document order, joined once, which is what the walk gathers.
 */
export function blockPlainText(element: Y.XmlElement): string {
  const lines: string[] = []
  const stack: YChild[] = [element]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node instanceof Y.XmlText) {
      const text = acceptedTextString(node)
      if (text !== '') lines.push(text)
      continue
    }
    if (!(node instanceof Y.XmlElement)) continue
    const children = node.toArray() as YChild[]
    if (children.length === 0) {
      const alt = node.getAttribute('alt')
      const src = node.getAttribute('src')
      const text = typeof alt === 'string' && alt ? alt : typeof src === 'string' ? src : ''
      if (text !== '') lines.push(text)
      continue
    }
    const hasBlocks = children.some(
      (child) => child instanceof Y.XmlElement && child.nodeName !== 'hardBreak',
    )
    if (hasBlocks) pushReversed(stack, children)
    else {
      const text = inlineText(node)
      if (text !== '') lines.push(text)
    }
  }
  return lines.join('\n')
}

/** Top-level blocks read for a title or search text (`searchBlockText`) since the process started. */
let blocksRead = 0

/**
 * `blockPlainText` of a top-level block read for a document's title or search text (read-document.ts's
 * walks, plain-text-memo.ts), counted: `plainTextBlocksRead` tells a test what a refresh read again.
 */
export function searchBlockText(element: Y.XmlElement): string {
  blocksRead++
  return blockPlainText(element)
}

/** How many top-level blocks were read for a title or search text since the process started (tests). */
export function plainTextBlocksRead(): number {
  return blocksRead
}

/** Pushes `items` so that popping the stack visits them in their order. */
function pushReversed<T>(stack: T[], items: readonly T[]): void {
  for (let i = items.length - 1; i >= 0; i--) stack.push(items[i]!)
}
