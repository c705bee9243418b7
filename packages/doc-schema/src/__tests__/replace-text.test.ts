/**
 * replace_text as agents use it (issue 13, Editing): text copied from a read (escapes, inline Markdown),
 * replacements across formatting, ambiguous headings, refusals that say why, and edits applied in place.
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import * as Y from 'yjs'
import { diffText } from '../edits/text-diff.ts'
import {
  type DocNode,
  fragmentToJSON,
  importedDocumentUpdate,
  importMarkdown,
  listSections,
  renderSection,
  replaceText,
} from '../index.ts'
import { FRAGMENT_NAME } from '../limits.ts'
import { blockMarkdown } from '../sections/render-section.ts'
import { locateSections } from '../sections/section-index.ts'
import { cloneDocument, expectOk, loadDocument } from './fixtures.ts'
import { runs } from './property-runs.ts'

const first = (fragment: Y.XmlFragment, index = 1) => listSections(fragment)[index]!
/** A block's JSON with adjacent text runs of the same marks merged (Yjs may split a run at a format change). */
const blockJSON = (fragment: Y.XmlFragment, index: number) => {
  const block = fragmentToJSON(fragment).content![index]!
  const content: DocNode[] = []
  for (const node of block.content ?? []) {
    const last = content.at(-1)
    if (
      last?.type === 'text' &&
      node.type === 'text' &&
      JSON.stringify(last.marks) === JSON.stringify(node.marks)
    )
      content[content.length - 1] = { ...last, text: `${last.text}${node.text}` }
    else content.push(node)
  }
  return { ...block, content }
}
/** Block 1's text runs after one replaceText in a section `## S` whose block 1 is `markdown`. */
function afterReplace(markdown: string, oldText: string, newText: string) {
  const { fragment } = loadDocument('Doc', `## S\n\n${markdown}`)
  const s = first(fragment)
  expectOk(replaceText(fragment, s.sectionId, s.rev, oldText, newText))
  return blockJSON(fragment, 2).content
}

/** The section's block 1 as a section read shows it (`[1] …`). */
const readBlock = (fragment: Y.XmlFragment, index = 1) => {
  const s = first(fragment, index)
  const text = expectOk(renderSection(fragment, s.sectionId)).text
  return /\[1\] (.*)/.exec(text)![1]!
}

describe('text copied from a read', () => {
  test('a URL the read escaped (https\\://) is found and replaced', () => {
    const { fragment } = loadDocument('Doc', '## S\n\nSee https://github.com/tj/commander.js for more.')
    expect(readBlock(fragment)).toContain('https\\://github.com')
    expect(
      afterReplace(
        'See https://github.com/tj/commander.js for more.',
        'https\\://github.com/tj/commander.js',
        'https\\://github.com/tj/commander',
      ),
    ).toEqual([{ type: 'text', text: 'See https://github.com/tj/commander for more.' }])
  })

  test('inline code copied with its backticks keeps the code mark; new text in backticks is code', () => {
    expect(
      afterReplace(
        'The value returned by `.opts()` is an object.',
        'returned by `.opts()`',
        'returned by `.optsWithGlobals()`',
      ),
    ).toEqual([
      { type: 'text', text: 'The value returned by ' },
      { type: 'text', text: '.optsWithGlobals()', marks: [{ type: 'code' }] },
      { type: 'text', text: ' is an object.' },
    ])
  })

  test('Markdown in new text sets the marks it spells out; a mark outside the copy is kept', () => {
    expect(afterReplace('*lead **one** two tail*', '**one** two', 'one **two**')).toEqual([
      { type: 'text', text: 'lead one ', marks: [{ type: 'italic' }] },
      { type: 'text', text: 'two', marks: [{ type: 'italic' }, { type: 'bold' }] },
      { type: 'text', text: ' tail', marks: [{ type: 'italic' }] },
    ])
  })

  test('marks spelled out in old text choose between equal texts', () => {
    expect(afterReplace('word and **word**', '**word**', '**term**')).toEqual([
      { type: 'text', text: 'word and ' },
      { type: 'text', text: 'term', marks: [{ type: 'bold' }] },
    ])
  })

  test('a link copied as [text](url) keeps its target when only the text changes', () => {
    const content = afterReplace(
      'Read [the guide](https://x.org/g "Guide") now.',
      '[the guide](https://x.org/g "Guide")',
      '[the manual](https://x.org/g "Guide")',
    )
    expect(content![1]).toMatchObject({
      text: 'the manual',
      marks: [{ type: 'link', attrs: { href: 'https://x.org/g', title: 'Guide' } }],
    })
  })
})

