/** Outline rendering: one line per heading, in tree (document) order, indented two spaces per depth. */
import type { OutlineNode } from '@collab/doc-schema'
import { escapeFrameContent } from './frame.ts'

/** Every heading in tree order, each as its rendered line (content escaped for the frame). */
export function outlineLines(roots: readonly OutlineNode[]): string[] {
  const lines: string[] = []
  const visit = (node: OutlineNode, depth: number) => {
    const id = node.sectionId === '' ? '(none)' : node.sectionId
    const title = escapeFrameContent(node.title)
    lines.push(`${'  '.repeat(depth)}${title} [section_id: ${id}, rev: ${node.rev}]`)
    for (const child of node.children) visit(child, depth + 1)
  }
  for (const root of roots) visit(root, 0)
  return lines
}
