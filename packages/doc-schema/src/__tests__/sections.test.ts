import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import * as Y from 'yjs'
import {
  FRAGMENT_NAME,
  findSection,
  HEADING_ID_ATTR,
  listSections,
  readOutline,
  reassignDuplicateIds,
  renderSection,
} from '../index.ts'
import {
  holdsNoElement,
  LOCATE_STEP_CHILDREN,
  lastSection,
  locateSections,
  locateSectionsInSteps,
} from '../sections/section-index.ts'
import { outlineMeasureSteps } from '../sections/stored-totals.ts'
import { safeCut } from '../text-cut.ts'
import { cloneDocument, expectOk, loadDocument, UNICODE_WORDS } from './fixtures.ts'
import { runs } from './property-runs.ts'

/** Generated sections: a heading (## or ###, title S or T) and up to three blocks. */
const block = fc.constantFrom('para', '**bold** text', '- item', '> quote', ...UNICODE_WORDS)
const section = fc.tuple(
  fc.constantFrom('## ', '### '),
  fc.constantFrom('S', 'T'),
  fc.array(block, { maxLength: 3 }),
)
type GeneratedSection = [string, string, string[]]
const sectionsMarkdown = (sections: GeneratedSection[]): string =>
  sections.map(([hashes, title, blocks]) => [`${hashes}${title}`, ...blocks].join('\n\n')).join('\n\n')

const OUTLINE_MD = 'intro\n\n## A\n\na text\n\n#### A.skip\n\n### A.b\n\n## B\n\nb text'

describe('outline', () => {
  test('is the heading tree in document order; a skipped level nests under the nearest shallower heading', () => {
    const { fragment } = loadDocument('Doc', OUTLINE_MD)
    const shape = (nodes: ReturnType<typeof readOutline>): unknown =>
      nodes.map((node) => [node.title, node.level, shape(node.children)])
    expect(shape(readOutline(fragment))).toEqual([
      [
        'Doc',
        1,
        [
          [
            'A',
            2,
            [
              ['A.skip', 4, []],
              ['A.b', 3, []],
            ],
          ],
          ['B', 2, []],
        ],
      ],
    ])
    for (const section of listSections(fragment)) {
      expect(section.sectionId).toMatch(/^[A-Za-z0-9_-]{16}$/)
      expect(section.rev).toMatch(/^[0-9a-f]{12}$/)
    }
  })
})

describe('rev', () => {
  test('is the same after encode/decode into another doc (another process)', () => {
    const { doc, fragment } = loadDocument('Doc', OUTLINE_MD)
    const copy = cloneDocument(doc)
    expect(listSections(copy.fragment)).toEqual(listSections(fragment))
  })

  test('changes with text, marks, attributes and order inside the section, and only there', () => {
    const { doc, fragment } = loadDocument('Doc', '## A\n\none\n\ntwo\n\n## B\n\nthree')
    const before = listSections(fragment)
    const a = () => listSections(fragment)[1]!.rev
    const b = () => listSections(fragment)[2]!.rev
    const paragraph = fragment.get(2) as Y.XmlElement
    const text = paragraph.get(0) as Y.XmlText
    const steps: [string, () => void][] = [
      ['text', () => text.insert(0, 'x')],
      ['mark', () => text.format(0, 1, { bold: {} })],
      ['attribute', () => paragraph.setAttribute('data', 'x')],
      [
        'order',
        () => {
          const moved = (fragment.get(3) as Y.XmlElement).clone()
          fragment.delete(3, 1)
          fragment.insert(2, [moved])
        },
      ],
    ]
    const seen = new Set([a()])
    for (const [name, step] of steps) {
      doc.transact(step)
      expect({ name, fresh: !seen.has(a()) }).toEqual({ name, fresh: true })
      seen.add(a())
      expect(b()).toBe(before[2]!.rev)
      expect(listSections(fragment)[0]!.rev).toBe(before[0]!.rev)
    }
  })

  test('depends only on the section’s content (generated documents)', () => {
    fc.assert(
      fc.property(
        section,
        fc.array(section, { maxLength: 3 }),
        fc.array(section, { maxLength: 3 }),
        (target, pre, post) => {
          const alone = loadDocument('X', sectionsMarkdown([target]))
          const among = loadDocument('Y', sectionsMarkdown([...pre, target, ...post]))
          const rev = listSections(alone.fragment)[1]!.rev
          expect(listSections(among.fragment)[1 + pre.length]!.rev).toBe(rev)
        },
      ),
      runs(60),
    )
  })
})