describe('a whole line copied from a read, with its start', () => {
  test('a list item copied with its marker and task box, and a heading with its ##', () => {
    expect(afterReplace('text', '[1] text', 'texts')).toEqual([{ type: 'text', text: 'texts' }])
    const { fragment } = loadDocument('Doc', '## Setup\n\n- [ ] write the tests\n- [ ] ship')
    let s = first(fragment)
    expectOk(
      replaceText(fragment, s.sectionId, s.rev, '- [ ] write the tests', '- [ ] write the property tests'),
    )
    s = first(fragment)
    expectOk(replaceText(fragment, s.sectionId, s.rev, '## Setup', '## Set-up', { block: 0 }))
    expect(readBlock(fragment)).toBe('- [ ] write the property tests')
    expect(first(fragment).title).toBe('Set-up')
  })
})

const MODULES = resolve(import.meta.dir, '../../../../node_modules/.bun/node_modules')
/** READMEs whose paragraphs hold escapes, links with non-ASCII or bracketed targets, inline HTML, code. */
const README_PACKAGES = ['d3-geo', 'd3-shape', 'prisma', 'nanoid', 'postcss', 'commander', 'zod', 'yjs']

describe('every paragraph of real READMEs, copied whole from its read, is found and replaced', () => {
  const files = README_PACKAGES.flatMap((name) => {
    const dir = join(MODULES, name)
    return existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => /^readme\.md$/i.test(f))
          .map((f) => join(dir, f))
      : []
  })
  test.each(files)('%s', (file) => {
    const doc = new Y.Doc()
    Y.applyUpdate(
      doc,
      expectOk(
        importedDocumentUpdate(
          expectOk(importMarkdown(readFileSync(file, 'utf8'), { fallbackTitle: 'File' })),
        ),
      ),
    )
    const fragment = doc.getXmlFragment(FRAGMENT_NAME)
    let tried = 0
    const revs = new Map(listSections(fragment).map((x) => [x.sectionId, x.rev]))
    for (const located of locateSections(fragment)) {
      located.blocks.forEach((block, i) => {
        // One line of text: what an agent copies from `[n] …` in a section read.
        const text = block.get(0)
        if (block.nodeName !== 'paragraph' || block.length !== 1 || !(text instanceof Y.XmlText)) return
        const shownLine = blockMarkdown(block)
        if (shownLine.includes('\n')) return
        const before = characters(text)
        const { sectionId } = located
        const done = expectOk(
          replaceText(fragment, sectionId, revs.get(sectionId)!, shownLine, `${shownLine} edited`, {
            block: i + 1,
          }),
        )
        revs.set(sectionId, done.rev)
        // The text gained the words; every character before them kept its marks (links their targets).
        const after = characters(text)
        expect(after.map((c) => c.char).join('')).toBe(`${before.map((c) => c.char).join('')} edited`)
        expect(after.slice(0, before.length)).toEqual(before)
        tried++
      })
    }
    expect(tried).toBeGreaterThan(0)
  })
})

/** Each character of a Y.XmlText with its formatting. */
function characters(text: Y.XmlText): Array<{ char: string; marks: unknown }> {
  const out: Array<{ char: string; marks: unknown }> = []
  for (const op of text.toDelta() as { insert: unknown; attributes?: unknown }[])
    if (typeof op.insert === 'string')
      for (const char of op.insert) out.push({ char, marks: op.attributes ?? {} })
  return out
}

