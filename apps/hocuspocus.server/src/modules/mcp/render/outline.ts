/**
 * Outline rendering: one line per heading, in tree (document) order, indented two spaces per depth, each
 * with its section's approximate size; and the line before the frame that sizes the whole document.
 */
import type { OutlineNode } from '@collab/doc-schema'
import { MAX_READ_CHARS } from '../limits.ts'
import { escapeFrameContent } from './frame.ts'

/**
 * Every heading in tree order, each as its rendered line (content escaped for the frame):
 * `<title> [section_id: <id>, ~<size> chars]`. No rev: an edit takes the rev a section read prints.
 */
export function outlineLines(roots: readonly OutlineNode[]): string[] {
  const lines: string[] = []
  const visit = (node: OutlineNode, depth: number) => {
    const id = node.sectionId === '' ? '(none)' : node.sectionId
    const title = escapeFrameContent(node.title)
    lines.push(`${'  '.repeat(depth)}${title} [section_id: ${id}, ~${approximate(node.size)} chars]`)
    for (const child of node.children) visit(child, depth + 1)
  }
  for (const root of roots) visit(root, 0)
  return lines
}

/**
 * The server's line before the outline's frame: the whole document's approximate size and section count,
 * and whether one whole read shows it (else: read sections). Numbers only, no document text.
 */
export function outlineSizeLine(roots: readonly OutlineNode[]): string {
  let total = 0
  let sections = 0
  const stack = [...roots]
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    total += node.size
    sections++
    stack.push(...node.children)
  }
  const size = `size: ~${approximate(total)} characters in ${sections} ${sections === 1 ? 'section' : 'sections'}.`
  const whole = `A whole read (read_document without section_id) shows up to ${MAX_READ_CHARS} characters`
  return total <= MAX_READ_CHARS
    ? `${size} ${whole}: this document fits one.`
    : `${size} ${whole}: this document would be cut, so read the sections you need (read_document with section_id).`
}

/**
 * A character count rounded to two significant digits, thousands as `k` and millions as `M`:
 * 7, 340, 1.2k, 48k, 120k, 1.5M.
 */
export function approximate(chars: number): string {
  const rounded = chars <= 0 ? 0 : Number(chars.toPrecision(2))
  if (rounded < 1_000) return String(rounded)
  if (rounded < 1_000_000) return `${rounded / 1_000}k`
  return `${rounded / 1_000_000}M`
}
