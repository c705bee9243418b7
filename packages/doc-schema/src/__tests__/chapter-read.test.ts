/**
 * A section read with its subsections (issue 13: a chapter of ten subsections took eleven reads). The
 * chapter is the section and every later section whose heading is deeper, up to the next heading at its
 * level or higher. Paging a chapter from its first read to its last, following `next`, shows every
 * character of every block of every section in it exactly once, each section as a section read shows it;
 * the walk that finds the subsections stops at the chapter's end, and a read stops at its budget.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type * as Y from 'yjs'
import { listSections, renderChapter, renderSection } from '../index.ts'
import { blockMarkdownPrefix } from '../markdown/block-prefix.ts'
import { blockMarkdown } from '../sections/render-section.ts'
import { chapterSections, type LocatedSection, locateSections } from '../sections/section-index.ts'
import { BlocksShown, expectOk, LONG_BLOCKS, loadDocument, RealFiles, withDeletions } from './fixtures.ts'
import { runs } from './property-runs.ts'

/** What locateSections says the chapter of `sectionId` is: the section, then the deeper ones after it. */
function expectedChapter(fragment: Y.XmlFragment, sectionId: string): LocatedSection[] {
  const all = locateSections(fragment)
  const at = all.findIndex((section) => sectionId !== '' && section.sectionId === sectionId)
  if (at === -1) return []
  const end = all.findIndex((section, i) => i > at && section.level <= all[at]!.level)
  return all.slice(at, end === -1 ? all.length : end)
}

const headingMarkdown = (section: LocatedSection) =>
  blockMarkdownPrefix(section.heading, Number.MAX_SAFE_INTEGER).text

/**
 * Reads chapter `sectionId` from its first read to its last at `maxChars`, following `next`; checks
 * each read's text against the sections' own heading and block Markdown and returns, per section, its
 * blocks' Markdown and the [from, to) ranges shown of each, and the order in which sections were shown.
 */
function pageChapter(fragment: Y.XmlFragment, sectionId: string, maxChars: number) {
  const chapter = expectedChapter(fragment, sectionId)
  const byId = new Map(chapter.map((section) => [section.sectionId, section]))
  const markdown = new Map(chapter.map((section) => [section.sectionId, section.blocks.map(blockMarkdown)]))
  const headings = new Map(chapter.map((section) => [section.sectionId, headingMarkdown(section)]))
  // The document does not change while it is paged: each section's rev, listed once.
  const revs = new Map(listSections(fragment).map((section) => [section.sectionId, section.rev]))
  const shown = new Map<string, BlocksShown>()
  const order: string[] = []
  let opts: { fromSection?: string; fromBlock?: number; blockOffset?: number } = {}
  for (let reads = 0; ; reads++) {
    expect(reads).toBeLessThan(100_000)
    const read = expectOk(renderChapter(fragment, sectionId, { ...opts, maxChars }))
    expect(read.shownChars).toBe(read.text.length)
    expect(read.shownChars).toBeLessThanOrEqual(Math.max(maxChars, 200))
    expect(read.sections[0]).toMatchObject({
      sectionId: opts.fromSection ?? sectionId,
      firstBlock: opts.fromBlock ?? 1,
    })
    let expected = ''
    read.sections.forEach((part, i) => {
      const section = byId.get(part.sectionId)!
      expect(part.rev).toBe(revs.get(part.sectionId)!)
      expect(part.blockCount).toBe(section.blocks.length)
      const heading = headings.get(part.sectionId)!
      if (i === 0) {
        // The first heading of a read is shown whole, or cut past half the budget with a line saying so.
        const end = read.text.indexOf('\n\n')
        const line = end === -1 ? read.text : read.text.slice(0, end)
        if (line !== heading) expect(line).toMatch(/\n\[… heading cut at \d+ characters\]$/)
        expected = line
      } else {
        expect(part.firstBlock).toBe(1)
        expect(part.firstOffset).toBeUndefined()
        expected += `\n\n${heading}`
      }
      if (order.at(-1) !== part.sectionId) order.push(part.sectionId)
      const blocks = shown.get(part.sectionId) ?? new BlocksShown(markdown.get(part.sectionId)!)
      shown.set(part.sectionId, blocks)
      expected += blocks.textOf(part)
    })
    expect(read.text).toBe(expected)
    if (read.next === undefined) return { chapter, shown, order }
    expect(read.next.sectionId).not.toBe('')
    opts = {
      fromSection: read.next.sectionId,
      fromBlock: read.next.fromBlock,
      ...(read.next.blockOffset === undefined ? {} : { blockOffset: read.next.blockOffset }),
    }
  }
}

