import type * as Y from 'yjs'
import { parseMarkdown } from '../markdown/parse-markdown.ts'
import { ok, type Result, refuse } from '../result.ts'
import { describeSection, holdsNoElement, lastSection } from '../sections/section-index.ts'
import { blocksToY } from '../yjs/build-y.ts'

/**
 * Appends Markdown at the end of the document in one transaction and returns the section the last appended
 * block belongs to. Into an empty fragment the Markdown must start with the `# title` heading.
 */
export function appendMarkdown(
  fragment: Y.XmlFragment,
  markdown: string,
): Result<{ sectionId: string; rev: string }> {
  const doc = fragment.doc
  if (!doc)
    return refuse('detached', 'fragment: it belongs to no Y.Doc; append to a fragment read from a document.')
  const empty = holdsNoElement(fragment)
  const parsed = parseMarkdown(markdown, { allowTitle: empty })
  if (parsed.kind === 'error') return parsed
  const first = parsed.value[0]
  if (empty && (first?.type !== 'heading' || first.attrs?.level !== 1)) {
    return refuse(
      'missing_title',
      'markdown: the document is empty, so it must start with a "# Title" heading.',
      'markdown',
    )
  }
  const elements = blocksToY(parsed.value)
  doc.transact(() => fragment.insert(fragment.length, elements))
  const last = lastSection(fragment)
  if (!last)
    return refuse(
      'missing_title',
      'markdown: the document has no heading to append under; add a title.',
      'markdown',
    )
  const { sectionId, rev } = describeSection(last)
  return ok({ sectionId, rev })
}