describe('formatting of each part is kept', () => {
  test('bold then plain: only the changed words change, each part keeps its formatting', () => {
    expect(
      afterReplace(
        '**extra-typings:** There is a package for that.',
        'extra-typings: There is',
        'extra-typings: There are',
      ),
    ).toEqual([
      { type: 'text', text: 'extra-typings:', marks: [{ type: 'bold' }] },
      { type: 'text', text: ' There are a package for that.' },
    ])
  })

  test('new text takes the formatting of the text it replaces at that position', () => {
    expect(afterReplace('**old bold** plain', 'old bold plain', 'new bold text')).toEqual([
      { type: 'text', text: 'new bold', marks: [{ type: 'bold' }] },
      { type: 'text', text: ' text' },
    ])
  })
})

describe('retitling and choosing the block', () => {
  test('a heading whose text also occurs in its section is retitled with block 0', () => {
    const { fragment } = loadDocument('Doc', '## Setup\n\nSetup is easy.\n\nRun Setup twice.')
    const s = first(fragment)
    const refused = replaceText(fragment, s.sectionId, s.rev, 'Setup', 'Installation')
    expect(refused.kind === 'error' && refused.message).toBe(
      'oldText: it occurs 3 times in the section (count 3): the heading, block 1, block 2. Add surrounding ' +
        'text so it occurs once, or pass block with the one to change (0 = the heading).',
    )
    expectOk(replaceText(fragment, s.sectionId, s.rev, 'Setup', 'Installation', { block: 0 }))
    const after = first(fragment)
    expect(after.title).toBe('Installation')
    expect(after.sectionId).toBe(s.sectionId)
    expect(blockJSON(fragment, 2).content![0]!.text).toBe('Setup is easy.')
  })

  test('a block out of range is refused naming block', () => {
    const { fragment } = loadDocument('Doc', '## S\n\none')
    const s = first(fragment)
    const result = replaceText(fragment, s.sectionId, s.rev, 'one', 'two', { block: 2 })
    expect(result.kind === 'error' && result.field).toBe('block')
  })
})

describe('refusals say why the text did not match', () => {
  const { fragment } = loadDocument('Doc', '## S\n\nIt’s a pear, not an apple.')
  const s = first(fragment)
  const message = (oldText: string) => {
    const result = replaceText(fragment, s.sectionId, s.rev, oldText, 'x')
    return result.kind === 'error' ? result.message : 'ok'
  }
  test('the first differing character, by code point (a straight quote for a curly one)', () => {
    expect(message("It's a pear")).toBe(
      'oldText: it does not occur in the section (count 0). Its first 2 characters ("It") occur in ' +
        'block 1; after them the text has "’" (U+2019) where oldText has "\'" (U+0027).',
    )
  })
  test('Markdown read back is named when it was tried', () => {
    expect(message('**a peach**')).toContain('neither as read_document shows it')
  })
  test('a line break in new text is refused also when the texts are read as Markdown', () => {
    const result = replaceText(fragment, s.sectionId, s.rev, 'a pear\\, not', 'a pear,\nnot')
    expect(result.kind === 'error' && result.reason).toBe('newline_in_text')
  })
  test("new text is read within a write's work ceiling: a mark every few characters past it is refused", () => {
    const result = replaceText(fragment, s.sectionId, s.rev, 'a pear', '*a* '.repeat(3_000))
    expect(result.kind === 'error' && [result.reason, result.field]).toEqual(['too_complex', 'newText'])
    expect(result.kind === 'error' && result.message).toStartWith(
      'newText: it makes more than 8,000 elements',
    )
  })
  test('a line break in old text: the text of one line, or edit_blocks', () => {
    expect(message('a pear,\n\nnot')).toContain('within one paragraph, heading, list item or table cell')
  })
})

