/**
 * A cut section read's cost against its section's size (issue 26): read_document with section_id and
 * max_chars 2,000 of a section of 100,000 blocks beside the same read of a section of 10 blocks, warm (the
 * document live, its sections' totals already measured, as after a first read). The cut read names the
 * section's exact total, which is kept per revision, so what grows with the section is only the walk that
 * collects its blocks and checks they are the ones measured, not a render. The first cut read of a
 * revision never measured before, which renders every block once for the total, is reported beside it
 * (read_document does that measuring in slices that let the server answer others; here it is timed whole).
 */
import {
  adoptRevs,
  adoptTotals,
  FRAGMENT_NAME,
  HEADING_ID_ATTR,
  measuredElements,
  newHeadingId,
  readOutlineWithTotals,
  renderSection,
  storedRevs,
  storedTotals,
} from '@collab/doc-schema'
import { asFrag, Y, type YXmlFragment } from '../deps.ts'
import { timeSideBySide } from './stats.ts'
import { medianRatioRow, type Row } from './types.ts'

export const CUT_READ_BLOCKS = { large: 100_000, small: 10 } as const
const CUT_READ_MAX_CHARS = 2_000

/**
 * A live document whose one section holds `blocks` paragraphs of `words` plain words, marked (a bold word
 * and a link) when `marked`: both sections' reads are cut at 2,000 characters, so each renders about as
 * much (the large one in more, shorter blocks, which costs it a little more per character).
 */
function sectionOf(
  blocks: number,
  words: number,
  marked: boolean,
): { fragment: YXmlFragment; sectionId: string; doc: Y.Doc } {
  const doc = new Y.Doc()
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  const sectionId = newHeadingId()
  const plain = ' word'.repeat(words)
  doc.transact(() => {
    // The elements go into the document first: Yjs reads a type's content only once it is in one.
    const heading = new Y.XmlElement('heading')
    const title = new Y.XmlText()
    heading.insert(0, [title])
    const texts: Y.XmlText[] = []
    const paragraphs = Array.from({ length: blocks }, () => {
      const paragraph = new Y.XmlElement('paragraph')
      const text = new Y.XmlText()
      texts.push(text)
      paragraph.insert(0, [text])
      return paragraph
    })
    fragment.insert(0, [heading, ...paragraphs])
    heading.setAttribute('level', 2 as never)
    heading.setAttribute(HEADING_ID_ATTR, sectionId)
    title.insert(0, `Section of ${blocks} blocks`)
    texts.forEach((text, i) => {
      text.insert(0, `Block ${i + 1}`)
      if (marked) {
        text.insert(text.length, ' bold', { bold: true })
        text.insert(text.length, ' link', { link: { href: `https://example.com/${i}` } })
      }
      text.insert(text.length, `${plain}.`)
    })
  })
  return { fragment, sectionId, doc }
}

function cutRead(fragment: YXmlFragment, sectionId: string) {
  const read = renderSection(asFrag(fragment), sectionId, { maxChars: CUT_READ_MAX_CHARS })
  if (read.kind === 'error') throw new Error(read.message)
  if (read.value.total === undefined) throw new Error('the read was not cut')
  return read.value
}

export function measureCutSectionRead(runs: number): Row {
  const large = sectionOf(CUT_READ_BLOCKS.large, 1, false)
  const small = sectionOf(CUT_READ_BLOCKS.small, 60, true)
  const started = Bun.nanoseconds()
  const first = cutRead(large.fragment, large.sectionId)
  const firstMs = (Bun.nanoseconds() - started) / 1e6
  const smallFirst = cutRead(small.fragment, small.sectionId)
  // A full collection before each timed read (untimed): the large document's heap makes a collection
  // that lands inside a read cost tens of milliseconds, which is the heap's size, not the read's work.
  const collect = () => Bun.gc(true)
  const timed = timeSideBySide(runs, {
    '100,000 blocks': { prepare: collect, run: () => cutRead(large.fragment, large.sectionId) },
    '10 blocks': { prepare: collect, run: () => cutRead(small.fragment, small.sectionId) },
  })
  large.doc.destroy()
  small.doc.destroy()
  return medianRatioRow(
    { measure: 'cut section read (max_chars 2,000), warm, by section size', size: '100,000 / 10 blocks' },
    timed,
    { over: '100,000 blocks', under: '10 blocks' },
    {
      extra: {
        'section chars (total)': `${first.total} / ${smallFirst.total}`,
        'chars shown': `${first.shownChars} / ${smallFirst.shownChars}`,
        'first cut read of the 100,000-block revision (measures it), ms': Math.round(firstMs),
      },
    },
  )
}

/**
 * The first cut read of a section nobody edited since it was stored (issue 26): a fresh copy decoded from
 * the stored state, as a cold read or a load after a restart decodes it, with the totals stored beside the
 * outline adopted, and its revs (the stored outline describes the snapshot exactly, no update logged
 * after it: stored-parts.ts applyStored). The read takes the section's rev (printed, and the key of the
 * stored total) from the stored outline instead of hashing the section (issue 30: before, that hash made
 * this read ~226x the 10-block one), and renders only what it shows; before stored totals it rendered the
 * whole section once to measure it (the row above reports that first read). Timed against the same first
 * read of a 10-block section.
 */
export function measureFirstCutRead(runs: number): Row {
  const stored = (blocks: number, words: number, marked: boolean) => {
    const built = sectionOf(blocks, words, marked)
    const outline = readOutlineWithTotals(asFrag(built.fragment))
    const totals = storedTotals(outline)
    const revs = storedRevs(outline)
    const state = Y.encodeStateAsUpdate(built.doc)
    built.doc.destroy()
    let copy: Y.Doc | undefined
    return {
      sectionId: built.sectionId,
      // A fresh decoded copy per run (untimed), its previous one freed, then a full collection.
      prepare: () => {
        copy?.destroy()
        copy = new Y.Doc()
        Y.applyUpdate(copy, state)
        const fragment = copy.getXmlFragment(FRAGMENT_NAME)
        adoptTotals(asFrag(fragment), totals)
        adoptRevs(asFrag(fragment), revs)
        Bun.gc(true)
        return fragment
      },
      free: () => copy?.destroy(),
    }
  }
  const large = stored(CUT_READ_BLOCKS.large, 1, false)
  const small = stored(CUT_READ_BLOCKS.small, 60, true)
  const measuredBefore = measuredElements()
  const timed = timeSideBySide(runs, {
    '100,000 blocks': {
      prepare: large.prepare,
      run: (fragment) => cutRead(fragment as YXmlFragment, large.sectionId),
    },
    '10 blocks': {
      prepare: small.prepare,
      run: (fragment) => cutRead(fragment as YXmlFragment, small.sectionId),
    },
  })
  const rendered = measuredElements() - measuredBefore
  large.free()
  small.free()
  return medianRatioRow(
    {
      measure: 'first cut read (max_chars 2,000) of a stored section, totals stored beside the outline',
      size: '100,000 / 10 blocks',
    },
    timed,
    { over: '100,000 blocks', under: '10 blocks' },
    { extra: { 'blocks rendered to measure totals, all runs': rendered } },
  )
}
