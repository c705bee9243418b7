/**
 * get_outline: the document's approximate size and what a line's tag holds, then the heading tree with the
 * shortest start of each heading's section_id and its section size, bounded by MAX_READ_CHARS.
 */

import type { OutlineNode } from '@collab/doc-schema'
import { MAX_READ_CHARS, MIN_SECTION_ID_PREFIX } from '../limits.ts'
import { pageFromStart } from '../paging/start-paging.ts'
import { renderOutput } from '../render/frame.ts'
import { notes } from '../render/notes.ts'
import { OUTLINE_TAG_LINE, outlineLines, outlineSizeLine } from '../render/outline.ts'
import { slugField, startField } from './fields.ts'
import { openOutline } from './open-document.ts'
import { defineTool, type KeptAnswer } from './tool.ts'

export const getOutline = defineTool({
  name: 'get_outline',
  kind: 'read',
  title: 'Get a document outline',
  description:
    'The heading tree of one document, in document order: one line per heading, indented by depth, ' +
    'ending `[<id> ~<size>]`: the start of its section_id that no other section of the document shares ' +
    `(at least ${MIN_SECTION_ID_PREFIX} characters; every tool taking a section_id accepts it as printed) ` +
    'and about how many characters a read of that section shows. Text only. A line before it gives the ' +
    "whole document's size and says whether one whole read (read_document without section_id, up to " +
    `${MAX_READ_CHARS} characters) shows it all. At most ${MAX_READ_CHARS} characters ` +
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
    const rendered = renderedOf(outline)
    const first = start ?? 1
    // The whole answer is kept too, per page and frame (slug as asked, whose): the same object each time.
    const key = `${first}\n${slug}\n${resolved.access.whose}`
    const kept = rendered.answers.get(key)
    if (kept) return kept
    const page = pageFromStart(rendered.lines, first, HEADINGS, notes.outlineTruncated)
    if (page.kind === 'error') return page // a start past the end: a refusal, not kept
    const source = { kind: 'outline', slug, whose: resolved.access.whose } as const
    const answer: KeptAnswer = {
      kind: 'kept',
      text: renderOutput({
        before: [rendered.sizeLine, OUTLINE_TAG_LINE],
        source,
        body: page.value.body,
        notes: page.value.notes,
      }),
    }
    if (rendered.answers.size < MAX_KEPT_ANSWERS) rendered.answers.set(key, answer)
    return answer
  },
})

const HEADINGS = { one: 'heading', many: 'headings' }

/**
 * What is kept of one outline array: its lines and size line, rendered once, and the whole answers given
 * (by page, slug as asked and whose).
 */
type RenderedOutline = { lines: string[]; sizeLine: string; answers: Map<string, KeptAnswer> }

/**
 * Kept per outline array: a live document's outline memo answers the same array while the document is
 * unchanged, so a warm get_outline renders its lines, walks a page, sizes the document and frames its
 * answer once, not at every call (those were most of a warm call's own time on 1,000 headings; over
 * HTTP the kept answer's JSON is made once as well). A cold outline is a new array each time, and its
 * entry goes with it.
 */
const renderedOutlines = new WeakMap<readonly OutlineNode[], RenderedOutline>()

function renderedOf(outline: readonly OutlineNode[]): RenderedOutline {
  let rendered = renderedOutlines.get(outline)
  if (!rendered) {
    rendered = { lines: outlineLines(outline), sizeLine: outlineSizeLine(outline), answers: new Map() }
    renderedOutlines.set(outline, rendered)
  }
  return rendered
}

/** Answers kept per outline array (an agent pages an outline from its start: a handful at most). */
const MAX_KEPT_ANSWERS = 16
