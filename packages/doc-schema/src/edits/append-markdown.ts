import type * as Y from 'yjs'
import { HEADING_ID_ATTR } from '../limits.ts'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuseFor } from '../result.ts'
import { holdsNoElement, lastSection } from '../sections/section-index.ts'
import { blocksToY } from '../yjs/build-y.ts'
import { lastLiveItem } from '../yjs/list-end.ts'
import { sectionsFrom, type WrittenSection } from './edit-target.ts'

export type AppendResult = {
  /** The section the new end belongs to. */
  sectionId: string
  rev: string
  /** Every section a heading of the Markdown created, in document order (the end one included). */
  created: WrittenSection[]
  /** The section that was last before, when blocks before the Markdown's first heading joined it. */
  changed?: WrittenSection
}

/**
 * Appends Markdown at the end of the document in one transaction and returns the section the last appended
 * block belongs to, every section it created, and the section before it when blocks joined it. Into an
 * empty fragment the Markdown must start with the `# title` heading. Its cost follows the last section
 * and the Markdown, not the document.
 */
export function appendMarkdown(fragment: Y.XmlFragment, markdown: string): Result<AppendResult> {
  const doc = fragment.doc
  if (!doc)
    return refuseFor(
      'detached',
      'fragment: it belongs to no Y.Doc; append to a fragment read from a document.',
    )
  const empty = holdsNoElement(fragment)
  const parsed = parseMarkdown(markdown, { allowTitle: empty })
  if (parsed.kind === 'error') return parsed
  const first = parsed.value[0]
  if (empty && (first?.type !== 'heading' || first.attrs?.level !== 1)) {
    return refuseFor(
      'missing_title',
      'markdown: the document is empty, so it must start with a "# Title" heading.',
      'markdown',
    )
  }
  const before = empty ? undefined : lastSection(fragment)
  if (!empty && !before)
    return refuseFor(
      'missing_title',
      'markdown: the document has no heading to append under; add a title.',
      'markdown',
    )
  const elements = blocksToY(parsed.value)
  // After the last live block, as `insert(fragment.length, …)` would, without its walk from the start.
  doc.transact(() => fragment.insertAfter(lastLiveItem(fragment), elements))
  const createdIds = new Set(
    parsed.value
      .filter((block) => block.type === 'heading')
      .map((block) => String(block.attrs?.[HEADING_ID_ATTR])),
  )
  const walked = sectionsFrom(before?.heading ?? elements[0]!, createdIds)
  const created = before ? walked.slice(1) : walked
  const end = walked.at(-1)!
  const result: AppendResult = { sectionId: end.sectionId, rev: end.rev, created }
  if (before && first?.type !== 'heading' && created.length > 0) result.changed = walked[0]!
  return ok(result)
}