/** Every section of the chapter was shown, in order, and every block's ranges tile its Markdown. */
function expectEveryCharacterOnce({ chapter, shown, order }: ReturnType<typeof pageChapter>) {
  expect(order).toEqual(chapter.map((section) => section.sectionId))
  for (const section of chapter) {
    shown.get(section.sectionId)!.expectTiled()
  }
}

describe('chapterSections', () => {
  test('equals the chapter locateSections lists, for every id, also after deletions with deleted items kept (generated documents)', () => {
    const block = fc.constantFrom('## A', '### B', '#### C', 'text', '- item', '> quote')
    fc.assert(
      fc.property(fc.array(block, { maxLength: 14 }), fc.nat(), fc.nat(), (blocks, cut, at) => {
        const { fragment, ids } = withDeletions(blocks, cut, at)
        for (const id of [...ids, 'not-an-id', ''])
          expect([...chapterSections(fragment, id)]).toEqual(expectedChapter(fragment, id))
      }),
      runs(80),
    )
  })

  test('the walk stops at the chapter end: nothing after the next same-level heading is visited', () => {
    const { fragment } = loadDocument(
      'Doc',
      '## One\n\na\n\n### One.1\n\nb\n\n#### One.1.1\n\nc\n\n## Two\n\nd\n\n### Two.1\n\ne',
    )
    const [, one, , , two] = locateSections(fragment)
    // The first element after "## Two" throws when the walk asks what it is.
    Object.defineProperty(two!.blocks[0]!, 'nodeName', {
      get() {
        throw new Error('an element past the chapter end was visited')
      },
    })
    expect([...chapterSections(fragment, one!.sectionId)].map((s) => headingMarkdown(s))).toEqual([
      '## One',
      '### One.1',
      '#### One.1.1',
    ])
    expect(expectOk(renderChapter(fragment, one!.sectionId)).text).toBe(
      '## One\n\n[1] a\n\n### One.1\n\n[1] b\n\n#### One.1.1\n\n[1] c',
    )
  })
})

