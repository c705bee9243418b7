/** get_outline: the heading tree with each heading's section_id and rev, bounded by MAX_READ_CHARS. */
import { MAX_READ_CHARS } from '../limits.ts'
import { pageFromStart } from '../paging/start-paging.ts'
import { renderOutput } from '../render/frame.ts'
import { notes } from '../render/notes.ts'
import { outlineLines } from '../render/outline.ts'
import { slugField, startField } from './fields.ts'
import { openOutline } from './open-document.ts'
import { defineTool } from './tool.ts'

export const getOutline = defineTool({
  name: 'get_outline',
  kind: 'read',
  title: 'Get a document outline',
  description:
    'The heading tree of one document, in document order: one line per heading, indented by depth, ' +
    'with its section_id and rev (use them with read_document and the edit tools). Text only. ' +
    `At most ${MAX_READ_CHARS} characters of headings per call: a longer outline keeps its first ` +
    'headings and ends with a note naming the `start` that shows the rest. Call this first, then read ' +
    'one section at a time.',
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
    return renderOutput({ source, body: page.value.body, notes: page.value.notes })
  },
})
