/**
 * get_outline: the document's approximate size, then the heading tree with each heading's section_id and
 * section size, bounded by MAX_READ_CHARS.
 */
import { MAX_READ_CHARS } from '../limits.ts'
import { pageFromStart } from '../paging/start-paging.ts'
import { renderOutput } from '../render/frame.ts'
import { notes } from '../render/notes.ts'
import { outlineLines, outlineSizeLine } from '../render/outline.ts'
import { slugField, startField } from './fields.ts'
import { openOutline } from './open-document.ts'
import { defineTool } from './tool.ts'

export const getOutline = defineTool({
  name: 'get_outline',
  kind: 'read',
  title: 'Get a document outline',
  description:
    'The heading tree of one document, in document order: one line per heading, indented by depth, ' +
    'with its section_id and about how many characters a read of that section shows. Text only. A line ' +
    "before it gives the whole document's size and says whether one whole read (read_document without " +
    `section_id, up to ${MAX_READ_CHARS} characters) shows it all. At most ${MAX_READ_CHARS} characters ` +
    'of headings per call: a longer outline keeps its first headings and ends with a note naming the ' +
    '`start` that shows the rest. Call this first; then read the document whole if it fits, else the ' +
    'sections you need. Edits take the rev a section read prints.',
  inputSchema: {
    slug: slugField(),
    start: startField('heading', 'outline'),
  },
  async handler({ slug, start }, ctx) {
    const opened = await openOutline(ctx, slug)
    if (opened.kind === 'error') return opened
    const { resolved, outline } = opened.value
    const unit = { one: 'heading', many: 'headings' }
    const page = pageFromStart(outlineLines(outline), start, unit, notes.outlineTruncated)
    if (page.kind === 'error') return page
    const source = { kind: 'outline', slug, whose: resolved.access.whose } as const
    return renderOutput({
      before: [outlineSizeLine(outline)],
      source,
      body: page.value.body,
      notes: page.value.notes,
    })
  },
})