describe('renderChapter', () => {
  const files = new RealFiles(['commander', 'fast-check', 'zod', 'hono', 'yjs', 'lib0'])

  test('the real files are there', () => {
    expect(files.paths.length).toBeGreaterThanOrEqual(4)
  })

  test('a chapter in one read: each section as its own section read shows it, nothing of the next chapter', () => {
    const { fragment } = loadDocument(
      'Doc',
      '## A\n\nintro\n\n### A.1\n\none\n\ntwo\n\n#### A.1.a\n\ndeep\n\n### A.2\n\n## B\n\nother chapter',
    )
    const [, a, a1, a1a, a2] = listSections(fragment)
    const read = expectOk(renderChapter(fragment, a!.sectionId))
    const alone = [a, a1, a1a, a2].map((s) => expectOk(renderSection(fragment, s!.sectionId)))
    expect(read.text).toBe(alone.map((s) => s.text).join('\n\n'))
    expect(read.text).not.toContain('other chapter')
    expect(read.sections.map(({ sectionId, rev }) => ({ sectionId, rev }))).toEqual(
      [a, a1, a1a, a2].map((s) => ({ sectionId: s!.sectionId, rev: s!.rev })),
    )
    expect(read.next).toBeUndefined()
    // The title heading's chapter is the whole document.
    const title = listSections(fragment)[0]!
    expect(expectOk(renderChapter(fragment, title.sectionId)).text).toContain('other chapter')
  })

  test('paging every chapter of real files, at drawn budgets from 200 to 3,000 characters, shows every character once', () => {
    files.everySectionAtDrawnBudgets(6, (fragment, sectionId, maxChars) =>
      expectEveryCharacterOnce(pageChapter(fragment, sectionId, maxChars)),
    )
  })

  test('blocks far longer than the budget in later subsections, and subsections without blocks, are read in parts', () => {
    const { fragment } = loadDocument(
      'Doc',
      `## Top\n\nshort\n\n### ${'h'.repeat(150)}\n\n${LONG_BLOCKS.list}\n\n### Empty\n\n#### Deeper\n\n${LONG_BLOCKS.code}\n\n${'😀'.repeat(400)}\n\n### Last\n\nend\n\n## Next\n\nnot shown`,
    )
    const top = listSections(fragment)[1]!.sectionId
    for (const maxChars of [1, 250, 333, 1_000, 4_096]) {
      expectEveryCharacterOnce(pageChapter(fragment, top, maxChars))
    }
  })

  test('a read renders only up to its budget: a later subsection past it is never opened once its total is kept', () => {
    const body = Array.from({ length: 50 }, (_, i) => `paragraph ${i} ${'words '.repeat(15)}`).join('\n\n')
    const { fragment } = loadDocument('Doc', `## Big\n\n${body}\n\n### Sub\n\n${body}\n\n### Far\n\n${body}`)
    const [, big, , far] = locateSections(fragment)
    // A first cut read measures the chapter's sections once (their totals are kept with their revisions).
    const first = expectOk(renderChapter(fragment, big!.sectionId, { maxChars: 500 }))
    // From then on, the content of a subsection past the budget is neither rendered nor hashed.
    for (const element of [far!.heading, ...far!.blocks]) {
      element.toArray = () => {
        throw new Error('a subsection past the budget was opened')
      }
    }
    const read = expectOk(renderChapter(fragment, big!.sectionId, { maxChars: 500 }))
    expect(read.text).toBe(first.text)
    expect(read.sections).toHaveLength(1)
    expect(read.next).toEqual({ sectionId: big!.sectionId, fromBlock: read.sections[0]!.lastBlock + 1 })
  })

  test('fromSection outside the chapter, or blocks outside it, are refused by name', () => {
    const { fragment } = loadDocument('Doc', '## A\n\nx\n\n### A.1\n\ny\n\n## B\n\nz')
    const [title, a, a1, b] = listSections(fragment)
    for (const outside of [b!.sectionId, title!.sectionId, 'no-such-id', '']) {
      const refused = renderChapter(fragment, a!.sectionId, { fromSection: outside })
      expect(refused.kind === 'error' && refused.reason).toBe('section_not_in_chapter')
      expect(refused.kind === 'error' && refused.message).toStartWith(
        `fromSection: "${outside}" is neither section "${a!.sectionId}" nor one of its subsections;`,
      )
    }
    const within = expectOk(renderChapter(fragment, a!.sectionId, { fromSection: a1!.sectionId }))
    expect(within.text).toBe('### A.1\n\n[1] y')
    const past = renderChapter(fragment, a!.sectionId, { fromSection: a1!.sectionId, fromBlock: 3 })
    expect(past.kind === 'error' && past.reason).toBe('block_out_of_range')
    const missing = renderChapter(fragment, 'no-such-id')
    expect(missing.kind === 'error' && missing.reason).toBe('section_not_found')
  })

  test('a later heading with no id of its own is listed but never named as where to read on', () => {
    const { doc, fragment } = loadDocument(
      'Doc',
      `## A\n\n${'x'.repeat(180)}\n\n### A.1\n\ny\n\n### A.2\n\nz`,
    )
    const [, a, a1, a2] = locateSections(fragment)
    doc.transact(() => {
      a1!.heading.removeAttribute('toc-id')
      a2!.heading.setAttribute('toc-id', a!.sectionId)
    })
    const whole = expectOk(renderChapter(fragment, a!.sectionId))
    expect(whole.sections.map((s) => s.sectionId)).toEqual([a!.sectionId, '', a!.sectionId])
    // At 200 characters the read stops before A.1, which cannot be named: next says so with ''.
    const cut = expectOk(renderChapter(fragment, a!.sectionId, { maxChars: 200 }))
    expect(cut.next).toEqual({ sectionId: '', fromBlock: 1 })
  })
})
