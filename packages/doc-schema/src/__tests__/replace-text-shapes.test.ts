/**
 * replace_text on each shape a section read prints (issue 26): every test takes a line from a real read
 * (renderSection, what read_document shows), replaces it, and reads again. new_text is inline Markdown,
 * so `*Monday*` is italic; lines that are not text are refused naming the call that changes them.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import * as Y from 'yjs'
import { schema } from '../extensions.ts'
import { fragmentToJSON, listSections, renderSection, replaceText } from '../index.ts'
import { expectOk, loadDocument } from './fixtures.ts'
import { runs } from './property-runs.ts'

const SHAPES = `## S

- top item
  - nested *item* one
  - nested two
    1. deeper
- second

  \`\`\`js
  code in list
  more code
  \`\`\`

| Option | Default |
| - | - |
| alpha | 1 |
| **beta** | 2 |

![a diagram](https://x.org/a.png)

> quoted line
> - item in a quote

Line one with [a link](https://x.org/a "Title") and \`code\`  
line two after a break.

Monday is a day, and **bold text** ends here.`

/** A document of `markdown` under `## S`, its section, and the read's lines. */
function read(markdown = SHAPES) {
  const { fragment } = loadDocument('Doc', markdown)
  const section = listSections(fragment)[1]!
  return { fragment, section, lines: readLines(fragment, section.sectionId) }
}

const readLines = (fragment: Y.XmlFragment, sectionId: string) =>
  expectOk(renderSection(fragment, sectionId)).text.split('\n')

/** The printed line that contains `part` (exactly one must). */
function lineWith(lines: readonly string[], part: string): string {
  const found = lines.filter((line) => line.includes(part))
  expect(found).toHaveLength(1)
  return found[0]!
}

/**
 * Replaces the printed line holding `part` by `edit(line)` and reads again: the new read must show the
 * edited line where the old one was, every other line as before.
 */
function replaceLine(part: string, edit: (line: string) => string, markdown = SHAPES) {
  const { fragment, section, lines } = read(markdown)
  const line = lineWith(lines, part)
  const next = edit(line)
  const result = replaceText(fragment, section.sectionId, section.rev, line, next)
  if (result.kind === 'error') throw new Error(result.message)
  expect(readLines(fragment, section.sectionId)).toEqual(lines.map((l) => (l === line ? next : l)))
  return { fragment, line, next }
}

/** What replaceText refuses for the printed line holding `part`, replaced by `edit(line)`. */
function refusal(part: string, edit: (line: string) => string) {
  const { fragment, section, lines } = read()
  const line = lineWith(lines, part)
  const result = replaceText(fragment, section.sectionId, section.rev, line, edit(line))
  expect(readLines(fragment, section.sectionId)).toEqual(lines)
  if (result.kind !== 'error') throw new Error(`${line} was not refused`)
  return result
}

describe('new_text is inline Markdown, as edit_blocks reads it', () => {
  test('*Monday* makes Monday italic; a literal * is written \\* and stored as *', () => {
    const { fragment } = replaceLine('Monday', (l) => l.replace('Monday', '*Monday*'))
    const paragraph = fragmentToJSON(fragment).content!.at(-1)!
    expect(paragraph.content![0]).toEqual({ type: 'text', text: 'Monday', marks: [{ type: 'italic' }] })
    // The call: old_text the bare word, as written.
    const { fragment: bare, section } = read()
    expectOk(replaceText(bare, section.sectionId, section.rev, 'Monday', '*Monday*'))
    expect(fragmentToJSON(bare).content!.at(-1)!.content![0]!.marks).toEqual([{ type: 'italic' }])
    const literal = replaceLine('Monday', (l) => l.replace('Monday', '\\*Monday\\*'))
    expect(JSON.stringify(fragmentToJSON(literal.fragment))).toContain('"text":"*Monday* is a day, and "')
  })

  test('a mark across the edit boundary: plain new text keeps the bold it replaces, Markdown moves it', () => {
    // Copied without markup: the replaced characters' bold carries over to the new ones.
    const { fragment, section } = read()
    expectOk(replaceText(fragment, section.sectionId, section.rev, 'text ends', 'words end'))
    expect(lineWith(readLines(fragment, section.sectionId), 'Monday')).toBe(
      '[6] Monday is a day, and **bold words** end here.',
    )
    // Spelled out: the bold moves as new_text says.
    replaceLine('Monday', (l) => l.replace('**bold text** ends', 'bold **text ends**'))
  })

  test('a link: new text keeps its target; new Markdown changes the target or drops the link', () => {
    replaceLine('link', (l) => l.replace('[a link]', '[the link]'))
    replaceLine('link', (l) => l.replace('(https://x.org/a "Title")', '(https://y.org/b)'))
    replaceLine('link', (l) => l.replace('[a link](https://x.org/a "Title")', 'a link'))
  })

  test('a code span: edited inside its backticks, or unmarked without them', () => {
    replaceLine('code`', (l) => l.replace('`code`', '`codes`'))
    replaceLine('code`', (l) => l.replace('`code`', 'code'))
  })
})

