/**
 * Whole reads written by our phrasing writer against mdast-util-to-markdown's own (issue 24): the red
 * team's paragraph of 10,000 one-letter runs alternating bold and italic (at MAX_RENDER_WORK), and an
 * ordinary document (no regression). Both writers give the same bytes (phrasing-writer.test.ts); the
 * ratio is the library's time over ours, timed side by side in one run.
 */
import { documentMarkdownPrefix, FRAGMENT_NAME, type SerializeOptions } from '@collab/doc-schema'
import { MAX_COUNTED_CHARS } from '@collab/hocuspocus.server/src/modules/mcp/limits.ts'
import { Y, type YXmlFragment } from '../deps.ts'
import type { Fixture } from './fixtures.ts'
import { timeSideBySide } from './stats.ts'
import { medianRatioRow, type Row } from './types.ts'

type Frag = Parameters<typeof documentMarkdownPrefix>[0]

/** What read_document renders for a whole read (whole-read.ts), with the given writer. */
const wholeRead = (fragment: YXmlFragment, phrasing?: SerializeOptions['phrasing']) =>
  documentMarkdownPrefix(
    fragment as unknown as Frag,
    MAX_COUNTED_CHARS + 1,
    { suggestions: 'show', phrasing },
    true,
  )

function denseParagraph(): YXmlFragment {
  const doc = new Y.Doc()
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const heading = new Y.XmlElement('heading')
  heading.setAttribute('level', 1 as unknown as string)
  heading.insert(0, [new Y.XmlText('Dense marks')])
  const text = new Y.XmlText()
  const paragraph = new Y.XmlElement('paragraph')
  paragraph.insert(0, [text])
  fragment.push([heading, paragraph])
  text.applyDelta(
    Array.from({ length: 10_000 }, (_, i) => ({
      insert: String.fromCharCode(97 + (i % 26)),
      attributes: i % 2 ? { italic: {} } : { bold: {} },
    })),
  )
  return fragment
}

function row(measure: string, size: string, fragment: YXmlFragment, runs: number): Row {
  const timed = timeSideBySide(runs, {
    ours: { run: () => wholeRead(fragment) },
    library: { run: () => wholeRead(fragment, 'library') },
  })
  return medianRatioRow({ measure, size }, timed, { over: 'library', under: 'ours' })
}

export function measureDenseMarks(ordinary: Fixture, runs: number): Row[] {
  const dense = denseParagraph()
  const doc = new Y.Doc()
  Y.applyUpdate(doc, ordinary.state)
  const rows = [
    row('whole read, our phrasing writer vs the library', '10,000 marks', dense, runs),
    row(
      'whole read, our phrasing writer vs the library',
      ordinary.name,
      doc.getXmlFragment(FRAGMENT_NAME),
      runs,
    ),
  ]
  doc.destroy()
  dense.doc?.destroy()
  return rows
}