describe('lastSection', () => {
  test('is locateSections’ last section, found from the end, also after edits and deletions (generated documents)', () => {
    fc.assert(
      fc.property(fc.array(section, { maxLength: 4 }), fc.nat(), fc.nat(), (sections, cut, at) => {
        const markdown = sectionsMarkdown(sections)
        // Without garbage collection (version history keeps it off) a deleted item keeps its content in
        // Yjs's item list: the walk must skip it as the index walk does.
        const doc = new Y.Doc({ gc: false })
        Y.applyUpdate(doc, Y.encodeStateAsUpdate(loadDocument('Doc', markdown).doc))
        const fragment = doc.getXmlFragment(FRAGMENT_NAME)
        if (fragment.length > 1)
          fragment.delete(
            1 + (at % (fragment.length - 1)),
            Math.min(cut % 3, fragment.length - 1 - (at % (fragment.length - 1))),
          )
        expect(lastSection(fragment)).toEqual(locateSections(fragment).at(-1))
        expect(holdsNoElement(fragment)).toBe(false)
      }),
      runs(60),
    )
  })

  test('an empty document has no last section and holds no element', () => {
    const { fragment } = loadDocument('Doc')
    fragment.delete(0, fragment.length)
    expect(lastSection(fragment)).toBeUndefined()
    expect(holdsNoElement(fragment)).toBe(true)
  })
})

describe('locating in steps', () => {
  test('pauses every LOCATE_STEP_CHILDREN blocks and finds what one walk finds; measuring pauses while locating', () => {
    // A document of 2.5 × LOCATE_STEP_CHILDREN blocks: sections of a heading and four paragraphs.
    const parts: string[] = []
    for (let i = 0; parts.length * 5 < LOCATE_STEP_CHILDREN * 2.5; i++)
      parts.push(`## Part ${i}\n\none ${i}\n\ntwo\n\nthree\n\nfour`)
    const { fragment } = loadDocument('Doc', parts.join('\n\n'))
    const steps = locateSectionsInSteps(fragment)
    let pauses = 0
    let step = steps.next()
    for (; !step.done; step = steps.next()) pauses++
    expect(pauses).toBe(Math.floor((fragment.length - 1) / LOCATE_STEP_CHILDREN))
    expect(pauses).toBeGreaterThanOrEqual(2)
    expect(step.value).toEqual(locateSections(fragment))
    // The measuring's first steps are the locating's pauses, each measuring nothing (false).
    const measuring = outlineMeasureSteps(fragment)
    for (let i = 0; i < pauses; i++) expect(measuring.next()).toEqual({ value: false, done: false })
  })
})

describe('duplicate ids', () => {
  test('resolve to the first heading, and reassignDuplicateIds gives the copies fresh ids in one transaction', () => {
    const { doc, fragment } = loadDocument('Doc', '## A\n\nfirst\n\n## B\n\nsecond')
    const [, a, b] = listSections(fragment)
    ;(fragment.get(3) as Y.XmlElement).setAttribute(HEADING_ID_ATTR, a!.sectionId)
    expect(findSection(fragment, a!.sectionId)!.title).toBe('A')
    let updates = 0
    doc.on('update', () => updates++)
    expect(reassignDuplicateIds(fragment)).toBe(1)
    expect(updates).toBe(1)
    const ids = listSections(fragment).map((section) => section.sectionId)
    expect(new Set(ids).size).toBe(3)
    expect(ids[1]).toBe(a!.sectionId)
    expect(ids[2]).not.toBe(b!.sectionId)
    expect(reassignDuplicateIds(fragment)).toBe(0)
  })
})