describe('every shape a read prints', () => {
  test('a nested list item, copied with its indentation and marker', () => {
    replaceLine('nested *item* one', (l) => l.replace('*item* one', '*entry* one'))
    replaceLine('deeper', (l) => `${l} still`)
  })

  test('an item in a quote, copied with its > and marker', () => {
    replaceLine('item in a quote', (l) => l.replace('item', 'entry'))
  })

  test('code inside a list, one line or several, copied with their indentation', () => {
    replaceLine('code in list', (l) => l.replace('list', 'a list'))
    const { fragment, section, lines } = read()
    const first = lineWith(lines, 'code in list')
    const second = lineWith(lines, 'more code')
    expectOk(
      replaceText(
        fragment,
        section.sectionId,
        section.rev,
        `${first}\n${second}`,
        `${first}\n  inserted line\n${second}`,
      ),
    )
    const after = readLines(fragment, section.sectionId)
    expect(after.slice(after.indexOf(first), after.indexOf(first) + 3)).toEqual([
      first,
      '  inserted line',
      second,
    ])
    // A new line written without the list's indentation is code as written: the read indents it.
    const again = read()
    expectOk(
      replaceText(
        again.fragment,
        again.section.sectionId,
        again.section.rev,
        `${first}\n${second}`,
        `${first}\nlast`,
      ),
    )
    expect(readLines(again.fragment, again.section.sectionId)).toContain('  last')
  })

  test('a table row: each changed cell is rewritten, the others untouched', () => {
    const { fragment } = replaceLine('| alpha |', (l) => l.replace('| 1 |', '| 100 |'))
    const table = fragmentToJSON(fragment).content!.find((block) => block.type === 'table')!
    expect(JSON.stringify(table.content![1])).toContain('"text":"100"')
    replaceLine('beta', (l) => l.replace('**beta**', '*beta*'))
    // Some of its cells, without the edge pipes.
    const { fragment: again, section } = read()
    expectOk(replaceText(again, section.sectionId, section.rev, 'alpha | 1', 'gamma | 1'))
    expect(readLines(again, section.sectionId)).toContain('| gamma | 1 |')
  })

  test("a row edit is applied in place: a person's caret in each of its cells stays where it was", () => {
    const { fragment, section } = read()
    const table = fragment.toArray().find((el) => (el as Y.XmlElement).nodeName === 'table') as Y.XmlElement
    const cells = (table.get(1) as Y.XmlElement).toArray() as Y.XmlElement[]
    const [alpha, one] = cells.map((cell) => (cell.get(0) as Y.XmlElement).get(0) as Y.XmlText)
    const carets = [
      Y.createRelativePositionFromTypeIndex(alpha!, 3),
      Y.createRelativePositionFromTypeIndex(one!, 0),
    ]
    expectOk(replaceText(fragment, section.sectionId, section.rev, '| alpha | 1 |', '| alphas | 10 |'))
    expect([alpha!.toString(), one!.toString()]).toEqual(['alphas', '10'])
    const at = carets.map((caret) => Y.createAbsolutePositionFromRelativePosition(caret, fragment.doc!))
    expect(at.map((p) => [p!.type === alpha, p!.type === one, p!.index])).toEqual([
      [true, false, 3],
      [false, true, 0],
    ])
  })

  test('a row that no table has is refused as a row, naming its cells', () => {
    const { fragment, section } = read()
    const refused = replaceText(fragment, section.sectionId, section.rev, '| alpha | 2 |', '| alpha | 3 |')
    expect(refused.kind === 'error' && refused.message).toBe(
      'oldText: it reads as a table row, and no row of a table in the section has the cells "alpha", "2" ' +
        'side by side (count 0). Copy the row from a fresh read (read_document with section_id), or give the ' +
        'text of one cell.',
    )
  })

  test('a line before a hard break keeps the break; a copy of both lines is refused for spanning it', () => {
    replaceLine('Line one', (l) => l.replace('Line one', 'First line'))
    replaceLine('line two', (l) => l.replace('two', '2'))
    const { fragment, section, lines } = read()
    const both = `${lineWith(lines, 'Line one')}\n${lineWith(lines, 'line two')}`
    const refused = replaceText(fragment, section.sectionId, section.rev, both, both.replace('two', '2'))
    expect(refused.kind === 'error' && refused.message).toContain('it spans a line break')
  })

  test('an image placeholder is refused as media, naming edit_blocks with its block', () => {
    const refused = refusal('[image:', () => '[image: a chart]')
    expect(refused.reason).toBe('not_text')
    expect(refused.message).toContain('is how a read shows media (image) in block 3, not text')
    expect(refused.message).toContain('call edit_blocks with remove_blocks: [3]')
  })

  test("a table's delimiter line and a code fence are refused for what they are", () => {
    const delimiter = refusal('| - |', () => '| :- | - |')
    expect(delimiter.message).toContain('is the line under the header row of the table in block 2')
    const fence = refusal('```js', (l) => l.replace('js', 'ts'))
    expect(fence.message).toContain('is the fence line of a code block (block 1)')
    expect(fence.message).toContain('call edit_blocks with in_block: 1')
  })

  test('the label a line was copied with names its block among equal lines', () => {
    const { fragment, section } = read('## S\n\nsame text\n\nsame text')
    expectOk(replaceText(fragment, section.sectionId, section.rev, '[2] same text', '[2] other text'))
    expect(readLines(fragment, section.sectionId)).toEqual([
      '## S',
      '',
      '[1] same text',
      '',
      '[2] other text',
    ])
  })

  test('a line repeated whole in one block: the refusal says no surrounding text helps, and names edit_blocks', () => {
    const items = read('## S\n\n- fix\n- fix')
    const item = replaceText(items.fragment, items.section.sectionId, items.section.rev, '- fix', '- fixed')
    expect(item.kind === 'error' && item.message).toContain('call edit_blocks with in_block: 1')
    const rows = read('## S\n\n| a | b |\n| - | - |\n| x | 1 |\n| x | 1 |')
    const row = replaceText(rows.fragment, rows.section.sectionId, rows.section.rev, '| x | 1 |', '| x | 2 |')
    expect(row.kind === 'error' && row.message).toContain('call edit_blocks with in_block: 1')
    const code = read('## S\n\n```\n}\n})\n}\n```')
    const line = replaceText(code.fragment, code.section.sectionId, code.section.rev, '}', '};')
    expect(line.kind === 'error' && line.message).toContain('add the line before or after it')
  })

  test('text that reads like a line start, copied from the middle of a line, is found as written', () => {
    const { fragment, section } = read('## S\n\nsteps 2) and 3) and more, and so on')
    expectOk(replaceText(fragment, section.sectionId, section.rev, '3) and', '3) or'))
    expect(readLines(fragment, section.sectionId)[2]).toBe('[1] steps 2) and 3) or more, and so on')
  })

  test('a heading copied with its ##: its words change, its level is refused', () => {
    const { fragment, section } = read()
    const level = replaceText(fragment, section.sectionId, section.rev, '## S', '### S', { block: 0 })
    expect(level.kind === 'error' && level.message).toContain('changes the words of a heading, not its level')
    expectOk(replaceText(fragment, section.sectionId, section.rev, '## S', '## Shapes', { block: 0 }))
    expect(readLines(fragment, section.sectionId)[0]).toBe('## Shapes')
  })

  test('a changed marker, a dropped break, a new column: refused, nothing changes', () => {
    expect(refusal('deeper', (l) => l.replace('1.', '-')).message).toContain(
      'a list marker, task box, indentation or heading level is not text',
    )
    expect(refusal('Line one', (l) => l.slice(0, -1)).reason).toBe('newline_in_text')
    expect(refusal('| alpha |', (l) => `${l} 3 |`).message).toContain('it has 3 cells where oldText has 2')
  })
})

describe('any old and new text', () => {
  test('is answered with a result, never an exception, and leaves a document the schema accepts', () => {
    const piece = fc.constantFrom(
      ...[
        '| ',
        ' |',
        '- ',
        '  ',
        '> ',
        '[1] ',
        '*',
        '**',
        '`',
        '\\',
        '\n',
        '[',
        '](u)',
        '<br>',
        'alpha',
        '1',
      ],
      ...['code in list', 'nested', '[image: a diagram]', '```js', ' - ', '---', 'Monday', '#'],
    )
    const text = fc.array(piece, { minLength: 1, maxLength: 8 }).map((parts) => parts.join(''))
    fc.assert(
      fc.property(text, text, (oldText, newText) => {
        const { fragment, section } = read()
        const result = replaceText(fragment, section.sectionId, section.rev, oldText, newText)
        expect(['ok', 'error']).toContain(result.kind)
        expect(() => schema.nodeFromJSON(fragmentToJSON(fragment)).check()).not.toThrow()
      }),
      runs(300),
    )
  })
})
