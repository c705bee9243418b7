/**
 * The Markdown an `inBlock` edit gives, read as items of one list or rows of one table: a line copied from
 * a read keeps the indentation or `> ` the read showed it with (a sub-item, a list in a quote), so that
 * prefix is taken off first; rows alone are read under a header of the table's width.
 */
import * as Y from 'yjs'
import type { DocNode } from '../doc-json.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'

const LIST_ITEMS: Record<string, string> = {
  bulletList: 'listItem',
  orderedList: 'listItem',
  taskList: 'taskItem',
}

/** How one item of each list kind is written, for refusals. */
const ITEM_SYNTAX: Record<string, string> = {
  bulletList: '"- text"',
  orderedList: '"1. text"',
  taskList: '"- [ ] text"',
}

/** A column's alignment as a GFM delimiter cell writes it. */
const ALIGN_DELIMITER: Record<string, string> = { left: ':-', right: '-:', center: ':-:' }

/**
 * `markdown` without the prefix (indentation, quote markers) of `printed`, the line as read of the item
 * it goes next to, when every line of it that is not blank starts with that prefix; else unchanged.
 */
export function dropPrefix(markdown: string, printed: string): string {
  const prefix = /^[ \t>]*/.exec(printed)?.[0] ?? ''
  if (prefix === '') return markdown
  const lines = markdown.split('\n')
  const bare = prefix.trimEnd()
  const fits = lines.every((line) => line.startsWith(prefix) || line.trim() === '' || line.trimEnd() === bare)
  if (!fits) return markdown
  return lines.map((line) => (line.startsWith(prefix) ? line.slice(prefix.length) : '')).join('\n')
}

/**
 * The items (or rows) `markdown` gives for `container`, a list or a table; `name` is how a refusal calls
 * the container ("block 3", "the list holding line 4").
 */
export function parseItems(container: Y.XmlElement, name: string, markdown: string): Result<DocNode[]> {
  const kind = container.nodeName
  const itemType = LIST_ITEMS[kind]
  if (itemType) {
    const parsed = parseMarkdown(markdown)
    if (parsed.kind === 'error') return parsed
    const items: DocNode[] = []
    for (const list of parsed.value) {
      if (LIST_ITEMS[list.type] !== itemType) {
        return refuseFor(
          'not_items',
          `markdown: ${name} is a ${kind}, so give only its items, each written ${ITEM_SYNTAX[kind]}.`,
          'markdown',
        )
      }
      items.push(...(list.content ?? []))
    }
    return ok(items)
  }
  const firstRow = container.toArray().find((row): row is Y.XmlElement => row instanceof Y.XmlElement)
  const columns = Math.max(1, firstRow?.length ?? 1)
  // Rows alone are not a GFM table: read them under a header one column wider than the table (GFM drops
  // cells past the header's width without a word, so a cell there means the row is too wide), then drop
  // that header and the extra column. The header's delimiter line carries the table's alignment per column
  // (a read prints it on the table's "| - |" line, not on the rows), so the rows read get it too.
  const delimiters = Array.from({ length: columns + 1 }, (_, i) => {
    const cell = firstRow?.get(i)
    return ALIGN_DELIMITER[String(cell instanceof Y.XmlElement ? cell.getAttribute('align') : '')] ?? '-'
  })
  const header = `|${' h |'.repeat(columns + 1)}\n| ${delimiters.join(' | ')} |\n`
  const parsed = parseMarkdown(header + markdown.replace(/^\n+/, ''))
  const table = parsed.kind === 'ok' && parsed.value.length === 1 ? parsed.value[0] : undefined
  if (table?.type !== 'table') {
    return refuseFor(
      'not_rows',
      `markdown: ${name} is a table, so give only rows, one per line, written "| a | b |".`,
      'markdown',
    )
  }
  const rows = (table.content ?? []).slice(1)
  const wide = rows.findIndex((row) => (row.content?.[columns]?.content ?? []).some((p) => p.content?.length))
  if (wide >= 0) {
    return refuseFor(
      'row_too_wide',
      `markdown: row ${wide + 1} has more cells than the table's ${columns} columns; give ${columns} cells per row.`,
      'markdown',
    )
  }
  return ok(rows.map((row) => ({ ...row, content: (row.content ?? []).slice(0, columns) })))
}
