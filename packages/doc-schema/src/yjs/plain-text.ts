import type * as Y from 'yjs'
import { isProposedInsertion } from '../suggestion-marks.ts'
import { ELEMENT, TEXT, type TreeSource, Y_TREE } from './tree-source.ts'

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
function acceptedTextString<N>(source: TreeSource<N>, text: N): string {
  let out = ''
  for (const op of source.delta(text)) {
    if (typeof op.insert === 'string' && !isProposedInsertion(op.attributes)) out += op.insert
  }
  return out
}

/** Inline text of an element: its text runs, hard breaks as newlines, nested inline elements in order. */
function inlineText<N>(source: TreeSource<N>, element: N): string {
  let out = ''
  const stack: N[] = source.children(element).reverse()
  for (let child = stack.pop(); child !== undefined; child = stack.pop()) {
    const kind = source.kind(child)
    if (kind === TEXT) out += acceptedTextString(source, child)
    else if (kind === ELEMENT) {
      if (source.name(child) === 'hardBreak') out += '\n'
      else pushReversed(stack, source.children(child))
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
  return blockPlainTextOf(Y_TREE, element)
}

/** `blockPlainText` of a block read through `source` (a stored state read flat): the same text. */
export function blockPlainTextOf<N>(source: TreeSource<N>, element: N): string {
  const lines: string[] = []
  const stack: N[] = [element]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const kind = source.kind(node)
    if (kind === TEXT) {
      const text = acceptedTextString(source, node)
      if (text !== '') lines.push(text)
      continue
    }
    if (kind !== ELEMENT) continue
    const children = source.children(node)
    if (children.length === 0) {
      const alt = source.attribute(node, 'alt')
      const src = source.attribute(node, 'src')
      const text = typeof alt === 'string' && alt ? alt : typeof src === 'string' ? src : ''
      if (text !== '') lines.push(text)
      continue
    }
    const hasBlocks = children.some(
      (child) => source.kind(child) === ELEMENT && source.name(child) !== 'hardBreak',
    )
    if (hasBlocks) pushReversed(stack, children)
    else {
      const text = inlineText(source, node)
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
