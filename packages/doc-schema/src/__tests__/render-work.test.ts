/**
 * Issue 24: a read's cost is bounded by what it returns, not by how its content is marked up. Editors can
 * build, through Yjs, a paragraph of 10,000 marks (no Markdown ceiling applies to them); rendering one
 * costs ~20 µs a marked run, so a whole read of it blocked the server for up to 2 s. A bounded render now
 * stops at MAX_RENDER_WORK units (elements and runs one, marks two), on an exact character of the whole
 * Markdown. These tests count what was rendered (from the output) and fail if a render goes past the
 * allowance, whatever the document holds; and they check that paging such a block in section reads still
 * shows every character exactly once.
 */
import { describe, expect, test } from 'bun:test'
import * as Y from 'yjs'
import {
  createDocumentUpdate,
  documentMarkdownPrefix,
  documentToMarkdown,
  FRAGMENT_NAME,
  readOutline,
  renderSection,
} from '../index.ts'
import { MAX_RENDER_WORK } from '../limits.ts'
import { blockMarkdown } from '../sections/render-section.ts'

type Run = { insert: string; attributes?: Record<string, unknown> }

/** A document whose one paragraph holds `runs` (built as an editor's update builds it). */
function documentWith(runs: Run[], inList = false): Y.XmlFragment {
  const doc = new Y.Doc()
  const base = createDocumentUpdate('Marks')
  if (base.kind === 'error') throw new Error(base.message)
  Y.applyUpdate(doc, base.value)
  const fragment = doc.getXmlFragment(FRAGMENT_NAME)
  doc.transact(() => {
    if (!inList) {
      const text = new Y.XmlText()
      const paragraph = new Y.XmlElement('paragraph')
      paragraph.insert(0, [text])
      fragment.push([paragraph])
      text.applyDelta(runs)
      return
    }
    // A long run of tiny text nodes: one list item per run.
    const list = new Y.XmlElement('bulletList')
    fragment.push([list])
    list.insert(
      0,
      runs.map((run) => {
        const text = new Y.XmlText()
        const paragraph = new Y.XmlElement('paragraph')
        paragraph.insert(0, [text])
        const item = new Y.XmlElement('listItem')
        item.insert(0, [paragraph])
        text.applyDelta([run])
        return item
      }),
    )
  })
  return fragment
}

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i))

/** 10,000 one-letter bold runs between 10,000 plain ones: `a**b**a**b**…`. */
const alternating = times(20_000, (i) =>
  i % 2 ? { insert: 'b', attributes: { bold: {} } } : { insert: 'a' },
)
/** 12,000 one-letter links (36,000 units). */
const links = times(12_000, (i) => ({
  insert: 'l',
  attributes: { link: { href: `u${i}` } },
}))
/** Many marks on every run (seven, then two), alternating, no mark shared by neighbours. */
const manyMarks = times(10_000, (i) =>
  i % 2
    ? {
        insert: 'm',
        attributes: {
          bold: {},
          italic: {},
          strike: {},
          underline: {},
          highlight: {},
          subscript: {},
          code: {},
        },
      }
    : { insert: 'n', attributes: { superscript: {}, link: { href: 'u' } } },
)

/** Work units the rendered start of each case spent, counted from what it shows (see the header). */
const CASES: Array<{ name: string; runs: Run[]; inList?: boolean; spent: (markdown: string) => number }> = [
  {
    name: '10,000 alternating bold runs',
    runs: alternating,
    // Each letter is one run; each `**…**` one mark (two units).
    spent: (md) => count(md, /[ab]/g) + count(md, /\*\*b\*\*/g) * 2,
  },
  { name: '12,000 links', runs: links, spent: (md) => count(md, /\[l\]/g) * 3 },
  {
    name: 'seven and two marks per run',
    runs: manyMarks,
    spent: (md) => count(md, /`m`/g) * 15 + count(md, /<sup>n<\/sup>/g) * 5,
  },
  {
    name: 'a list of 20,000 one-letter items with a mark',
    runs: times(20_000, () => ({ insert: 't', attributes: { italic: {} } })),
    inList: true,
    // Item, paragraph, run: three units, and the mark two.
    spent: (md) => count(md, /\*t\*/g) * 5,
  },
]

function count(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0
}

describe('a bounded render spends at most MAX_RENDER_WORK on markup, whatever the document holds', () => {
  for (const { name, runs, inList, spent } of CASES) {
    test(name, () => {
      const fragment = documentWith(runs, inList)
      const whole = documentToMarkdown(fragment)
      // The whole document spends more than a read may: the case would cost more than the allowance.
      expect(spent(whole)).toBeGreaterThan(MAX_RENDER_WORK)
      const prefix = documentMarkdownPrefix(fragment, 200_001, {}, true)
      expect(prefix.complete).toBe(false)
      expect(prefix.byWork).toBe(true)
      expect(spent(prefix.text)).toBeLessThanOrEqual(MAX_RENDER_WORK)
      // Still most of it (the stop is where the allowance runs out, not far before)…
      expect(spent(prefix.text)).toBeGreaterThan(MAX_RENDER_WORK * 0.9)
      // …and exactly the start of the whole Markdown.
      expect(whole.startsWith(prefix.text)).toBe(true)
    })
  }

  test('ordinary prose renders as before: the bound is not reached and the bytes are the same', () => {
    const runs = times(2_000, (i) =>
      i % 4 === 1
        ? { insert: `word ${i}`, attributes: { bold: {} } }
        : i % 4 === 3
          ? { insert: 'a link', attributes: { link: { href: `https://e.example/${i}` } } }
          : { insert: ` some ordinary text between marks, number ${i}, ` },
    )
    const fragment = documentWith(runs)
    const prefix = documentMarkdownPrefix(fragment, 200_001, {}, true)
    expect(prefix.byWork).toBeUndefined()
    expect(prefix).toEqual(documentMarkdownPrefix(fragment, 200_001))
  })
})

describe('section reads of a block dense in marks', () => {
  test('stop at the allowance and page through the block, every character exactly once', () => {
    const fragment = documentWith(alternating)
    const [title] = readOutline(fragment)
    const sectionId = title!.sectionId
    const block = blockMarkdown(fragment.toArray()[1] as Y.XmlElement)
    let shown = ''
    let offset = 0
    let reads = 0
    for (;;) {
      const read = renderSection(fragment, sectionId, {
        fromBlock: 1,
        blockOffset: offset,
        maxChars: 100_000,
      })
      if (read.kind === 'error') throw new Error(read.message)
      reads++
      const part = read.value.text.split('\n\n').slice(1).join('\n\n')
      const body = part
        .replace(/^\[1(, from character \d+)?\] /, '')
        .replace(/\n\[… block 1 cut at character \d+ of its Markdown\]$/, '')
      // What this part spent past the earlier parts stays within the allowance.
      expect(count(body, /[ab]/g) + count(body, /\*\*b\*\*/g) * 2).toBeLessThanOrEqual(MAX_RENDER_WORK + 4)
      shown += body
      if (read.value.nextOffset === undefined) break
      expect(read.value.byWork).toBe(true)
      offset = read.value.nextOffset
    }
    expect(reads).toBeGreaterThan(1)
    expect(shown).toBe(block)
  })
})