describe('renderSection', () => {
  const md = '## S\n\nalpha\n\n- one\n- two\n\n```\ncode\n```\n\n![pic](https://x.org/p.png)'

  test('numbers the blocks after the heading and shows media as placeholders', () => {
    const { fragment } = loadDocument('Doc', md)
    const section = listSections(fragment)[1]!
    const read = expectOk(renderSection(fragment, section.sectionId))
    expect(read.text).toBe('## S\n\n[1] alpha\n\n[2] - one\n- two\n\n[3] ```\ncode\n```\n\n[4] [image: pic]')
    expect(read).toMatchObject({ rev: section.rev, blockCount: 4, firstBlock: 1, lastBlock: 4 })
    expect(read.shownChars).toBe(read.text.length)
    expect(read.nextBlock).toBeUndefined()
  })

  test('starts at fromBlock and stops on a block boundary within the budget, naming the next block', () => {
    const { fragment } = loadDocument('Doc', md)
    const id = listSections(fragment)[1]!.sectionId
    const read = expectOk(renderSection(fragment, id, { fromBlock: 2, maxChars: 200 }))
    expect(read.text).toBe('## S\n\n[2] - one\n- two\n\n[3] ```\ncode\n```\n\n[4] [image: pic]')
    const { fragment: big } = loadDocument('Doc', `## S\n\n${'x'.repeat(150)}\n\n${'y'.repeat(60)}\n\nz`)
    const bigId = listSections(big)[1]!.sectionId
    const cut = expectOk(renderSection(big, bigId, { maxChars: 200 }))
    expect(cut.text).toBe(`## S\n\n[1] ${'x'.repeat(150)}`)
    expect(cut).toMatchObject({ firstBlock: 1, lastBlock: 1, nextBlock: 2 })
    expect(cut.shownChars).toBeLessThanOrEqual(200)
    const rest = expectOk(renderSection(big, bigId, { fromBlock: cut.nextBlock! }))
    expect(rest.text).toBe(`## S\n\n[2] ${'y'.repeat(60)}\n\n[3] z`)
    expect(rest).toMatchObject({ firstBlock: 2, lastBlock: 3, blockCount: 3 })
    expect(rest.nextBlock).toBeUndefined()
  })

  test('a block longer than the budget is cut, never inside a surrogate pair', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...UNICODE_WORDS, 'a'), { minLength: 50, maxLength: 150 }),
        fc.integer({ min: 200, max: 400 }),
        (words, maxChars) => {
          const { fragment } = loadDocument('Doc', `## S\n\n${words.join('')}\n\nnext`)
          const id = listSections(fragment)[1]!.sectionId
          const read = expectOk(renderSection(fragment, id, { maxChars }))
          expect(read.shownChars).toBeLessThanOrEqual(maxChars)
          // A lone surrogate anywhere means a pair was split.
          expect(read.text).not.toMatch(
            /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/,
          )
          // The next read continues the cut block where this one stopped (not the block after it).
          if (read.truncatedBlock === 1)
            expect(read).toMatchObject({ nextBlock: 1, nextOffset: expect.any(Number) })
        },
      ),
      runs(80),
    )
    expect(safeCut('a😀', 2)).toBe(1)
    expect(safeCut('a😀', 3)).toBe(3)
  })

  test('named refusals: section_not_found, block_out_of_range', () => {
    const { fragment } = loadDocument('Doc', md)
    const missing = renderSection(fragment, 'nope')
    expect(missing.kind === 'error' && missing.reason).toBe('section_not_found')
    const id = listSections(fragment)[1]!.sectionId
    for (const fromBlock of [0, 5, 1.5]) {
      const out = renderSection(fragment, id, { fromBlock })
      expect(out.kind === 'error' && out.reason).toBe('block_out_of_range')
    }
  })
})
