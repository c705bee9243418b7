/**
 * get_outline's heading lines, parsed: `<two spaces per depth><title> [<id> ~<size>]`, where `<id>` is
 * the shortest start of the heading's section_id that no other id of the document shares (`no id` for a
 * heading without one). Every tool taking a section_id accepts that start as it is.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { call } from './mcp.ts'

export type OutlineEntry = { depth: number; title: string; id: string; size: string }

/** One heading line of get_outline (title, id start, size). */
export const OUTLINE_LINE = /^((?: {2})*)(.*) \[([A-Za-z0-9_-]+|no id) ~([\d.]+[kM]?)\]$/

/** Every heading line of a get_outline answer (the lines before and after the frame never match). */
export function outlineEntries(text: string): OutlineEntry[] {
  const entries: OutlineEntry[] = []
  for (const line of text.split('\n')) {
    const match = OUTLINE_LINE.exec(line)
    if (match) entries.push({ depth: match[1]!.length / 2, title: match[2]!, id: match[3]!, size: match[4]! })
  }
  return entries
}

/** The printed ids (starts of section ids) of a get_outline answer, in document order. */
export const outlineIds = (text: string): string[] => outlineEntries(text).map((entry) => entry.id)

/** The printed id of the heading titled `title` (the first such), or a thrown error naming it. */
export function outlineId(text: string, title: string): string {
  const entry = outlineEntries(text).find((e) => e.title === title)
  if (!entry) throw new Error(`get_outline shows no heading "${title}":\n${text}`)
  return entry.id
}

/**
 * The whole section id a printed id names: a read of the section (which accepts the printed start) prints
 * it on its `section_id:` line (a short read: only that line is wanted).
 */
export async function wholeSectionId(client: Client, slug: string, printed: string): Promise<string> {
  const read = await call(client, 'read_document', { slug, section_id: printed, max_chars: 100 })
  const whole = /^section_id: ([\w-]+)$/m.exec(read.text)?.[1]
  if (read.isError || !whole) throw new Error(`read_document with section_id "${printed}":\n${read.text}`)
  return whole
}

/** A stored outline's node, as far as `outlineShape` reads it. */
type ShapedNode = { sectionId: unknown; level: unknown; title: unknown; rev: unknown; children: ShapedNode[] }

/**
 * A stored outline's headings without their measured sizes and totals (ids, levels, titles, revs, nesting):
 * what a compaction's stored outline must share with `readOutline` of the same content.
 */
export const outlineShape = (nodes: ShapedNode[]): unknown =>
  nodes.map(({ sectionId, level, title, rev, children }) => ({
    sectionId,
    level,
    title,
    rev,
    children: outlineShape(children),
  }))