describe('edits are applied in place', () => {
  test('characters both texts share keep their Yjs items: a cursor after the change stays put', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom('a', 'b', 'c', ' ', 'é', '👍') }),
        fc.string({ maxLength: 12, unit: fc.constantFrom('a', 'b', 'c', ' ', 'é', '👍') }),
        (changed, replacement) => {
          fc.pre(changed !== replacement)
          const { fragment } = loadDocument('Doc', '## S\n\nstart X')
          const paragraph = fragment.get(2) as Y.XmlElement
          const text = paragraph.get(0) as Y.XmlText
          const doc = fragment.doc!
          doc.transact(() => text.insert(6, `${changed}Z`))
          // A person's cursor right before "Z", after the changed text.
          const cursor = Y.createRelativePositionFromTypeIndex(text, 6 + changed.length)
          const s = first(fragment)
          const result = replaceText(
            fragment,
            s.sectionId,
            s.rev,
            `start ${changed}Z`,
            `start ${replacement}Z`,
          )
          if (result.kind === 'error') {
            // The same text twice in the block is ambiguous; nothing changed.
            expect(result.reason).toBe('text_ambiguous')
            return
          }
          expect(text.toString()).toBe(`start ${replacement}ZX`)
          const at = Y.createAbsolutePositionFromRelativePosition(cursor, doc)!
          expect(at.index).toBe(6 + replacement.length)
        },
      ),
      runs(200),
    )
  })
})

describe('an agent edit and a person typing in the same text converge, keeping both', () => {
  test('whatever the person types, wherever, is kept; the rest is the agent result (generated)', () => {
    const unit = fc.constantFrom('a', 'b', ' ', 'é')
    fc.assert(
      fc.property(
        fc.string({ unit, minLength: 1, maxLength: 10 }),
        fc.string({ unit, maxLength: 10 }),
        fc.nat(),
        fc.boolean(),
        (changed, replacement, where, agentFirst) => {
          fc.pre(changed !== replacement)
          const server = loadDocument('Doc', `## S\n\n<${changed}>`)
          const person = cloneDocument(server.doc)
          const s = first(server.fragment)
          const result = replaceText(server.fragment, s.sectionId, s.rev, `<${changed}>`, `<${replacement}>`)
          expectOk(result)
          const typed = (person.fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText
          const at = where % (typed.length + 1)
          typed.insert(at, 'Z')
          const agent = Y.encodeStateAsUpdate(server.doc, Y.encodeStateVector(person.doc))
          const people = Y.encodeStateAsUpdate(person.doc, Y.encodeStateVector(server.doc))
          if (agentFirst) Y.applyUpdate(server.doc, people)
          Y.applyUpdate(person.doc, agent)
          if (!agentFirst) Y.applyUpdate(server.doc, people)
          const merged = ((server.fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText).toString()
          expect(((person.fragment.get(2) as Y.XmlElement).get(0) as Y.XmlText).toString()).toBe(merged)
          expect(merged.replace('Z', '')).toBe(`<${replacement}>`)
          expect(merged).toContain('Z')
        },
      ),
      runs(200),
    )
  })
})

describe('diffText', () => {
  test('its hunks turn one string into the other, in order, never splitting a surrogate pair', () => {
    const unit = fc.constantFrom('a', 'b', ' ', '👍', '👎', 'é')
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 30 }), fc.string({ unit, maxLength: 30 }), (a, b) => {
        const hunks = diffText(a, b)
        let out = ''
        let at = 0
        for (const hunk of hunks) {
          expect(hunk.aStart).toBeGreaterThanOrEqual(at)
          expect(a.slice(at, hunk.aStart)).toBe(b.slice(out.length, out.length + hunk.aStart - at))
          out += a.slice(at, hunk.aStart) + b.slice(hunk.bStart, hunk.bEnd)
          at = hunk.aEnd
          for (const cut of [hunk.aStart, hunk.aEnd])
            expect(/[\uD800-\uDBFF]$/.test(a.slice(0, cut)) && /^[\uDC00-\uDFFF]/.test(a.slice(cut))).toBe(
              false,
            )
        }
        expect(out + a.slice(at)).toBe(b)
      }),
      runs(300),
    )
  })
})
