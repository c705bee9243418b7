/**
 * Outline rendering: one line per heading, in tree (document) order, indented two spaces per depth, each
 * with the shortest start of its section id that tells it apart and its section's approximate size; and the
 * lines before the frame that size the whole document and say once what each line's tag holds.
 */
import type { OutlineNode } from '@collab/doc-schema'
import { MAX_READ_CHARS, MIN_SECTION_ID_PREFIX } from '../limits.ts'
import { escapeFrameContent } from './frame.ts'

/**
 * Every heading in tree order, each as its rendered line (content escaped for the frame):
 * `<title> [<id start> ~<size>]`, where the id start is `shortIds`' for the whole document (a page of the
 * outline prints the same starts as the whole). No rev: an edit takes the rev a section read prints.
 */
export function outlineLines(roots: readonly OutlineNode[]): string[] {
  const short = shortIds(allIds(roots))
  const lines: string[] = []
  const visit = (node: OutlineNode, depth: number) => {
    const id = node.sectionId === '' ? NO_ID : printedId(short, node.sectionId)
    const title = escapeFrameContent(node.title)
    lines.push(`${'  '.repeat(depth)}${title} [${id} ~${approximate(node.size)}]`)
    for (const child of node.children) visit(child, depth + 1)
  }
  for (const root of roots) visit(root, 0)
  return lines
}

/** What a heading without an id (no read or edit can name it) shows in place of one. */
const NO_ID = 'no id'

/**
 * The line before the outline's frame that says once what the tag ending each line holds, so the lines
 * themselves carry only the id start and the size. Server text only.
 */
export const OUTLINE_TAG_LINE =
  'Lines: heading [id ~size]. id: the start of its section_id that no other section shares, ' +
  `${MIN_SECTION_ID_PREFIX}+ characters (every tool taking a section_id accepts it); size: about how many ` +
  'characters a read of that section shows.'

/**
 * The starts every answer prints for the section ids of one document (get_outline, list_chat_rooms,
 * find_sections): `shortIds` over all of the document's ids, given as its outline or as its ids in document
 * order ('' left out). Print each with `printedId`.
 */
export function documentShortIds(document: readonly OutlineNode[] | { ids: readonly string[] }) {
  return shortIds('ids' in document ? document.ids.filter((id) => id !== '') : allIds(document))
}

/**
 * How an answer prints a section id: its start from `short` (`documentShortIds`); whole when the document
 * has no heading with it (a chat room whose heading was removed), since no start of it would resolve.
 */
export function printedId(short: ReadonlyMap<string, string>, sectionId: string): string {
  return short.get(sectionId) ?? sectionId
}

/** Every section id of an outline, in tree order ('' for a heading without one is left out). */
function allIds(roots: readonly OutlineNode[]): string[] {
  const ids: string[] = []
  const stack = [...roots].reverse()
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.sectionId !== '') ids.push(node.sectionId)
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!)
  }
  return ids
}

/**
 * Each id's shortest start that no other id of `ids` begins with, at least MIN_SECTION_ID_PREFIX
 * characters: in sorted order, an id shares the longest start with one of its two neighbours, so one
 * more character than that tells it apart. An id that occurs twice shares all of itself and is printed
 * whole (no start tells the two apart; a read names the first).
 */
export function shortIds(ids: readonly string[]): Map<string, string> {
  const sorted = [...ids].sort()
  const short = new Map<string, string>()
  for (let i = 0; i < sorted.length; i++) {
    const id = sorted[i]!
    const shared = Math.max(sharedStart(id, sorted[i - 1]), sharedStart(id, sorted[i + 1]))
    short.set(id, id.slice(0, Math.max(MIN_SECTION_ID_PREFIX, shared + 1)))
  }
  return short
}

/** How many leading characters `a` and `b` share (0 without `b`). */
function sharedStart(a: string, b: string | undefined): number {
  if (b === undefined) return 0
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
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
